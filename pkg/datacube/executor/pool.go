package executor

import (
	"context"
	"sync"
)

// forEach calls fn for every item with at most n calls at once. The first
// error cancels the context given to the other calls and is returned.
func forEach[T any](ctx context.Context, n int, items []T, fn func(ctx context.Context, item T) error) error {
	if n < 1 {
		n = 1
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var (
		wg       sync.WaitGroup
		once     sync.Once
		firstErr error
		next     = make(chan T)
	)
	for range min(n, len(items)) {
		wg.Go(func() {
			for item := range next {
				if err := fn(ctx, item); err != nil {
					once.Do(func() { firstErr = err; cancel() })
				}
			}
		})
	}
feed:
	for _, item := range items {
		select {
		case next <- item:
		case <-ctx.Done():
			break feed
		}
	}
	close(next)
	wg.Wait()
	if firstErr != nil {
		return firstErr
	}
	return ctx.Err()
}
