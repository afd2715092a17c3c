package nodeagent

import "context"

// Source reads the devices of one vendor. Implementations: NVIDIASource
// over pkg/nvidia and AscendSource over pkg/ascend.
type Source interface {
	// Name names the source in logs and in the errors metric.
	Name() string
	// Collect reads every device once. It may return a partial snapshot
	// together with an error; the agent serves what it got. It must
	// return when ctx ends.
	Collect(ctx context.Context) (SourceSnapshot, error)
	// Close releases the device library.
	Close() error
}
