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

// run dispatches on the pair of types.
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
	klog.InfoS("Transfer", "source", src.Type, "sink", dst.Type, "sync", cfg.Sync, "concurrency", cfg.Concurrency, "partSize", cfg.PartSize)
	switch {
	case src.Type == executorenv.TypePVC && dst.Type == executorenv.TypePVC:
		return errors.New("a transfer from pvc to pvc is not supported")
	case src.Type == executorenv.TypePVC:
		dir, err := ResolvePVCPath(cfg.PVCRoot, src.PVCPath)
		if err != nil {
			return fmt.Errorf("$%s: %w", executorenv.EnvSourcePVCPath, err)
		}
		switch dst.Type {
		case executorenv.TypeS3:
			s, err := newS3Side(dst, cfg)
			if err != nil {
				return fmt.Errorf("sink: %w", err)
			}
			if err := probeEndpoint(ctx, s.endpoint.URL(), cfg.ConnectTimeout); err != nil {
				return err
			}
			return s.Upload(ctx, dir, cfg.Sync, !cfg.NoFsync, c)
		case executorenv.TypeGit:
			return GitPush(ctx, dst, dir, redactor, c)
		case executorenv.TypeHuggingFace:
			h, err := newHFSide(dst, cfg)
			if err != nil {
				return fmt.Errorf("sink: %w", err)
			}
			return h.Upload(ctx, dir, c)
		}
		return fmt.Errorf("unsupported sink type %q (want s3, git or huggingface)", dst.Type)
	case dst.Type == executorenv.TypePVC:
		dir, err := ResolvePVCPath(cfg.PVCRoot, dst.PVCPath)
		if err != nil {
			return fmt.Errorf("$%s: %w", executorenv.EnvSinkPVCPath, err)
		}
		switch src.Type {
		case executorenv.TypeS3:
			s, err := newS3Side(src, cfg)
			if err != nil {
				return fmt.Errorf("source: %w", err)
			}
			if err := probeEndpoint(ctx, s.endpoint.URL(), cfg.ConnectTimeout); err != nil {
				return err
			}
			return s.Download(ctx, dir, cfg.Sync, !cfg.NoFsync, c)
		case executorenv.TypeGit:
			return GitClone(ctx, src, dir, redactor, c)
		case executorenv.TypeHuggingFace:
			h, err := newHFSide(src, cfg)
			if err != nil {
				return fmt.Errorf("source: %w", err)
			}
			return h.Download(ctx, dir, cfg.Sync, !cfg.NoFsync, c)
		}
		return fmt.Errorf("unsupported source type %q (want s3, git or huggingface)", src.Type)
	}
	return fmt.Errorf("unsupported transfer from %q to %q: one side must be pvc", src.Type, dst.Type)
}
