package workloadmetrics

import (
	"errors"
	"fmt"

	"github.com/prometheus/client_golang/prometheus"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/metrics"

	"github.com/accelstack/accelstack/pkg/jobkind"
)

// +kubebuilder:rbac:groups=batch.tensorstack.dev,resources=genericjobs;pytorchtrainingjobs;tensorflowtrainingjobs;xgboosttrainingjobs;mpijobs;deepspeedjobs;colossalaijobs;beamjobs,verbs=get;list;watch
// +kubebuilder:rbac:groups=mindxdl.gitee.com,resources=ascendjobs,verbs=get;list;watch
// +kubebuilder:rbac:groups=elastic.iml.github.io,resources=elasticjobs,verbs=get;list;watch
// +kubebuilder:rbac:groups=tensorstack.dev,resources=notebooks;tensorboards;simplemlservices;mlservices,verbs=get;list;watch

// Setup registers a Collector over mgr's cache, of the job kinds of
// jobKinds (pkg/jobs/kinds.Registered) and the other workloads, on
// controller-runtime's metrics registry, which the manager serves on its
// metrics endpoint. A collector registered by an earlier manager of the
// process is replaced.
func Setup(mgr ctrl.Manager, jobKinds []jobkind.Info) error {
	c := NewCollector(mgr.GetClient(), mgr.GetScheme(), Kinds(jobKinds), mgr.GetLogger().WithName("workloadmetrics"))
	err := metrics.Registry.Register(c)
	var are prometheus.AlreadyRegisteredError
	if errors.As(err, &are) {
		metrics.Registry.Unregister(are.ExistingCollector)
		err = metrics.Registry.Register(c)
	}
	if err != nil {
		return fmt.Errorf("registering the workload metrics: %w", err)
	}
	return nil
}
