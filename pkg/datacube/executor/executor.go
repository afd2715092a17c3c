package executor

import (
	"context"
	"errors"
	"fmt"
	"time"

	"k8s.io/klog/v2"

	"github.com/accelstack/accelstack/pkg/datacube/executorenv"
)

// Default tuning of a Config.
const (
	DefaultConcurrency    = 8
	DefaultPartSize       = 64 << 20
	MinPartSize           = 5 << 20
	DefaultConnectTimeout = 30 * time.Second
)

// Run performs the transfer cfg describes and returns what it did. The
// returned error carries no secret. Supported pairs: pvc to s3, git or
// huggingface, and each of those to pvc.
func Run(ctx context.Context, cfg Config) (executorenv.Progress, error) {
	start := time.Now()
	var c Counter
	redactor := NewRedactor(cfg.secrets()...)
	err := run(ctx, &cfg, &c, redactor)
	if err != nil {
		err = redactor.Error(err)
		return c.Progress(time.Since(start), err.Error()), err
	}
	return c.Progress(time.Since(start), ""), nil
}

// run fills in the defaults of cfg and moves the data between its PVC side
// and its remote side, in the direction the pair of types says.
func run(ctx context.Context, cfg *Config, c *Counter, redactor *Redactor) error {
	if cfg.Concurrency < 1 {
		cfg.Concurrency = DefaultConcurrency
	}
	if cfg.PartSize < MinPartSize {
		cfg.PartSize = DefaultPartSize
	}
	if cfg.ConnectTimeout <= 0 {
		cfg.ConnectTimeout = DefaultConnectTimeout
	}
	if cfg.PVCRoot == "" {
		cfg.PVCRoot = executorenv.PVCMountPath
	}
	src, dst := cfg.Source, cfg.Sink
	klog.FromContext(ctx).Info("Transfer", "source", src.Type, "sink", dst.Type, "sync", cfg.Sync, "concurrency", cfg.Concurrency, "partSize", cfg.PartSize)
	// One side is the PVC directory, the other the remote one; an upload
	// goes from the PVC to the remote, a download the other way.
	var pvc, remote Side
	var pvcEnv, role string
	upload := src.Type == executorenv.TypePVC
	switch {
	case upload && dst.Type == executorenv.TypePVC:
		return errors.New("a transfer from pvc to pvc is not supported")
	case upload:
		pvc, pvcEnv, remote, role = src, executorenv.EnvSourcePVCPath, dst, "sink"
	case dst.Type == executorenv.TypePVC:
		pvc, pvcEnv, remote, role = dst, executorenv.EnvSinkPVCPath, src, "source"
	default:
		return fmt.Errorf("unsupported transfer from %q to %q: one side must be pvc", src.Type, dst.Type)
	}
	dir, err := ResolvePVCPath(cfg.PVCRoot, pvc.PVCPath)
	if err != nil {
		return fmt.Errorf("$%s: %w", pvcEnv, err)
	}
	switch remote.Type {
	case executorenv.TypeS3:
		s, err := newS3Side(remote, cfg)
		if err != nil {
			return fmt.Errorf("%s: %w", role, err)
		}
		if err := probeEndpoint(ctx, s.endpoint.URL(), cfg.ConnectTimeout); err != nil {
			return err
		}
		if upload {
			return s.Upload(ctx, dir, cfg.Sync, !cfg.NoFsync, c)
		}
		return s.Download(ctx, dir, cfg.Sync, !cfg.NoFsync, c)
	case executorenv.TypeGit:
		if upload {
			return GitPush(ctx, remote, dir, redactor, c)
		}
		return GitClone(ctx, remote, dir, redactor, c)
	case executorenv.TypeHuggingFace:
		h, err := newHFSide(remote, cfg)
		if err != nil {
			return fmt.Errorf("%s: %w", role, err)
		}
		if upload {
			return h.Upload(ctx, dir, c)
		}
		return h.Download(ctx, dir, cfg.Sync, !cfg.NoFsync, c)
	}
	return fmt.Errorf("unsupported %s type %q (want s3, git or huggingface)", role, remote.Type)
}
