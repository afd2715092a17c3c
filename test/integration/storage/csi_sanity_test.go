package storage

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/kubernetes-csi/csi-test/v5/pkg/sanity"
	"github.com/onsi/ginkgo/v2"
	"github.com/onsi/ginkgo/v2/types"
	"github.com/onsi/gomega"

	"github.com/accelstack/accelstack/test/harness"
)

// Specs of csi-test v5.6's sanity suite per mounter: those the driver passes,
// and those it skips for capabilities it does not offer (README, csi-s3).
// A capability lost, or a sanity upgrade, changes them and fails the test.
const (
	sanityPassedPerMounter  = 39
	sanitySkippedPerMounter = 63
)

// TestCSISanity runs the csi-test sanity suite against the real csi-s3
// plugin, a real versitygw and real FUSE mounts, once per mounter (the
// StorageClass parameter mounter selects it).
func TestCSISanity(t *testing.T) {
	harness.RequireFUSE(t)
	srv := harness.StartS3(t)
	drv := harness.StartCSIS3(t)

	var secrets string
	for _, k := range []string{"CreateVolumeSecret", "DeleteVolumeSecret", "ControllerValidateVolumeCapabilitiesSecret", "NodeStageVolumeSecret", "NodePublishVolumeSecret"} {
		secrets += fmt.Sprintf("%s:\n  accessKeyID: %q\n  secretAccessKey: %q\n  endpoint: %q\n  region: %q\n", k, srv.AccessKey, srv.SecretKey, srv.Endpoint, srv.Region)
	}
	secretsFile := filepath.Join(drv.Dir(), "secrets.yaml")
	if err := os.WriteFile(secretsFile, []byte(secrets), 0o600); err != nil {
		t.Fatal(err)
	}
	ran := 0
	for _, m := range csiMounters {
		if _, err := harness.Tool(m); err != nil {
			if os.Getenv("CI") != "" {
				t.Fatalf("mounter %s: %v", m, err)
			}
			t.Logf("not running sanity with mounter %s: %v", m, err)
			continue
		}
		cfg := sanity.NewTestConfig()
		cfg.Address = drv.Endpoint
		cfg.TargetPath = filepath.Join(drv.Dir(), "sanity-"+m+"-target")
		cfg.StagingPath = filepath.Join(drv.Dir(), "sanity-"+m+"-staging")
		cfg.SecretsFile = secretsFile
		cfg.TestVolumeParameters = map[string]string{"mounter": m}
		ginkgo.Describe("mounter "+m, func() { sanity.GinkgoTest(&cfg) })
		ran++
	}
	if ran == 0 {
		t.Skip("skipping: no mounter available")
	}
	var report types.Report
	ginkgo.ReportAfterSuite("spec counts", func(r ginkgo.Report) { report = r })
	gomega.RegisterFailHandler(ginkgo.Fail)
	ginkgo.RunSpecs(t, "csi-s3 sanity")

	passed, skipped := 0, 0
	for _, s := range report.SpecReports {
		if s.LeafNodeType != types.NodeTypeIt {
			continue
		}
		switch s.State {
		case types.SpecStatePassed:
			passed++
		case types.SpecStateSkipped:
			skipped++
		}
	}
	if passed != sanityPassedPerMounter*ran || skipped != sanitySkippedPerMounter*ran {
		t.Errorf("sanity with %d mounters: %d passed and %d skipped, want %d and %d",
			ran, passed, skipped, sanityPassedPerMounter*ran, sanitySkippedPerMounter*ran)
	}
}
