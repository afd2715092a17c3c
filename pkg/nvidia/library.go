package nvidia

import (
	"errors"
	"fmt"

	"github.com/NVIDIA/go-nvml/pkg/nvml"
)

// Open initialises lib: the NVML library (nvml.New()) or a simulated
// machine (pkg/nvidia/simulator), whose initialisation does nothing. A
// library Open returned without error is closed with Close.
func Open(lib nvml.Interface) error {
	if ret := lib.Init(); ret != nvml.SUCCESS {
		if errors.Is(ret, nvml.ERROR_LIBRARY_NOT_FOUND) {
			return fmt.Errorf("NVML library libnvidia-ml.so.1 not found: is the NVIDIA driver installed and the library mounted into the container? (%w)", ret)
		}
		return fmt.Errorf("initialising NVML: %w", ret)
	}
	return nil
}

// Close shuts down a library that Open initialised. It is the one place
// NVML is shut down, for the device plugin and the node agent alike; a
// simulated machine stays as it is.
func Close(lib nvml.Interface) error {
	if ret := lib.Shutdown(); ret != nvml.SUCCESS {
		return fmt.Errorf("shutting NVML down: %w", ret)
	}
	return nil
}
