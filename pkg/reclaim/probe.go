package reclaim

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/url"
	"strconv"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/klog/v2"
	ctrl "sigs.k8s.io/controller-runtime"

	tensorstackv1beta1 "github.com/accelstack/accelstack/api/tensorstack/v1beta1"
	"github.com/accelstack/accelstack/pkg/activity"
)

// probe probes one workload and acts on the evidence.
func (k *Keeper) probe(ctx context.Context, cyc *cycle, j job) {
	log := ctrl.LoggerFrom(ctx).WithValues(strings.ToLower(j.w.kind()), klog.KObj(j.w.object()))
	ctx = ctrl.LoggerInto(ctx, log)
	if why := j.w.neverIdle(); why != "" {
		k.act(ctx, cyc.now, j, decision{verdict: active}, why)
		return
	}
	pods := podsOf(j.w, j.pods)
	if len(pods) == 0 {
		log.V(3).Info("No running pod to probe")
		return
	}
	var evidence []Evidence
	for _, pod := range pods {
		evidence = append(evidence, k.probePod(ctx, cyc, j, pod)...)
	}
	d := decide(cyc.now, j.cfg.IdleAfter, evidence)
	summary := Summary(cyc.now, j.cfg.IdleAfter, evidence)
	log.V(3).Info("Probed", "verdict", d.verdict.String(), "evidence", summary, "undecided", d.why)
	k.act(ctx, cyc.now, j, d, summary)
}

// podsOf returns the running pods of a workload among a namespace's: those
// its status names, and those it owns.
func podsOf(w workload, pods []corev1.Pod) []*corev1.Pod {
	refs := w.podRefs()
	uid := w.object().GetUID()
	var out []*corev1.Pod
	for i := range pods {
		p := &pods[i]
		if p.Status.Phase != corev1.PodRunning || p.Status.PodIP == "" || p.DeletionTimestamp != nil {
			continue
		}
		mine := false
		for _, r := range refs {
			if r.name == p.Name && (r.uid == "" || r.uid == p.UID) {
				mine = true
			}
		}
		for _, o := range p.OwnerReferences {
			if o.UID == uid {
				mine = true
			}
		}
		if mine {
			out = append(out, p)
		}
	}
	return out
}

// probePod reads every source of one pod.
func (k *Keeper) probePod(ctx context.Context, cyc *cycle, j job, pod *corev1.Pod) []Evidence {
	now := cyc.now
	mem := k.memory(pod.UID, now)
	start := pod.CreationTimestamp.Time
	if pod.Status.StartTime != nil {
		start = pod.Status.StartTime.Time
	}
	evidence := []Evidence{{Source: SourceStart, Pod: pod.Name, Last: start, Since: start}}

	// The sidecar's report comes before Jupyter's API, so that a count of
	// the Keeper's own Jupyter call is that of the previous probe.
	requests := Evidence{Source: SourceRequests, Pod: pod.Name, Required: true}
	ssh := Evidence{Source: SourceSSH, Pod: pod.Name, Required: true}
	if !hasContainer(pod, activity.ContainerName) {
		requests.Err = errors.New("the pod has no activity sidecar")
		ssh.Err = requests.Err
	} else if pod.Spec.HostNetwork {
		requests.Err, ssh.Err = errHostNetwork, errHostNetwork
	} else if r, err := readReport(ctx, k.opts.HTTPClient, baseURL(pod.Status.PodIP, activity.HTTPPort)); err != nil {
		requests.Err, ssh.Err = err, err
	} else {
		requests.Since, requests.Last = r.Since, mem.clientRequest(r.LastRequest)
		ssh.Since, ssh.SSHSessions, ssh.Active = r.Since, r.SSHSessions, r.SSHSessions > 0
		if r.LastSSH != nil {
			ssh.Last = *r.LastSSH
		}
	}
	evidence = append(evidence, requests, ssh)

	if j.w.jupyter() {
		evidence = append(evidence, k.probeJupyter(ctx, now, j, pod, mem))
	}

	if holdsAccelerators(pod) {
		gpu := Evidence{Source: SourceGPU, Pod: pod.Name, Required: true}
		m, err := cyc.nodeMetrics(ctx, pod.Spec.NodeName)
		var util float64
		if err == nil {
			util, err = m.utilization(pod)
		}
		switch {
		case errors.Is(err, errNotMeasured):
			gpu.Err, gpu.Required = err, false
		case err != nil:
			gpu.Err = err
		default:
			gpu = mem.gpu.observe(now, util, j.cfg.GPUUtilizationThreshold, 3*k.opts.ProbePeriod)
			gpu.Pod = pod.Name
		}
		evidence = append(evidence, gpu)
	}
	return evidence
}

