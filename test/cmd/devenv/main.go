// Command devenv runs accelstack's embedded default on one machine with no
// cluster, no accelerator and no internet: a real etcd and kube-apiserver
// with the CRDs installed, a local S3 server (versitygw), the controllers, and
// the node binaries in simulated mode. It prints how to reach everything and
// runs until interrupted; with --smoke it checks every part answers, then exits.
package main

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"syscall"
	"time"

	csipb "github.com/container-storage-interface/spec/lib/go/csi"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"k8s.io/klog/v2"

	"github.com/accelstack/accelstack/pkg/cli"
	"github.com/accelstack/accelstack/test/harness"
	"github.com/accelstack/accelstack/test/kubelet"
)

func main() {
	fs := cli.NewFlagSet("devenv", "the embedded default: control plane, CRDs, controllers, simulated node binaries, local S3")
	binDir := fs.String("bin-dir", "bin", "Directory with the built accelstack binaries (make build).")
	stateDir := fs.String("state-dir", filepath.Join(harness.CacheDir(), "devenv"), "Directory for kubeconfig, sockets, S3 data and logs.")
	profile := fs.String("simulate", "dgxa100", "Simulated machine profile for the node binaries.")
	smoke := fs.Bool("smoke", false, "Start everything, check that every part answers, then stop.")
	cli.Main(fs, func(ctx context.Context) error {
		return run(ctx, *binDir, *stateDir, *profile, *smoke)
	})
}

// part is one process of the environment and how to tell it is up.
type part struct {
	name  string
	args  []string
	ready func(ctx context.Context) error
}

func run(ctx context.Context, binDir, stateDir, profile string, smoke bool) (err error) {
	log := klog.FromContext(ctx)
	if err := os.RemoveAll(stateDir); err != nil {
		return fmt.Errorf("clearing %s: %w", stateDir, err)
	}
	logDir := filepath.Join(stateDir, "logs")
	if err := os.MkdirAll(logDir, 0o700); err != nil {
		return err
	}

	cp, err := harness.NewControlPlane()
	if err != nil {
		return err
	}
	defer func() { err = errors.Join(err, cp.Stop()) }()
	kubeconfig := filepath.Join(stateDir, "kubeconfig")
	if err := copyFile(cp.KubeconfigPath, kubeconfig); err != nil {
		return err
	}

	s3port, err := harness.FreePort()
	if err != nil {
		return err
	}
	s3, s3proc, err := harness.LaunchS3(filepath.Join(stateDir, "s3"), s3port, filepath.Join(logDir, "versitygw.log"))
	if err != nil {
		return err
	}
	defer func() { err = errors.Join(err, s3proc.Stop()) }()

	ports := map[string]int{}
	for _, name := range []string{"metrics", "probes", "node-agent"} {
		if ports[name], err = harness.FreePort(); err != nil {
			return err
		}
	}
	csiSock := filepath.Join(stateDir, "csi", "csi.sock")
	// The device plugin registers with a kubelet: a stand-in one serves the
	// kubelet's registration and ListAndWatch side of the device plugin API
	// in the plugin directory, so the smoke check sees the GPUs announced.
	pluginDir := filepath.Join(stateDir, "device-plugins")
	fakeKubelet, err := kubelet.Start(pluginDir)
	if err != nil {
		return fmt.Errorf("starting the stand-in kubelet in %s: %w", pluginDir, err)
	}
	defer fakeKubelet.Stop()
	parts := []part{
		{
			name: "controllers",
			args: []string{"--kubeconfig=" + kubeconfig, "--metrics-bind-address=127.0.0.1:" + strconv.Itoa(ports["metrics"]),
				"--health-probe-bind-address=127.0.0.1:" + strconv.Itoa(ports["probes"]),
				// Serve CRD conversion where the control plane points it, with its certificate.
				"--webhook-self-signed=false",
				"--webhook-port=" + strconv.Itoa(cp.Env.WebhookInstallOptions.LocalServingPort),
				"--webhook-cert-dir=" + cp.Env.WebhookInstallOptions.LocalServingCertDir},
			ready: httpOK(fmt.Sprintf("http://127.0.0.1:%d/readyz", ports["probes"])),
		},
		{
			name:  "node-agent",
			args:  []string{"--backend=simulated", "--simulate=" + profile, "--address=127.0.0.1:" + strconv.Itoa(ports["node-agent"])},
			ready: httpOK(fmt.Sprintf("http://127.0.0.1:%d/healthz", ports["node-agent"])),
		},
		{
			name:  "csi-s3",
			args:  []string{"--mode=all", "--node-id=devenv", "--endpoint=unix://" + csiSock},
			ready: csiProbe(csiSock),
		},
		{
			name:  "device-plugin",
			args:  []string{"--backend=simulated", "--simulate=" + profile, "--device-plugin-path=" + pluginDir + "/"},
			ready: gpusAnnounced(fakeKubelet),
		},
	}
	for _, p := range parts {
		proc, err := harness.RunProcess(p.name, filepath.Join(binDir, p.name), p.args, filepath.Join(logDir, p.name+".log"))
		if err != nil {
			return fmt.Errorf("%w (run 'make build' first)", err)
		}
		defer func() { err = errors.Join(err, proc.Stop()) }()
		ready := p.ready
		if ready == nil {
			ready = func(context.Context) error { return nil }
		}
		if err := proc.WaitReady(30*time.Second, ready); err != nil {
			return err
		}
		log.Info("Started", "part", p.name, "log", filepath.Join(logDir, p.name+".log"))
	}

	fmt.Printf(`
accelstack embedded default is up.
  kubeconfig:    export KUBECONFIG=%s
  kubectl:       %s
  S3 endpoint:   %s (access key %s, secret key %s)
  node metrics:  http://127.0.0.1:%d/metrics
  controllers:   metrics http://127.0.0.1:%d/metrics, health http://127.0.0.1:%d/readyz
  CSI socket:    %s
  logs:          %s
`, kubeconfig, filepath.Join(cp.Env.BinaryAssetsDirectory, "kubectl"), s3.Endpoint, s3.AccessKey, s3.SecretKey,
		ports["node-agent"], ports["metrics"], ports["probes"], csiSock, logDir)
	if smoke {
		fmt.Println("Smoke check passed: every part answered. Stopping.")
		return nil
	}
	fmt.Println("Press Ctrl-C to stop.")
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer stop()
	<-ctx.Done()
	return nil
}

