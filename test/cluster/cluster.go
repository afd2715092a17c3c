package cluster

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/klog/v2"

	"github.com/accelstack/accelstack/pkg/csis3"
	"github.com/accelstack/accelstack/test/harness"
)

// Options configures a Cluster. Zero values take the defaults.
type Options struct {
	// StateDir holds PKI, configs, etcd and containerd data, logs and PID
	// records; default <cache>/cluster.
	StateDir string
	// ImageDir caches the image tarballs across runs; default
	// <cache>/cluster-images.
	ImageDir string
	// Assets is the directory of etcd and the Kubernetes binaries; default
	// the cache of hack/envtest-assets.sh.
	Assets string
}

// Cluster is the local single-node cluster.
type Cluster struct {
	opts Options
	l    layout
	root string // repository root
}

// New resolves the options; it starts nothing.
func New(opts Options) (*Cluster, error) {
	if opts.StateDir == "" {
		opts.StateDir = filepath.Join(harness.CacheDir(), "cluster")
	}
	if opts.ImageDir == "" {
		opts.ImageDir = filepath.Join(harness.CacheDir(), "cluster-images")
	}
	root, err := harness.RepoRoot()
	if err != nil {
		return nil, err
	}
	return &Cluster{opts: opts, l: layout{dir: opts.StateDir}, root: root}, nil
}

// Kubeconfig is the administrator's kubeconfig.
func (c *Cluster) Kubeconfig() string { return c.l.adminKubeconfig() }

// StateDir is where the cluster keeps its state and logs.
func (c *Cluster) StateDir() string { return c.l.dir }

// LogDir holds one log per cluster process; it survives Down.
func (c *Cluster) LogDir() string { return c.l.logs() }

// components are the cluster's processes in start order.
var components = []string{"etcd", "kube-apiserver", "kube-controller-manager", "kube-scheduler", "clusterdns", "containerd", "kubelet", enforcer}

// Running reports whether every cluster process recorded by an earlier Up
// still runs and the API server answers.
func (c *Cluster) Running(ctx context.Context) bool {
	for _, name := range components {
		d, err := loadDaemon(c.l, name)
		if err != nil || !d.alive() {
			return false
		}
	}
	cs, err := c.Client()
	if err != nil {
		return false
	}
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	return cs.Discovery().RESTClient().Get().AbsPath("/readyz").Do(ctx).Error() == nil
}

// Client returns a clientset for the administrator.
func (c *Cluster) Client() (*kubernetes.Clientset, error) {
	cfg, err := c.RESTConfig()
	if err != nil {
		return nil, err
	}
	return kubernetes.NewForConfig(cfg)
}

// RESTConfig is the administrator's client configuration.
func (c *Cluster) RESTConfig() (*rest.Config, error) {
	return clientcmd.BuildConfigFromFlags("", c.Kubeconfig())
}

