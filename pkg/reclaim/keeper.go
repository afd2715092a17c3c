package reclaim

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/events"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/manager"
)

// Keeper is the Resource Keeper: every probe period it probes the
// Notebooks, TensorBoards and Explorers of the opted-in namespaces that are
// not suspended, sets their Idle condition and suspends those Idle for too
// long.
type Keeper struct {
	// client writes the workloads.
	client client.Client
	// reader reads namespaces, workloads and pods straight from the API
	// server: a probe acts on what is, not on a cache that may lag behind
	// the Keeper's own last write, and the manager's cache holds no pods.
	reader   client.Reader
	recorder events.EventRecorder
	opts     Options
	log      logr.Logger

	mu sync.Mutex
	// pods is what the Keeper remembers of each pod it probes.
	pods map[types.UID]*podMemory
	// configErrs is the last invalid setting reported of each namespace.
	configErrs map[string]string
}

var (
	_ manager.Runnable               = (*Keeper)(nil)
	_ manager.LeaderElectionRunnable = (*Keeper)(nil)
)

// NewKeeper returns a Keeper that writes through c and reads through
// reader, the manager's API reader.
func NewKeeper(c client.Client, reader client.Reader, recorder events.EventRecorder, opts Options) *Keeper {
	return &Keeper{
		client: c, reader: reader, recorder: recorder, opts: opts.withDefaults(),
		log:        ctrl.Log.WithName("resource-keeper"),
		pods:       map[types.UID]*podMemory{},
		configErrs: map[string]string{},
	}
}

// WithLogger sets the Keeper's logger.
func (k *Keeper) WithLogger(log logr.Logger) *Keeper {
	k.log = log
	return k
}

// NeedLeaderElection makes only the elected manager probe.
func (k *Keeper) NeedLeaderElection() bool { return true }

// Start probes every ProbePeriod until ctx ends.
func (k *Keeper) Start(ctx context.Context) error {
	ctx = ctrl.LoggerInto(ctx, k.log)
	k.log.Info("Starting the Resource Keeper", "probePeriod", k.opts.ProbePeriod.String(),
		"nodeAgentNamespace", k.opts.NodeAgentNamespace)
	for {
		k.ProbeAll(ctx)
		select {
		case <-ctx.Done():
			return nil
		case <-k.opts.Clock.After(k.opts.ProbePeriod):
		}
	}
}

// podMemory is what the Keeper remembers of a pod between probes.
type podMemory struct {
	gpu gpuWatch
	// lastRequest is the latest client request the sidecar reported, the
	// Keeper's own calls discounted.
	lastRequest time.Time
	// callStart and callEnd bound the Keeper's last Jupyter call through
	// the sidecar.
	callStart, callEnd time.Time
	// seen is the time of the cycle that last probed the pod.
	seen time.Time
	// jupyterRead is the time of the cycle that last read Jupyter's API;
	// zero when it never answered.
	jupyterRead time.Time
}

// ownCallSlack is how far from the Keeper's own Jupyter call a request the
// sidecar reports may be and still be that call: the sidecar tells the
// time by its node's clock.
const ownCallSlack = 2 * time.Second

// clientRequest returns the latest client request given the sidecar's last
// request, discounting the Keeper's own last call.
func (m *podMemory) clientRequest(last *time.Time) time.Time {
	if last == nil {
		return m.lastRequest
	}
	own := !m.callStart.IsZero() && !last.Before(m.callStart.Add(-ownCallSlack)) && !last.After(m.callEnd.Add(ownCallSlack))
	if !own && last.After(m.lastRequest) {
		m.lastRequest = *last
	}
	return m.lastRequest
}

// memory returns the memory of a pod, marked seen by the cycle at now.
func (k *Keeper) memory(uid types.UID, now time.Time) *podMemory {
	k.mu.Lock()
	defer k.mu.Unlock()
	m, ok := k.pods[uid]
	if !ok {
		m = &podMemory{}
		k.pods[uid] = m
	}
	m.seen = now
	return m
}

// forget drops the memory of the pods the cycle at now did not probe: gone,
// suspended or in namespaces no longer opted in.
func (k *Keeper) forget(now time.Time) {
	k.mu.Lock()
	defer k.mu.Unlock()
	for uid, m := range k.pods {
		if m.seen.Before(now) {
			delete(k.pods, uid)
		}
	}
}

// job is one workload to probe.
type job struct {
	w    workload
	kind kind
	cfg  Config
	pods []corev1.Pod
}

