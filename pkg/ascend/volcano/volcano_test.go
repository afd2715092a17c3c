package volcano

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/accelstack/accelstack/pkg/nodeclient/nodeclienttest"
)

func TestParseAnnotation(t *testing.T) {
	tests := []struct {
		name    string
		in      string
		want    []string
		wantErr bool
	}{
		{"two chips", "Ascend910-0,Ascend910-3", []string{"Ascend910-0", "Ascend910-3"}, false},
		{"spaces", " Ascend910-0 , Ascend910-1", []string{"Ascend910-0", "Ascend910-1"}, false},
		{"empty", "", nil, true},
		{"trailing comma", "Ascend910-0,", nil, true},
		{"no id", "Ascend910", nil, true},
		{"bad id", "Ascend910-x", nil, true},
		{"negative id", "Ascend910--1", nil, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := parseAnnotation(tc.in)
			if (err != nil) != tc.wantErr {
				t.Fatalf("err = %v, wantErr %v", err, tc.wantErr)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func TestNew(t *testing.T) {
	cs := fake.NewClientset()
	tests := []struct {
		name     string
		opts     Options
		wantWait time.Duration
		wantErr  bool
	}{
		{"defaults the wait", Options{NodeName: "n", Client: nodeclienttest.Typed{C: cs.CoreV1()}}, MaxWait, false},
		{"keeps a shorter wait", Options{NodeName: "n", Client: nodeclienttest.Typed{C: cs.CoreV1()}, Wait: time.Second}, time.Second, false},
		{"caps a longer wait", Options{NodeName: "n", Client: nodeclienttest.Typed{C: cs.CoreV1()}, Wait: time.Minute}, MaxWait, false},
		{"needs a node name", Options{Client: nodeclienttest.Typed{C: cs.CoreV1()}}, 0, true},
		{"needs a client", Options{NodeName: "n"}, 0, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p, err := New(tc.opts)
			if (err != nil) != tc.wantErr {
				t.Fatalf("New: %v, wantErr %v", err, tc.wantErr)
			}
			if err == nil && p.opts.Wait != tc.wantWait {
				t.Errorf("wait = %v, want %v", p.opts.Wait, tc.wantWait)
			}
		})
	}
}