// Up brings the cluster up and waits until the node is Ready and pods can
// be created. A running cluster is left as it is; the leftovers of one
// that crashed are cleaned up first.
func (c *Cluster) Up(ctx context.Context) error {
	log := klog.FromContext(ctx)
	start := time.Now()
	if err := preflight(ctx); err != nil {
		return err
	}
	if c.Running(ctx) {
		log.Info("The cluster is already running", "kubeconfig", c.Kubeconfig())
		return nil
	}
	if rec, _ := loadHostRecord(c.l); rec != nil {
		log.Info("Cleaning up after an earlier cluster that is not running")
		if err := c.Down(ctx); err != nil {
			return fmt.Errorf("cleaning up the earlier cluster: %w", err)
		}
	}
	if _, err := os.Stat(filepath.Join(KubeletRoot, "pods")); err == nil {
		return fmt.Errorf("%s/pods exists but no cluster of ours is recorded: another kubelet uses %s; stop it or remove the directory", KubeletRoot, KubeletRoot)
	}
	assets := c.opts.Assets
	if assets == "" {
		var err error
		if assets, err = harness.KubeAssets(); err != nil {
			return err
		}
	}
	if err := os.MkdirAll(c.l.dir, 0o700); err != nil {
		return err
	}
	if err := saveHostRecord(c.l, recordHost()); err != nil {
		return err
	}
	step := stepper(log, start)
	if err := writePKI(c.l); err != nil {
		return fmt.Errorf("issuing certificates: %w", err)
	}
	if err := writeConfigs(c.l); err != nil {
		return fmt.Errorf("writing configs: %w", err)
	}
	if err := createBridge(); err != nil {
		return fmt.Errorf("creating bridge %s: %w", Bridge, err)
	}
	step("PKI, configs and bridge ready")
	images, err := c.buildImages(ctx)
	if err != nil {
		return fmt.Errorf("building images: %w", err)
	}
	step("images built", "count", len(images))

	if err := c.startControlPlane(ctx, assets, step); err != nil {
		return err
	}
	if err := c.startDNS(ctx); err != nil {
		return err
	}
	step("DNS ready")
	if _, err := startDaemon(c.l, "containerd", "containerd", "--config", c.l.path("containerd.toml")); err != nil {
		return err
	}
	if err := waitFor(ctx, 30*time.Second, "containerd", func(ctx context.Context) error {
		return exec.CommandContext(ctx, "ctr", "--address", c.l.containerdSocket(), "version").Run()
	}); err != nil {
		return c.withLog(err, "containerd")
	}
	step("containerd ready")
	if err := c.importImages(ctx, images); err != nil {
		return err
	}
	step("images imported")
	if err := c.startKubelet(ctx, assets); err != nil {
		return err
	}
	step("node Ready")
	if err := c.startEnforcer(ctx); err != nil {
		return err
	}
	step("NetworkPolicies enforced", "by", enforcer)
	cs, err := c.Client()
	if err != nil {
		return err
	}
	// Pods are refused until the controller-manager has made the
	// namespace's default ServiceAccount.
	if err := waitFor(ctx, 60*time.Second, "the default ServiceAccount", func(ctx context.Context) error {
		_, err := cs.CoreV1().ServiceAccounts("default").Get(ctx, "default", metav1.GetOptions{})
		return err
	}); err != nil {
		return c.withLog(err, "kube-controller-manager")
	}
	step("cluster up", "kubeconfig", c.Kubeconfig())
	return nil
}

// startControlPlane starts etcd, kube-apiserver, kube-controller-manager
// and kube-scheduler and waits for the API server.
func (c *Cluster) startControlPlane(ctx context.Context, assets string, step func(string, ...any)) error {
	pki := c.l.pki
	if _, err := startDaemon(c.l, "etcd", filepath.Join(assets, "etcd"),
		"--name=default", "--data-dir="+c.l.path("etcd"),
		"--listen-client-urls=http://127.0.0.1:2379", "--advertise-client-urls=http://127.0.0.1:2379",
		"--listen-peer-urls=http://127.0.0.1:2380", "--initial-advertise-peer-urls=http://127.0.0.1:2380",
		"--initial-cluster=default=http://127.0.0.1:2380", "--listen-metrics-urls=http://127.0.0.1:2381",
		"--unsafe-no-fsync"); err != nil {
		return err
	}
	if _, err := startDaemon(c.l, "kube-apiserver", filepath.Join(assets, "kube-apiserver"),
		"--etcd-servers=http://127.0.0.1:2379",
		"--bind-address="+APIServerIP, "--secure-port=443", "--advertise-address="+APIServerIP,
		// The kubernetes Service's ClusterIP is this server's own address:
		// keep the reconciler from writing another one.
		"--endpoint-reconciler-type=none",
		"--tls-cert-file="+pki("apiserver.crt"), "--tls-private-key-file="+pki("apiserver.key"),
		"--client-ca-file="+pki("ca.crt"),
		"--service-account-issuer=https://kubernetes.default.svc", "--service-account-key-file="+pki("sa.pub"),
		"--service-account-signing-key-file="+pki("sa.key"), "--service-cluster-ip-range="+ServiceCIDR,
		"--authorization-mode=Node,RBAC", "--enable-admission-plugins=NodeRestriction", "--allow-privileged=true",
		"--kubelet-client-certificate="+pki("admin.crt"), "--kubelet-client-key="+pki("admin.key"),
		"--kubelet-preferred-address-types=InternalIP",
		// No kube-proxy: reach webhook Services at their endpoints.
		"--enable-aggregator-routing=true",
		// The users of the browser login: ID tokens of Hydra, behind the
		// gateway, for the gateway's client; the user's name as the
		// login's, their groups from the token. Hydra starts later: the
		// API server fetches its keys when it answers.
		"--oidc-issuer-url="+OIDCIssuer, "--oidc-client-id="+OIDCClientID, "--oidc-ca-file="+pki("ca.crt"),
		"--oidc-username-claim=sub", "--oidc-username-prefix=-", "--oidc-groups-claim=groups"); err != nil {
		return err
	}
	cs, err := c.Client()
	if err != nil {
		return err
	}
	if err := waitFor(ctx, 60*time.Second, "kube-apiserver", func(ctx context.Context) error {
		return cs.Discovery().RESTClient().Get().AbsPath("/readyz").Do(ctx).Error()
	}); err != nil {
		return c.withLog(err, "kube-apiserver", "etcd")
	}
	step("kube-apiserver ready")
	kubeconfig := c.Kubeconfig()
	common := []string{"--kubeconfig=" + kubeconfig, "--authentication-kubeconfig=" + kubeconfig,
		"--authorization-kubeconfig=" + kubeconfig, "--bind-address=127.0.0.1", "--leader-elect=false"}
	if _, err := startDaemon(c.l, "kube-controller-manager", filepath.Join(assets, "kube-controller-manager"),
		append(common, "--use-service-account-credentials=true",
			"--service-account-private-key-file="+pki("sa.key"), "--root-ca-file="+pki("ca.crt"),
			"--cluster-signing-cert-file="+pki("ca.crt"), "--cluster-signing-key-file="+pki("ca.key"))...); err != nil {
		return err
	}
	_, err = startDaemon(c.l, "kube-scheduler", filepath.Join(assets, "kube-scheduler"), common...)
	return err
}

