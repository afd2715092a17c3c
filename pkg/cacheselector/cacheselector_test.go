package cacheselector

import (
	"testing"

	"k8s.io/apimachinery/pkg/labels"
)

func TestHasLabel(t *testing.T) {
	s := HasLabel("tensorstack.dev/x")
	for _, tc := range []struct {
		labels labels.Set
		want   bool
	}{
		{labels.Set{"tensorstack.dev/x": "a"}, true},
		{labels.Set{"tensorstack.dev/x": ""}, true},
		{labels.Set{"tensorstack.dev/y": "a"}, false},
		{nil, false},
	} {
		if got := s.Matches(tc.labels); got != tc.want {
			t.Errorf("HasLabel matches %v = %t, want %t", tc.labels, got, tc.want)
		}
	}
	if got := s.String(); got != "tensorstack.dev/x" {
		t.Errorf("HasLabel = %q, want tensorstack.dev/x", got)
	}
}