// probeJupyter reads Jupyter's API on a notebook's pod. A failure (another
// server, or one that wants a token the Keeper does not have) is evidence
// unknown, and not required: the sidecar and the GPU decide. But a Jupyter
// that answered within idle-after and fails now (a server slow under load,
// restarting) is required: its kernels may be busy, and only once it has
// been unreadable for idle-after do the other sources decide alone.
func (k *Keeper) probeJupyter(ctx context.Context, now time.Time, j job, pod *corev1.Pod, mem *podMemory) Evidence {
	e := Evidence{Source: SourceJupyter, Pod: pod.Name}
	nb, ok := j.w.object().(*tensorstackv1beta1.Notebook)
	if !ok {
		e.Err = errors.New("not a notebook")
		return e
	}
	if pod.Spec.HostNetwork {
		e.Err = errHostNetwork
		return e
	}
	path, err := basePath(k.opts.JupyterBasePath(nb, pod))
	if err != nil {
		e.Err = err
		return e
	}
	base := baseURL(pod.Status.PodIP, k.opts.JupyterPort) + path
	var access string
	if k.opts.JupyterPort == activity.HTTPPort {
		if access, err = k.accessToken(ctx, nb); err != nil {
			e.Err = err
			return e
		}
	}
	start := k.opts.Clock.Now()
	a, err := readJupyter(ctx, k.opts.HTTPClient, base, envOf(pod, nb.Spec.MainContainer(), "JUPYTER_TOKEN"), accessHeader(access))
	if k.opts.JupyterPort == activity.HTTPPort {
		mem.callStart, mem.callEnd = start, k.opts.Clock.Now()
	}
	if err != nil {
		e.Err = err
		e.Required = !mem.jupyterRead.IsZero() && now.Sub(mem.jupyterRead) < j.cfg.IdleAfter
		return e
	}
	mem.jupyterRead = now
	e.Kernels, e.BusyKernels = len(a.Kernels), a.Busy()
	e.Active = e.BusyKernels > 0
	e.Last, e.Since = a.Last(), a.Status.Started
	return e
}

// NBPrefix is the default Options.JupyterBasePath: the value of NB_PREFIX
// in the main container's environment (the base URL Kubeflow-style
// notebook images serve under), else the path of the Notebook's
// status.url, else none.
func NBPrefix(nb *tensorstackv1beta1.Notebook, pod *corev1.Pod) string {
	if p := envOf(pod, nb.Spec.MainContainer(), "NB_PREFIX"); p != "" {
		return p
	}
	if u, err := url.Parse(nb.Status.URL); err == nil {
		return u.Path
	}
	return ""
}

// envOf returns the value of an environment variable of a container, empty
// when it is not set by value.
func envOf(pod *corev1.Pod, container, name string) string {
	for _, c := range pod.Spec.Containers {
		if c.Name != container {
			continue
		}
		for _, e := range c.Env {
			if e.Name == name {
				return e.Value
			}
		}
	}
	return ""
}

func hasContainer(pod *corev1.Pod, name string) bool {
	for _, c := range pod.Spec.Containers {
		if c.Name == name {
			return true
		}
	}
	for _, c := range pod.Spec.InitContainers {
		// A native sidecar is an init container that keeps running.
		if c.Name == name && c.RestartPolicy != nil && *c.RestartPolicy == corev1.ContainerRestartPolicyAlways {
			return true
		}
	}
	return false
}

// baseURL is http://ip:port.
func baseURL(ip string, port int) string {
	return "http://" + net.JoinHostPort(ip, strconv.Itoa(port))
}

// errHostNetwork is the evidence of a pod on its node's network, whose IP
// is the node's: the Keeper sends it nothing, so that a tenant cannot make
// the controllers GET a path of its choosing from a node's port. Its
// sources are unknown, so the workload is never suspended as idle.
var errHostNetwork = errors.New("the pod shares its node's network: not probed")

// basePath makes p a path with a leading and no trailing slash ("" for the
// root). p comes from the tenant's pod (NB_PREFIX): it must be a plain
// path, segments of letters, digits and -._~ only, so that no "..", query,
// fragment, scheme, host or escape can take the Keeper's request anywhere
// but the notebook's own server.
func basePath(p string) (string, error) {
	t := strings.Trim(p, "/")
	if t == "" {
		return "", nil
	}
	for _, seg := range strings.Split(t, "/") {
		if seg == "" || seg == "." || seg == ".." || strings.IndexFunc(seg, notPathChar) >= 0 {
			return "", fmt.Errorf("the notebook's base path %q is not a plain URL path: not probed", p)
		}
	}
	return "/" + t, nil
}

// notPathChar reports whether r is outside the characters basePath takes.
func notPathChar(r rune) bool {
	switch {
	case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9':
		return false
	}
	return !strings.ContainsRune("-._~", r)
}
