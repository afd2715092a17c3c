package elasticjob

import (
	"fmt"
	"maps"
	"strconv"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	elasticv1alpha1 "github.com/accelstack/accelstack/api/elastic/v1alpha1"
	schedulerv1beta1 "github.com/accelstack/accelstack/api/scheduler/v1beta1"
	"github.com/accelstack/accelstack/pkg/scheduler/queue"
)

// Environment variables of task pods.
const (
	envMasterAddr     = "DLROVER_MASTER_ADDR"
	envWorkerType     = "WORKER_TYPE"
	envWorkerID       = "WORKER_ID"
	envWorkerRank     = "WORKER_RANK"
	envGRPCForkSupprt = "GRPC_ENABLE_FORK_SUPPORT"
	envPodName        = "POD_NAME"
	envWorkerNum      = "WORKER_NUM"
	envRdzvEndpoint   = "RDZV_ENDPOINT"
	envPodIP          = "POD_IP"
	envBrainAddr      = "DLROVER_BRAIN_SERVICE_ADDR"
)

// lastAppliedKey is kubectl's copy of the applied job, which is not copied
// onto pods with the job's other annotations.
const lastAppliedKey = "kubectl.kubernetes.io/last-applied-configuration"

// taskPod is the identity and resources of a task pod to create.
type taskPod struct {
	typ elasticv1alpha1.ReplicaType
	// id is the replica-index label; rank the rank-index label and task index.
	id, rank int
	// restarts is the restart-count label.
	restarts int
	// name is the pod's name; empty means TaskName(job, typ, id).
	name string
	// service is the host:port of the pod's Service; empty means
	// TaskServiceAddr(job, typ, rank).
	service string
	// resource, when set, is the requests and limits of containers[0].
	resource corev1.ResourceList
}

func (tp taskPod) podName(job string) string {
	if tp.name != "" {
		return tp.name
	}
	return TaskName(job, tp.typ, tp.id)
}

func (tp taskPod) serviceAddr(job string) string {
	if tp.service != "" {
		return tp.service
	}
	return TaskServiceAddr(job, tp.typ, tp.rank)
}

// clusterView is what a new task pod's environment says about the others.
type clusterView struct {
	// psHosts are the parameter servers of TF_CONFIG.
	psHosts []string
	// workers is the number of workers a parameter server sees.
	workers int
	// workerNum is WORKER_NUM.
	workerNum int32
	// rdzvIP is the IP of the rendezvous pod (rank 0's); empty means the
	// pod's own.
	rdzvIP string
}

// replicaSpecFor returns the spec pods of type t are made from; a chief
// without a spec of its own is made like a worker.
func replicaSpecFor(job *elasticv1alpha1.ElasticJob, t elasticv1alpha1.ReplicaType) *elasticv1alpha1.ReplicaSpec {
	if s := job.Spec.ReplicaSpecs[t]; s != nil {
		return s
	}
	if t == elasticv1alpha1.ReplicaTypeChief {
		return job.Spec.ReplicaSpecs[elasticv1alpha1.ReplicaTypeWorker]
	}
	return nil
}

// newPod returns a pod of the job from template, with the job's labels and
// annotations, the given labels, and the job as controller.
func newPod(job *elasticv1alpha1.ElasticJob, template *corev1.PodTemplateSpec, name string, labels map[string]string) *corev1.Pod {
	pod := &corev1.Pod{
		ObjectMeta: *template.ObjectMeta.DeepCopy(),
		Spec:       *template.Spec.DeepCopy(),
	}
	pod.Name, pod.GenerateName, pod.Namespace = name, "", job.Namespace
	pod.Labels = merge(job.Labels, pod.Labels, labels)
	pod.Annotations = merge(job.Annotations, pod.Annotations)
	delete(pod.Annotations, lastAppliedKey)
	pod.Annotations = queue.CarryGrant(pod.Annotations, job, pod.Labels[schedulerv1beta1.QueueLabel])
	pod.OwnerReferences = []metav1.OwnerReference{*metav1.NewControllerRef(job, elasticv1alpha1.GroupVersion.WithKind("ElasticJob"))}
	return pod
}

// merge returns the union of ms, later maps winning.
func merge(ms ...map[string]string) map[string]string {
	out := map[string]string{}
	for _, m := range ms {
		maps.Copy(out, m)
	}
	return out
}

// jobLabels are the labels of every pod and Service of the job.
func jobLabels(job string, t elasticv1alpha1.ReplicaType) map[string]string {
	return map[string]string{
		elasticv1alpha1.AppLabelKey:         elasticv1alpha1.AppLabelValue,
		elasticv1alpha1.JobNameLabelKey:     job,
		elasticv1alpha1.ReplicaTypeLabelKey: string(t),
	}
}

