package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync/atomic"
	"time"
)

// helper serves at addr as role: "noop" answers every request with
// responseBody at once, "sink" counts the CloudEvents it receives and
// tells the count at GET.
func helper(role, addr string) error {
	h, err := handler(role)
	if err != nil {
		return err
	}
	srv := &http.Server{Addr: addr, Handler: h, ReadHeaderTimeout: 10 * time.Second}
	return srv.ListenAndServe()
}

// handler returns what a helper process of role serves.
func handler(role string) (http.Handler, error) {
	var h http.Handler
	switch role {
	case "noop":
		h = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			_, _ = io.Copy(io.Discard, r.Body)
			w.Header().Set("Content-Type", "application/json")
			_, _ = w.Write(responseBody)
		})
	case "sink":
		var events atomic.Int64
		h = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.Method == http.MethodGet {
				_, _ = io.WriteString(w, strconv.FormatInt(events.Load(), 10))
				return
			}
			_, _ = io.Copy(io.Discard, r.Body)
			if r.Header.Get("Ce-Id") != "" {
				events.Add(1)
			}
			w.WriteHeader(http.StatusAccepted)
		})
	default:
		return nil, fmt.Errorf("unknown role %q", role)
	}
	return h, nil
}

// sinkCount returns the events the sink at url has received.
func sinkCount(ctx context.Context, url string) (int64, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return 0, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return 0, err
	}
	return strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64)
}

// drained waits for the logger to drain, until the count of the sink at
// url stays the same for half a second, and returns it.
func drained(ctx context.Context, url string) (int64, error) {
	last := int64(-1)
	for {
		n, err := sinkCount(ctx, url)
		if err != nil || n == last {
			return n, err
		}
		last = n
		time.Sleep(500 * time.Millisecond)
	}
}