func httpOK(url string) func(ctx context.Context) error {
	return func(ctx context.Context) error {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		if err != nil {
			return err
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return err
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			return fmt.Errorf("GET %s: %s", url, resp.Status)
		}
		return nil
	}
}

// gpusAnnounced is ready once the device plugin has registered
// nvidia.com/gpu with the kubelet and announced at least one healthy GPU.
func gpusAnnounced(k *kubelet.Kubelet) func(ctx context.Context) error {
	return func(ctx context.Context) error {
		ctx, cancel := context.WithTimeout(ctx, time.Second)
		defer cancel()
		p, err := k.WaitPlugin(ctx, "nvidia.com/gpu")
		if err != nil {
			return fmt.Errorf("nvidia.com/gpu not registered with the kubelet: %w", err)
		}
		for _, d := range p.Devices() {
			if d.Health == "Healthy" {
				return nil
			}
		}
		return errors.New("nvidia.com/gpu registered, but no healthy GPU announced")
	}
}

func csiProbe(sock string) func(ctx context.Context) error {
	return func(ctx context.Context) error {
		conn, err := grpc.NewClient("unix://"+sock, grpc.WithTransportCredentials(insecure.NewCredentials()))
		if err != nil {
			return err
		}
		defer conn.Close()
		resp, err := csipb.NewIdentityClient(conn).Probe(ctx, &csipb.ProbeRequest{})
		if err != nil {
			return err
		}
		if !resp.GetReady().GetValue() {
			return errors.New("CSI driver not ready")
		}
		return nil
	}
}

func copyFile(from, to string) error {
	b, err := os.ReadFile(from)
	if err != nil {
		return err
	}
	return os.WriteFile(to, b, 0o600)
}
