package harness

import (
	"fmt"
	"path/filepath"
	"sync"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
)

// projectCRDs reads deploy/crds once per process: the 30 CRDs are 11 MB of
// YAML, whose decoding took about 10 s of CPU at every control plane start
// of a race-enabled test binary.
var projectCRDs = sync.OnceValues(func() ([]*apiextensionsv1.CustomResourceDefinition, error) {
	root, err := RepoRoot()
	if err != nil {
		return nil, err
	}
	opts := envtest.CRDInstallOptions{Paths: []string{filepath.Join(root, "deploy", "crds")}, ErrorIfPathMissing: true}
	if err := envtest.ReadCRDFiles(&opts); err != nil {
		return nil, fmt.Errorf("reading deploy/crds: %w", err)
	}
	if len(opts.CRDs) == 0 {
		return nil, fmt.Errorf("no CRD in %s", opts.Paths[0])
	}
	return opts.CRDs, nil
})

// crdCopies returns a copy of the CRDs of deploy/crds, ready to install.
func crdCopies() ([]*apiextensionsv1.CustomResourceDefinition, error) {
	crds, err := projectCRDs()
	if err != nil {
		return nil, err
	}
	out := make([]*apiextensionsv1.CustomResourceDefinition, len(crds))
	for i, crd := range crds {
		out[i] = crd.DeepCopy()
	}
	return out, nil
}

// waitForCRDs waits until the API server of cfg serves every CRD of
// deploy/crds.
func waitForCRDs(cfg *rest.Config) error {
	crds, err := crdCopies()
	if err != nil {
		return err
	}
	opts := envtest.CRDInstallOptions{MaxTime: crdInstallTimeout, PollInterval: 100 * time.Millisecond}
	if err := envtest.WaitForCRDs(cfg, crds, opts); err != nil {
		return fmt.Errorf("waiting for the CRDs of deploy/crds to be served: %w", err)
	}
	return nil
}
