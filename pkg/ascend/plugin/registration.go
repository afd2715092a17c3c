package plugin

import (
	"context"
	"time"

	"github.com/accelstack/accelstack/pkg/accelerator"
	"github.com/accelstack/accelstack/pkg/ascend"
	"github.com/accelstack/accelstack/pkg/ascend/nodestate"
	"github.com/accelstack/accelstack/pkg/ascend/volcano"
	"github.com/accelstack/accelstack/pkg/cli"
	"github.com/accelstack/accelstack/pkg/deviceplugin"
	"github.com/accelstack/accelstack/pkg/nodeclient"
)

// Registration is the Ascend vendor of cmd/device-plugin: --vendor=ascend,
// the dcmi and simulated backends, the flags of Options, Volcano mode
// (pkg/ascend/volcano) and the node state (pkg/ascend/nodestate).
var Registration = deviceplugin.Registration{
	Name:     accelerator.VendorAscend,
	Backends: []string{accelerator.BackendDCMI, accelerator.BackendSimulated},
	AddFlags: addFlags,
}

// Flag names.
const (
	flagDCMILibrary       = "dcmi-library"
	flagUseAscendDocker   = "use-ascend-docker"
	flagVolcano           = "volcano"
	flagNodeName          = "node-name"
	flagKubeconfig        = "kubeconfig"
	flagHealthCheckPeriod = "health-check-period"
)

// env names each flag's environment variable.
var env = map[string]string{
	flagDCMILibrary:       "DCMI_LIBRARY",
	flagUseAscendDocker:   "USE_ASCEND_DOCKER",
	flagVolcano:           "VOLCANO",
	flagNodeName:          "NODE_NAME",
	flagKubeconfig:        "KUBECONFIG",
	flagHealthCheckPeriod: "HEALTH_CHECK_PERIOD",
}

// Volcano mode's picker is a ChipPicker.
var _ ChipPicker = (*volcano.Picker)(nil)

// addFlags defines the Ascend flags and returns the constructor reading them.
func addFlags(fs *cli.FlagSet) deviceplugin.NewVendorFunc {
	o := DefaultOptions()
	var vo volcano.Options
	var volcanoMode bool
	var kubeconfig string
	fs.StringVar(&o.DCMILibrary, flagDCMILibrary, ascend.DefaultDCMILibrary, "Ascend: path or name of the DCMI library.")
	fs.BoolVar(&o.UseAscendDocker, flagUseAscendDocker, o.UseAscendDocker, "Ascend: pass ASCEND_VISIBLE_DEVICES for Ascend Docker Runtime instead of /dev/davinci* device specs.")
	fs.BoolVar(&volcanoMode, flagVolcano, false, "Ascend: allocate the chips Volcano annotated on the pod (needs --node-name).")
	fs.StringVar(&vo.NodeName, flagNodeName, "", "Ascend: this node's name, for Volcano mode and the node state (mindx-dl-deviceinfo-<node>, servertype).")
	fs.StringVar(&kubeconfig, flagKubeconfig, "", "Ascend: kubeconfig for Volcano mode; empty means in-cluster.")
	fs.DurationVar(&o.HealthPeriod, flagHealthCheckPeriod, o.HealthPeriod, "Ascend: how often chip health is polled.")
	for name, v := range env {
		fs.Env(name, v)
	}
	return func(ctx context.Context, cfg *deviceplugin.Config) (deviceplugin.Vendor, error) {
		o := o
		o.Backend, o.Simulate, o.ControlSocket = cfg.Backend, cfg.Simulate, cfg.ControlSocket
		if volcanoMode {
			p, err := newVolcanoPicker(vo, kubeconfig)
			if err != nil {
				return nil, err
			}
			o.Picker = p
		}
		v, err := NewVendor(o)
		if err != nil {
			return nil, err
		}
		if vo.NodeName != "" {
			r, err := newNodeState(vo.NodeName, kubeconfig, o.HealthPeriod, v)
			if err != nil {
				return nil, err
			}
			go r.Run(ctx)
		}
		return v, nil
	}
}

// newNodeState publishes the node's chips and servertype label.
func newNodeState(node, kubeconfig string, period time.Duration, v *Vendor) (*nodestate.Reporter, error) {
	c, err := nodeclient.Load(kubeconfig, UserAgent)
	if err != nil {
		return nil, err
	}
	return nodestate.New(nodestate.Options{Client: c, NodeName: node, Period: period}, v)
}

// newVolcanoPicker connects to the API server for Volcano mode.
func newVolcanoPicker(o volcano.Options, kubeconfig string) (*volcano.Picker, error) {
	c, err := nodeclient.Load(kubeconfig, UserAgent)
	if err != nil {
		return nil, err
	}
	o.Client = c
	return volcano.New(o)
}
