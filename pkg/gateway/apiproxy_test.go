package gateway

import (
	"slices"
	"testing"
)

func TestImpersonableGroups(t *testing.T) {
	got := impersonableGroups([]string{"ml-team", "system:masters", "system:authenticated", "system:nodes", "system:serviceaccounts", "system:serviceaccounts:demo", "system:bootstrappers"})
	want := []string{"ml-team", "system:authenticated", "system:serviceaccounts", "system:serviceaccounts:demo"}
	if !slices.Equal(got, want) {
		t.Errorf("impersonableGroups = %v, want %v", got, want)
	}
}
