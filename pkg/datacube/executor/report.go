package executor

import (
	"context"
	"errors"

	"k8s.io/klog/v2"
)

// RunAndReport runs the transfer, logs its outcome and writes its Progress
// to terminationPath (skipped when empty). It returns the transfer's error,
// free of secrets.
//
// It installs a klog filter that redacts every option value from the
// process's logs, for the rest of the process.
func RunAndReport(ctx context.Context, cfg Config, terminationPath string) error {
	klog.SetLogFilter(logFilter{NewRedactor(cfg.secrets()...)})
	p, err := Run(ctx, cfg)
	klog.FromContext(ctx).Info("Transfer ended", "bytes", p.Bytes, "files", p.Files, "skipped", p.Skipped, "deleted", p.Deleted, "seconds", p.DurationSeconds, "failed", err != nil)
	if terminationPath != "" {
		if werr := WriteProgress(terminationPath, p); werr != nil {
			return errors.Join(err, werr)
		}
	}
	return err
}