// startDNS starts the cluster's DNS server on the gateway address and
// waits until it answers for the kubernetes Service.
func (c *Cluster) startDNS(ctx context.Context) error {
	listen := net.JoinHostPort(GatewayIP, "53")
	if _, err := startDaemon(c.l, "clusterdns", filepath.Join(c.opts.ImageDir, "bin", "clusterdns"),
		"--kubeconfig="+c.Kubeconfig(), "--listen="+listen, "--domain="+ClusterDomain); err != nil {
		return err
	}
	r := &net.Resolver{PreferGo: true, Dial: func(ctx context.Context, network, _ string) (net.Conn, error) {
		var d net.Dialer
		return d.DialContext(ctx, network, listen)
	}}
	return c.withLog(waitFor(ctx, 30*time.Second, "the cluster DNS", func(ctx context.Context) error {
		addrs, err := r.LookupHost(ctx, "kubernetes.default.svc."+ClusterDomain)
		if err == nil && (len(addrs) != 1 || addrs[0] != APIServerIP) {
			err = fmt.Errorf("kubernetes.default.svc resolves to %v, want %s", addrs, APIServerIP)
		}
		return err
	}), "clusterdns")
}

// startKubelet starts the kubelet and waits for the node to be Ready.
func (c *Cluster) startKubelet(ctx context.Context, assets string) error {
	if _, err := startDaemon(c.l, "kubelet", filepath.Join(assets, "kubelet"),
		"--config="+c.l.path("kubelet.yaml"), "--kubeconfig="+c.l.kubeletKubeconfig(),
		"--root-dir="+KubeletRoot, "--cert-dir="+c.l.pki("kubelet-serving"),
		"--hostname-override="+NodeName, "--node-ip="+GatewayIP, "-v=2"); err != nil {
		return err
	}
	cs, err := c.Client()
	if err != nil {
		return err
	}
	err = waitFor(ctx, 90*time.Second, "node "+NodeName+" Ready", func(ctx context.Context) error {
		n, err := cs.CoreV1().Nodes().Get(ctx, NodeName, metav1.GetOptions{})
		if err != nil {
			return err
		}
		for _, cond := range n.Status.Conditions {
			if cond.Type == corev1.NodeReady && cond.Status == corev1.ConditionTrue {
				return nil
			}
		}
		return errors.New("node not Ready")
	})
	return c.withLog(err, "kubelet")
}

// RestartKubelet stops the kubelet and starts it again with the same
// configuration, as a node upgrade or a crash would; it returns when the
// node is Ready again.
func (c *Cluster) RestartKubelet(ctx context.Context) error {
	d, err := loadDaemon(c.l, "kubelet")
	if err != nil {
		return err
	}
	if d == nil {
		return errors.New("no kubelet recorded: is the cluster up?")
	}
	if err := d.stop(c.l, 20*time.Second); err != nil {
		return err
	}
	return c.startKubelet(ctx, filepath.Dir(d.Args[0]))
}

