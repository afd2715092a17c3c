package ranktable

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/events"
	"k8s.io/klog/v2"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/controller-runtime/pkg/source"

	"github.com/accelstack/accelstack/pkg/cacheselector"
)

// ReasonInvalidConfiguration is the event reason for a pod whose
// annotations cannot go into the rank table.
const ReasonInvalidConfiguration = "InvalidAscendConfiguration"

// Reconciler fills the rank table of one job per request; the request's
// name is the job's name.
type Reconciler struct {
	client    client.Client // writes
	apiReader client.Reader // ConfigMaps, of which the cache holds the names only
	recorder  events.EventRecorder
	cache     client.Reader // labelled pods and ConfigMaps, set by SetupWithManager
}

// NewReconciler returns a Reconciler writing through c.
func NewReconciler(c client.Client, apiReader client.Reader, recorder events.EventRecorder) *Reconciler {
	return &Reconciler{client: c, apiReader: apiReader, recorder: recorder}
}

// +kubebuilder:rbac:groups="",resources=pods,verbs=list;watch
// +kubebuilder:rbac:groups="",resources=configmaps,verbs=get;list;watch;update

// SetupWithManager registers the reconciler. Its pods and ConfigMaps come
// from a cache of its own, restricted to objects labelled
// ring-controller.atlas, so that the manager's pod cache (DataCube pods)
// and the cluster's other ConfigMaps are not involved. Job submitters, that
// is tenants, set that label, so the cache keeps of each ConfigMap its
// name only (MetadataOnly), which is all the watch maps to a job; the
// reconcile reads the ConfigMap itself from the API server. A tenant's
// thousands of labelled ConfigMaps of a megabyte each then cost the
// controllers a few hundred bytes each. Of the pods, which the controller
// reads whoever made them (Volcano's, an AscendJob's), it keeps what the
// rank table is built from (podView).
func (r *Reconciler) SetupWithManager(mgr ctrl.Manager) error {
	c, err := cacheselector.NewCache(mgr, "rank-table", RingControllerLabel, cache.Options{
		ByObject: map[client.Object]cache.ByObject{
			&corev1.ConfigMap{}: {Transform: cacheselector.MetadataOnly(RingControllerLabel)},
			&corev1.Pod{}:       {Transform: podView},
		},
	})
	if err != nil {
		return err
	}
	r.cache = c
	return ctrl.NewControllerManagedBy(mgr).
		Named("ascend-ranktable").
		WatchesRawSource(source.Kind(c, &corev1.Pod{},
			handler.TypedEnqueueRequestsFromMapFunc(func(_ context.Context, pod *corev1.Pod) []reconcile.Request {
				if job := JobName(pod); job != "" {
					return []reconcile.Request{{NamespacedName: types.NamespacedName{Namespace: pod.Namespace, Name: job}}}
				}
				return nil
			}))).
		WatchesRawSource(source.Kind(c, &corev1.ConfigMap{},
			handler.TypedEnqueueRequestsFromMapFunc(func(_ context.Context, cm *corev1.ConfigMap) []reconcile.Request {
				if job, ok := strings.CutPrefix(cm.Name, ConfigMapPrefix); ok && job != "" {
					return []reconcile.Request{{NamespacedName: types.NamespacedName{Namespace: cm.Namespace, Name: job}}}
				}
				return nil
			}))).
		Complete(r)
}

// Reconcile writes the job's rank table once every pod has its chips. It
// never overwrites a completed table, and waits for the ConfigMap, which the
// job's submitter creates (with status initializing) and its pods mount.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	log := ctrl.LoggerFrom(ctx).WithValues("job", req.NamespacedName)

	// The cache holds the ConfigMaps' names only: read it whole.
	cm := &corev1.ConfigMap{}
	key := client.ObjectKey{Namespace: req.Namespace, Name: ConfigMapPrefix + req.Name}
	if err := r.apiReader.Get(ctx, key, cm); apierrors.IsNotFound(err) {
		// Not created yet; a labelled one is watched.
		log.V(1).Info("Waiting for the rank-table ConfigMap", "configMap", key.Name)
		return ctrl.Result{}, nil
	} else if err != nil {
		return ctrl.Result{}, fmt.Errorf("getting ConfigMap %s: %w", key, err)
	}
	status, err := ParseStatus(cm.Data[ConfigMapKey])
	if err != nil || status != StatusInitializing {
		// Completed (never overwritten) or not ours to interpret.
		log.V(1).Info("Leaving the rank table alone", "configMap", cm.Name, "status", status, "err", err)
		return ctrl.Result{}, nil
	}

	var list corev1.PodList
	if err := r.cache.List(ctx, &list, client.InNamespace(req.Namespace)); err != nil {
		return ctrl.Result{}, fmt.Errorf("listing pods: %w", err)
	}
	var pods []*corev1.Pod
	for i := range list.Items {
		p := &list.Items[i]
		if p.DeletionTimestamp == nil && JobName(p) == req.Name {
			pods = append(pods, p)
		}
	}
	rt, err := Build(pods)
	var invalid *InvalidPodError
	switch {
	case errors.Is(err, errNotReady):
		log.V(1).Info("Waiting for every pod of the job to be allocated", "pods", len(pods))
		return ctrl.Result{}, nil
	case errors.As(err, &invalid):
		// A pod update retriggers; the table stays initializing meanwhile.
		log.Error(err, "Rank table not written")
		for _, p := range pods {
			if p.Name == invalid.Pod {
				r.recorder.Eventf(p, cm, corev1.EventTypeWarning, ReasonInvalidConfiguration, "BuildRankTable", "%s", invalid.Err.Error())
			}
		}
		return ctrl.Result{}, nil
	case err != nil:
		return ctrl.Result{}, err
	}
	b, err := json.Marshal(rt)
	if err != nil {
		return ctrl.Result{}, fmt.Errorf("encoding the rank table: %w", err)
	}
	if cm.Data == nil {
		cm.Data = map[string]string{}
	}
	cm.Data[ConfigMapKey] = string(b)
	// Update carries the resourceVersion read: a table completed meanwhile
	// is a conflict, and the retry leaves it alone.
	if err := r.client.Update(ctx, cm); err != nil {
		return ctrl.Result{}, fmt.Errorf("updating ConfigMap %s: %w", klog.KObj(cm), err)
	}
	log.Info("Rank table completed", "configMap", cm.Name, "servers", len(rt.ServerList))
	r.recorder.Eventf(cm, nil, corev1.EventTypeNormal, "RankTableCompleted", "BuildRankTable", "Rank table of %d servers written", len(rt.ServerList))
	return ctrl.Result{}, nil
}
