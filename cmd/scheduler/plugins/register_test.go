package plugins

import (
	"testing"

	utilfeature "k8s.io/apiserver/pkg/util/feature"
	"k8s.io/component-base/featuregate"
)

func TestSetDefaultFeatureGates(t *testing.T) {
	if err := SetDefaultFeatureGates(); err != nil {
		t.Fatalf("SetDefaultFeatureGates: %v", err)
	}
	for name, want := range DefaultFeatureGates {
		if got := utilfeature.DefaultFeatureGate.Enabled(featuregate.Feature(name)); got != want {
			t.Errorf("feature gate %s = %v after SetDefaultFeatureGates, want %v", name, got, want)
		}
	}
	// A second call finds every gate at its default and changes nothing.
	if err := SetDefaultFeatureGates(); err != nil {
		t.Fatalf("SetDefaultFeatureGates again: %v", err)
	}
}