// Down stops the cluster and undoes what Up did to the host. It is safe to
// call on a cluster that crashed, or on none.
func (c *Cluster) Down(ctx context.Context) error {
	log := klog.FromContext(ctx)
	step := stepper(log, time.Now())
	rec, err := loadHostRecord(c.l)
	if err != nil {
		return err
	}
	if rec == nil {
		log.Info("No cluster recorded; nothing to do", "stateDir", c.l.dir)
		return nil
	}
	var errs []error
	stop := func(name string, grace time.Duration) {
		d, err := loadDaemon(c.l, name)
		if err == nil && d != nil {
			err = d.stop(c.l, grace)
		}
		if err != nil {
			errs = append(errs, err)
		}
	}
	// The enforcer first: stopped, it changes no rule while the rest goes.
	stop(enforcer, 10*time.Second)
	stop("kubelet", 10*time.Second)
	// Containers: kill everything in the pods' cgroups (and the FUSE
	// daemons csi-s3 moved out of its pod), then their shims.
	for _, h := range cgroupHierarchies() {
		for _, name := range ownCgroups {
			if dir := filepath.Join(h, name); !rec.Cgroups[dir] {
				if err := removeCgroup(dir); err != nil {
					errs = append(errs, err)
				}
			}
		}
	}
	sock := c.l.containerdSocket()
	for pid := range processes(func(args []string) bool {
		return filepath.Base(args[0]) == "containerd-shim-runc-v2" && strings.Contains(strings.Join(args, " "), sock)
	}) {
		_ = syscall.Kill(pid, syscall.SIGKILL)
	}
	stop("containerd", 10*time.Second)
	step("kubelet, pods and containerd stopped")
	for k, v := range rec.Sysctls {
		if cur, err := readSysctl(k); err == nil && cur != v {
			if err := writeSysctl(k, v); err != nil {
				errs = append(errs, fmt.Errorf("restoring %s=%s: %w", k, v, err))
			}
		}
	}
	for _, name := range []string{"clusterdns", "kube-scheduler", "kube-controller-manager", "kube-apiserver", "etcd"} {
		stop(name, 15*time.Second)
	}
	step("control plane stopped")
	if err := unmountUnder(KubeletRoot, c.l.dir, "/run/containerd", "/run/netns"); err != nil {
		errs = append(errs, err)
	}
	if err := deleteBridge(); err != nil {
		errs = append(errs, err)
	}
	if err := removeChains(rec.Chains); err != nil {
		errs = append(errs, err)
	}
	if err := removeIPSets(rec.IPSets); err != nil {
		errs = append(errs, err)
	}
	if err := removeNewPaths(rec.Paths); err != nil {
		errs = append(errs, err)
	}
	// Keep the logs for a look after the fact; remove the rest.
	entries, _ := os.ReadDir(c.l.dir)
	for _, e := range entries {
		if e.Name() != "logs" && e.Name() != "host.json" {
			if err := removeUnmounted(filepath.Join(c.l.dir, e.Name())); err != nil {
				errs = append(errs, err)
			}
		}
	}
	if err := errors.Join(errs...); err != nil {
		return err
	}
	step("host restored")
	return os.Remove(c.l.hostRecord())
}

// ownCgroups are the top-level cgroups a cluster creates: the kubelet's
// pod hierarchy, and the one csi-s3 moves its FUSE daemons into.
var ownCgroups = []string{"kubepods", csis3.DaemonCgroupName}

// withLog adds the tail of the named processes' logs to err.
func (c *Cluster) withLog(err error, names ...string) error {
	if err == nil {
		return nil
	}
	var b strings.Builder
	for _, n := range names {
		data, _ := os.ReadFile(filepath.Join(c.l.logs(), n+".log"))
		if len(data) > 4<<10 {
			data = data[len(data)-4<<10:]
		}
		fmt.Fprintf(&b, "\n--- last lines of %s.log:\n%s", n, data)
	}
	return fmt.Errorf("%w%s", err, b.String())
}

// waitFor polls check every 250ms until it succeeds or timeout passes.
func waitFor(ctx context.Context, timeout time.Duration, what string, check func(context.Context) error) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	for {
		cctx, ccancel := context.WithTimeout(ctx, 5*time.Second)
		err := check(cctx)
		ccancel()
		if err == nil {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("waiting for %s: %w (last: %w)", what, ctx.Err(), err)
		case <-time.After(250 * time.Millisecond):
		}
	}
}

// stepper logs each step with the time since start.
func stepper(log logr.Logger, start time.Time) func(msg string, kv ...any) {
	return func(msg string, kv ...any) {
		log.Info(msg, append([]any{"elapsed", time.Since(start).Round(100 * time.Millisecond).String()}, kv...)...)
	}
}

func sleepBriefly() { time.Sleep(100 * time.Millisecond) }