// newTaskPod returns the pod tp of the job, with DLRover's labels and
// environment.
func newTaskPod(job *elasticv1alpha1.ElasticJob, tp taskPod, view clusterView) (*corev1.Pod, error) {
	spec := replicaSpecFor(job, tp.typ)
	if spec == nil || len(spec.Template.Spec.Containers) == 0 {
		return nil, fmt.Errorf("no replica spec with a container for %s", tp.typ)
	}
	labels := jobLabels(job.Name, tp.typ)
	labels[elasticv1alpha1.ReplicaIndexLabelKey] = strconv.Itoa(tp.id)
	labels[elasticv1alpha1.RankIndexLabelKey] = strconv.Itoa(tp.rank)
	labels[elasticv1alpha1.RestartCountLabelKey] = strconv.Itoa(tp.restarts)
	pod := newPod(job, &spec.Template, tp.podName(job.Name), labels)
	c := &pod.Spec.Containers[0]
	if len(tp.resource) > 0 {
		c.Resources.Requests = tp.resource.DeepCopy()
		c.Resources.Limits = tp.resource.DeepCopy()
	}
	if err := setTaskEnv(job, c, tp, view); err != nil {
		return nil, err
	}
	return pod, nil
}

// setTaskEnv appends DLRover's task environment to c, in DLRover's order.
func setTaskEnv(job *elasticv1alpha1.ElasticJob, c *corev1.Container, tp taskPod, view clusterView) error {
	if hasMaster(job) {
		c.Env = append(c.Env, corev1.EnvVar{Name: envMasterAddr, Value: MasterAddr(job.Name)})
	}
	c.Env = append(c.Env,
		corev1.EnvVar{Name: envWorkerType, Value: string(tp.typ)},
		corev1.EnvVar{Name: envWorkerID, Value: strconv.Itoa(tp.id)},
		corev1.EnvVar{Name: envWorkerRank, Value: strconv.Itoa(tp.rank)},
		corev1.EnvVar{Name: envGRPCForkSupprt, Value: "False"},
		fieldEnv(envPodName, "metadata.name"),
	)
	if tp.typ == elasticv1alpha1.ReplicaTypeWorker {
		c.Env = append(c.Env, corev1.EnvVar{Name: envWorkerNum, Value: strconv.Itoa(int(view.workerNum))})
	}
	switch job.Spec.DistributionStrategy {
	case elasticv1alpha1.ParameterServerStrategy:
		cluster := sparseClusterFor(job.Name, tp.typ, tp.rank, view.psHosts, view.workers)
		if tp.typ == elasticv1alpha1.ReplicaTypeChief || tp.typ == elasticv1alpha1.ReplicaTypeEvaluator {
			cluster = withSelf(cluster, tp.typ, tp.rank, tp.serviceAddr(job.Name))
		}
		return InsertTfConfigToEnv(c, cluster, tp.typ, tp.rank)
	case elasticv1alpha1.AllreduceStrategy:
		if view.rdzvIP != "" {
			c.Env = append(c.Env, corev1.EnvVar{Name: envRdzvEndpoint, Value: view.rdzvIP})
		} else {
			c.Env = append(c.Env, fieldEnv(envRdzvEndpoint, "status.podIP"))
		}
	}
	return nil
}

// withSelf puts a chief's or evaluator's own Service address, which a
// ScalePlan may give, at its rank.
func withSelf(s SparseClusterSpec, t elasticv1alpha1.ReplicaType, rank int, addr string) SparseClusterSpec {
	switch t {
	case elasticv1alpha1.ReplicaTypeChief:
		s.Chief[rank] = addr
	case elasticv1alpha1.ReplicaTypeEvaluator:
		s.Evaluator[rank] = addr
	}
	return s
}

// fieldEnv is an environment variable set from a field of the pod.
func fieldEnv(name, path string) corev1.EnvVar {
	return corev1.EnvVar{Name: name, ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{APIVersion: "v1", FieldPath: path}}}
}

// newService returns the ClusterIP Service name of the job with one port,
// selecting the job's pods of type t and the extra selector.
func newService(job *elasticv1alpha1.ElasticJob, t elasticv1alpha1.ReplicaType, name string, port int, extra map[string]string) *corev1.Service {
	return &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{
			Name:            name,
			Namespace:       job.Namespace,
			Labels:          jobLabels(job.Name, t),
			OwnerReferences: []metav1.OwnerReference{*metav1.NewControllerRef(job, elasticv1alpha1.GroupVersion.WithKind("ElasticJob"))},
		},
		Spec: corev1.ServiceSpec{
			Type:     corev1.ServiceTypeClusterIP,
			Selector: merge(jobLabels(job.Name, t), extra),
			Ports:    []corev1.ServicePort{{Port: int32(port), TargetPort: intstr.FromInt32(int32(port))}}, //nolint:gosec // ports are constants
		},
	}
}

// newTaskService returns the Service of tp's rank.
func newTaskService(job *elasticv1alpha1.ElasticJob, tp taskPod) *corev1.Service {
	return newService(job, tp.typ, serviceHost(tp.serviceAddr(job.Name)), ServicePort(tp.typ),
		map[string]string{elasticv1alpha1.RankIndexLabelKey: strconv.Itoa(tp.rank)})
}

// hasMaster reports whether the job runs DLRover's master.
func hasMaster(job *elasticv1alpha1.ElasticJob) bool {
	s := job.Spec.ReplicaSpecs[elasticv1alpha1.ReplicaTypeMaster]
	return s != nil && len(s.Template.Spec.Containers) > 0
}
