// Command datacube-executor moves the data of one DataCube: between the PVC
// directory and S3, Git or Hugging Face, as the DataCube controller
// describes in its environment (package executorenv). It writes a
// executorenv.Progress to the termination message file when it ends.
package main

import (
	"context"
	"fmt"
	"os"

	"github.com/accelstack/accelstack/pkg/cli"
	"github.com/accelstack/accelstack/pkg/datacube/executor"
	"github.com/accelstack/accelstack/pkg/datacube/executorenv"
)

func main() {
	fs := cli.NewFlagSet("datacube-executor", "DataCube transfer executor: PVC <-> S3, Git, Hugging Face")
	cfg := executor.Config{
		PVCRoot:        executorenv.PVCMountPath,
		Concurrency:    executor.DefaultConcurrency,
		PartSize:       executor.DefaultPartSize,
		ConnectTimeout: executor.DefaultConnectTimeout,
	}
	terminationPath := executorenv.TerminationMessagePath
	var cacheDir string
	fs.IntVar(&cfg.Concurrency, "concurrency", cfg.Concurrency, "Files, or parts of one large file, transferred at once.")
	fs.Var(executor.SizeFlag{P: &cfg.PartSize}, "part-size", "Multipart part size, e.g. 64Mi; larger files go in parallel parts (min 5Mi).")
	fs.StringVar(&terminationPath, "termination-message-path", terminationPath, "Where the progress JSON is written at the end; empty for nowhere.")
	fs.StringVar(&cfg.PVCRoot, "pvc-root", cfg.PVCRoot, "Directory every PVC path must lie in.")
	fs.DurationVar(&cfg.ConnectTimeout, "connect-timeout", cfg.ConnectTimeout, "Limit on connecting to an S3 or Hugging Face endpoint.")
	fs.BoolVar(&cfg.NoFsync, "no-fsync", false, "Do not fsync downloaded files before renaming them into place.")
	fs.BoolVar(&cfg.SyncAllowEmpty, "sync-allow-empty", false, "Let sync run from a source with no file, deleting everything on the destination (without it, such a sync fails).")
	fs.StringVar(&cacheDir, "cache-dir", "", "Accepted for compatibility with huggingface-cli arguments; unused (files go straight to the PVC).")
	fs.Env("concurrency", "DATACUBE_CONCURRENCY")
	fs.Env("part-size", "DATACUBE_PART_SIZE")
	fs.Env("sync-allow-empty", "DATACUBE_SYNC_ALLOW_EMPTY")
	fs.Check(func() error {
		if cfg.Concurrency < 1 || cfg.Concurrency > 256 {
			return fmt.Errorf("invalid value %d for flag --concurrency: must be 1 to 256", cfg.Concurrency)
		}
		if cfg.PartSize < executor.MinPartSize || cfg.PartSize > 5<<30 {
			return fmt.Errorf("invalid value %d for flag --part-size: must be 5Mi to 5Gi", cfg.PartSize)
		}
		return cfg.FromEnv(os.Getenv)
	})

	cli.Main(fs, func(ctx context.Context) error {
		return executor.RunAndReport(ctx, cfg, terminationPath)
	})
}
