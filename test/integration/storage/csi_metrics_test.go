package storage

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"

	csipb "github.com/container-storage-interface/spec/lib/go/csi"

	"github.com/accelstack/accelstack/test/harness"
)

// TestCSIMetrics scrapes the plugin's /metrics after a good and a bad call
// and finds csi_plugin_operations_seconds with csi-lib-utils' labels.
func TestCSIMetrics(t *testing.T) {
	port, err := harness.FreePort()
	if err != nil {
		t.Fatal(err)
	}
	drv := harness.StartCSIS3(t, fmt.Sprintf("--metrics-address=127.0.0.1:%d", port))
	conn := drv.Conn(t)
	ctx := context.Background()
	if _, err := csipb.NewIdentityClient(conn).GetPluginInfo(ctx, &csipb.GetPluginInfoRequest{}); err != nil {
		t.Fatal(err)
	}
	if _, err := csipb.NewNodeClient(conn).NodeUnstageVolume(ctx, &csipb.NodeUnstageVolumeRequest{}); err == nil {
		t.Fatal("NodeUnstageVolume without a volume ID succeeded")
	}

	resp, err := http.Get(fmt.Sprintf("http://127.0.0.1:%d/metrics", port))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		`csi_plugin_operations_seconds_count{driver_name="s3.csi.tensorstack.dev",grpc_status_code="OK",method_name="/csi.v1.Identity/GetPluginInfo"} 1`,
		`csi_plugin_operations_seconds_count{driver_name="s3.csi.tensorstack.dev",grpc_status_code="InvalidArgument",method_name="/csi.v1.Node/NodeUnstageVolume"} 1`,
	} {
		if !strings.Contains(string(body), want) {
			t.Errorf("/metrics lacks %s", want)
		}
	}
}