// ProbeAll probes the workloads of every opted-in namespace once, a few at
// a time, and waits for them.
func (k *Keeper) ProbeAll(ctx context.Context) {
	log := ctrl.LoggerFrom(ctx)
	cyc := newCycle(k, k.opts.Clock.Now())
	var nss corev1.NamespaceList
	if err := k.reader.List(ctx, &nss, client.MatchingLabels{EnabledLabelKey: EnabledLabelValue}); err != nil {
		log.Error(err, "Listing the opted-in namespaces")
		return
	}
	jobs := make(chan job)
	var wg sync.WaitGroup
	for range k.opts.Workers {
		wg.Go(func() {
			for j := range jobs {
				k.probe(ctx, cyc, j)
			}
		})
	}
	n := 0
	for i := range nss.Items {
		ns := &nss.Items[i]
		cfg := k.config(ns)
		var pods []corev1.Pod
		listed := false
		for _, kd := range kinds {
			ws, err := kd.list(ctx, k.reader, ns.Name)
			if err != nil {
				log.Error(err, "Listing workloads", "kind", kd.name(), "namespace", ns.Name)
				continue
			}
			for _, w := range ws {
				if w.suspended() {
					continue
				}
				if !listed {
					listed = true
					var err error
					if pods, err = k.listPods(ctx, ns.Name); err != nil {
						log.Error(err, "Listing pods", "namespace", ns.Name)
					}
				}
				n++
				jobs <- job{w: w, kind: kd, cfg: cfg, pods: pods}
			}
		}
	}
	close(jobs)
	wg.Wait()
	k.forget(cyc.now)
	log.V(2).Info("Probed", "namespaces", len(nss.Items), "workloads", n,
		"duration", k.opts.Clock.Since(cyc.now).String())
}

// listPods lists the pods of a namespace from the API server.
func (k *Keeper) listPods(ctx context.Context, ns string) ([]corev1.Pod, error) {
	var l corev1.PodList
	if err := k.reader.List(ctx, &l, client.InNamespace(ns)); err != nil {
		return nil, err
	}
	return l.Items, nil
}

// config reads a namespace's settings, reporting an invalid one by an
// event on the namespace once, until it changes.
func (k *Keeper) config(ns *corev1.Namespace) Config {
	cfg, err := ParseConfig(ns, k.opts.Defaults)
	msg := ""
	if err != nil {
		msg = strings.ReplaceAll(err.Error(), "\n", "; ")
	}
	k.mu.Lock()
	prev, seen := k.configErrs[ns.Name]
	k.configErrs[ns.Name] = msg
	k.mu.Unlock()
	if msg != "" && (!seen || msg != prev) {
		k.log.Info("Invalid Resource Keeper settings", "namespace", ns.Name, "error", msg)
		k.recorder.Eventf(ns, nil, corev1.EventTypeWarning, EventReasonInvalidConfig, "Configure",
			"Invalid Resource Keeper settings: %s", truncate(msg))
	}
	return cfg
}

// cycle is one probe of everything: its time and the node agents' metrics,
// each scraped once.
type cycle struct {
	k   *Keeper
	now time.Time

	agentsOnce sync.Once
	agents     map[string]string
	agentsErr  error

	mu      sync.Mutex
	scrapes map[string]*scrape
}

type scrape struct {
	once sync.Once
	m    *nodeMetrics
	err  error
}

func newCycle(k *Keeper, now time.Time) *cycle {
	return &cycle{k: k, now: now, scrapes: map[string]*scrape{}}
}

// nodeMetrics returns the metrics of the node agent on node, scraped once
// per cycle.
func (c *cycle) nodeMetrics(ctx context.Context, node string) (*nodeMetrics, error) {
	c.mu.Lock()
	s, ok := c.scrapes[node]
	if !ok {
		s = &scrape{}
		c.scrapes[node] = s
	}
	c.mu.Unlock()
	s.once.Do(func() {
		var base string
		if base, s.err = c.nodeAgent(ctx, node); s.err == nil {
			if s.m, s.err = scrapeNodeAgent(ctx, c.k.opts.HTTPClient, base); s.err != nil {
				s.err = fmt.Errorf("scraping the node agent on %s: %w", node, s.err)
			}
		}
	})
	return s.m, s.err
}

// nodeAgent returns the base URL of the node agent on node.
func (c *cycle) nodeAgent(ctx context.Context, node string) (string, error) {
	c.agentsOnce.Do(func() {
		sel, err := labels.Parse(NodeAgentLabelSelector)
		if err != nil {
			c.agentsErr = err
			return
		}
		var l corev1.PodList
		if err := c.k.reader.List(ctx, &l, client.InNamespace(c.k.opts.NodeAgentNamespace), client.MatchingLabelsSelector{Selector: sel}); err != nil {
			c.agentsErr = fmt.Errorf("listing the node agents: %w", err)
			return
		}
		c.agents = map[string]string{}
		for _, p := range l.Items {
			if p.Status.Phase == corev1.PodRunning && p.Status.PodIP != "" && p.DeletionTimestamp == nil {
				c.agents[p.Spec.NodeName] = baseURL(p.Status.PodIP, c.k.opts.NodeAgentPort)
			}
		}
	})
	if c.agentsErr != nil {
		return "", c.agentsErr
	}
	base, ok := c.agents[node]
	if !ok {
		return "", fmt.Errorf("no running node agent on node %q (pods %s in %s)", node, NodeAgentLabelSelector, c.k.opts.NodeAgentNamespace)
	}
	return base, nil
}

// maxNoteLen bounds an event's note (events.k8s.io allows 1 kB).
const maxNoteLen = 1000

func truncate(s string) string {
	if len(s) <= maxNoteLen {
		return s
	}
	return s[:maxNoteLen-3] + "..."
}
