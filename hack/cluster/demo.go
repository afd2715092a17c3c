package main

import (
	"context"
	"errors"

	"github.com/accelstack/accelstack/test/cluster"
)

func demo(ctx context.Context, c *cluster.Cluster) error {
	if err := c.Up(ctx); err != nil {
		return err
	}
	if err := c.Install(ctx); err != nil {
		return err
	}
	return errors.New("demo examples: not written yet")
}
