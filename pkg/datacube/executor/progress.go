package executor

import (
	"encoding/json"
	"fmt"
	"os"
	"sync/atomic"
	"time"

	"github.com/accelstack/accelstack/pkg/datacube/executorenv"
)

// Counter counts what a transfer did; it is safe for concurrent use.
type Counter struct {
	bytes, files, skipped, deleted atomic.Int64
}

// Done records a transferred file of n bytes.
func (c *Counter) Done(n int64) { c.bytes.Add(n); c.files.Add(1) }

// Skip records a file left alone because it was up to date.
func (c *Counter) Skip() { c.skipped.Add(1) }

// Delete records a file removed by sync.
func (c *Counter) Delete() { c.deleted.Add(1) }

// Progress returns the counts as a executorenv.Progress with the given
// duration and error message.
func (c *Counter) Progress(d time.Duration, errMsg string) executorenv.Progress {
	return executorenv.Progress{
		Bytes:           c.bytes.Load(),
		Files:           c.files.Load(),
		Skipped:         c.skipped.Load(),
		Deleted:         c.deleted.Load(),
		DurationSeconds: d.Seconds(),
		Error:           errMsg,
	}
}

// WriteProgress writes p as JSON to path, the container's termination
// message file. The kubelet keeps at most 4096 bytes of it, so a long error
// is shortened to fit.
func WriteProgress(path string, p executorenv.Progress) error {
	const maxLen = 4096
	b, err := json.Marshal(p)
	if err != nil {
		return fmt.Errorf("encoding progress: %w", err)
	}
	for len(b) > maxLen && len(p.Error) > 0 {
		cut := len(p.Error) - (len(b) - maxLen) - 3
		if cut < 0 {
			cut = 0
		}
		p.Error = p.Error[:cut] + "..."
		if b, err = json.Marshal(p); err != nil {
			return fmt.Errorf("encoding progress: %w", err)
		}
	}
	if err := os.WriteFile(path, b, 0o644); err != nil {
		return fmt.Errorf("writing progress to %s: %w", path, err)
	}
	return nil
}
