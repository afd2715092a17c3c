package nodeagent

import (
	"context"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"
)

func TestServe(t *testing.T) {
	a, err := New(context.Background(), Config{Sources: []Source{}})
	if err != nil {
		t.Fatal(err)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- a.Serve(ctx, l) }()

	base := "http://" + l.Addr().String()
	testCases := []struct {
		path string
		want string
	}{
		{path: "/healthz", want: "ok"},
		{path: "/metrics", want: `accelstack_build_info{component="node-agent"`},
		{path: "/metrics", want: "go_goroutines"},
	}
	for _, tc := range testCases {
		t.Run(tc.path, func(t *testing.T) {
			resp, err := http.Get(base + tc.path)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			body, _ := io.ReadAll(resp.Body)
			if resp.StatusCode != http.StatusOK || !strings.Contains(string(body), tc.want) {
				t.Errorf("GET %s = %s, body without %q:\n%.500s", tc.path, resp.Status, tc.want, body)
			}
		})
	}

	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("Serve returned %v after cancel, want nil", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Serve did not return after cancel")
	}
}
