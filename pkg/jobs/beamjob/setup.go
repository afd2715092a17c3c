package beamjob

import (
	"context"
	"fmt"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/controller-runtime/pkg/source"

	batchv1beta1 "github.com/accelstack/accelstack/api/batch/v1beta1"
	"github.com/accelstack/accelstack/pkg/cacheselector"
	"github.com/accelstack/accelstack/pkg/jobs"
)

// Setup runs the BeamJob controller on mgr. It watches, through a cache of
// its own holding only the objects labelled as a BeamJob's, the submitter
// Jobs and their pods, the Flink cluster's pods and, when the FlinkCluster
// API is installed as the controller starts, the FlinkClusters. Without
// that API it looks at unfinished jobs again every pollInterval instead.
func Setup(mgr ctrl.Manager) error {
	log := mgr.GetLogger().WithName(Component)
	r := &Reconciler{
		client:   mgr.GetClient(),
		reader:   mgr.GetAPIReader(),
		recorder: mgr.GetEventRecorder(Component + "-controller"),
		jobIDs:   newPodJobIDs(mgr.GetAPIReader()),
	}
	c, err := cache.New(mgr.GetConfig(), cache.Options{
		Scheme:               mgr.GetScheme(),
		Mapper:               mgr.GetRESTMapper(),
		DefaultLabelSelector: labels.SelectorFromSet(labels.Set{jobs.ComponentLabel: Component}),
		DefaultTransform:     cacheselector.StubUncontrolled(jobs.ComponentLabel),
	})
	if err != nil {
		return fmt.Errorf("creating the BeamJob cache: %w", err)
	}
	if err := mgr.Add(c); err != nil {
		return fmt.Errorf("adding the BeamJob cache: %w", err)
	}
	watched := []client.Object{&corev1.Pod{}, &batchv1.Job{}}
	_, err = mgr.GetRESTMapper().RESTMapping(FlinkClusterGVK.GroupKind(), FlinkClusterGVK.Version)
	switch {
	case err == nil:
		r.watchesClusters = true
		watched = append(watched, newClusterObject())
	case meta.IsNoMatchError(err):
		log.Info("FlinkCluster API not installed: BeamJobs are polled", "interval", pollInterval)
	default:
		return fmt.Errorf("looking up the FlinkCluster API: %w", err)
	}
	b := ctrl.NewControllerManagedBy(mgr).Named(Component).For(&batchv1beta1.BeamJob{})
	for _, o := range watched {
		b = b.WatchesRawSource(source.Kind(c, o, handler.EnqueueRequestsFromMapFunc(jobRequest)))
	}
	return b.Complete(r)
}

// jobRequest maps an object labelled as a BeamJob's to that job.
func jobRequest(_ context.Context, o client.Object) []reconcile.Request {
	name := o.GetLabels()[jobs.JobNameLabel]
	if name == "" {
		return nil
	}
	return []reconcile.Request{{NamespacedName: types.NamespacedName{Namespace: o.GetNamespace(), Name: name}}}
}
