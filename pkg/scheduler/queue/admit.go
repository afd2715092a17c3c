package queue

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"

	schedv1beta1 "github.com/accelstack/accelstack/api/scheduler/v1beta1"
)

// Reason says why a queue refuses a workload.
type Reason string

// The reasons a queue refuses a workload.
const (
	ReasonMissing          Reason = "QueueNotFound"
	ReasonClosed           Reason = "QueueClosed"
	ReasonNamespace        Reason = "NamespaceNotAllowed"
	ReasonShape            Reason = "ExceedsResourceShape"
	ReasonQuota            Reason = "ExceedsQuota"
	ReasonInvalidSelector  Reason = "InvalidSelector"
	ReasonShapeUnavailable Reason = "ResourceShapeUnavailable"
)

// Refusal is a queue's refusal of a workload, with a message that names the
// queue and, where one is at fault, the resource.
type Refusal struct {
	Queue    string
	Reason   Reason
	Resource corev1.ResourceName
	Message  string
}

func (r *Refusal) Error() string { return r.Message }

// Workload is what asks a queue for admission: one pod, or a whole job or
// notebook given as its pods' requests.
type Workload struct {
	// Namespace is the workload's namespace, with its labels.
	Namespace *corev1.Namespace
	// Pods are the requests of each of the workload's pods.
	Pods []corev1.ResourceList
	// Granted says the workload's creator held the use of the queue
	// (Granted), which admits it whatever the namespaceSelector says.
	Granted bool
}

// Total is the sum of the workload's requests.
func (w Workload) Total() corev1.ResourceList {
	var sum corev1.ResourceList
	for _, p := range w.Pods {
		sum = Add(sum, p)
	}
	return sum
}

// State is what the admission decision knows of a queue beyond its spec.
type State struct {
	// Allocated is the sum of the requests of the pods the queue holds now.
	Allocated corev1.ResourceList
	// Shapes is the queue's resource shape profile, resolved; nil when the
	// queue names none.
	Shapes []Shape
	// ShapesErr is why the profile the queue names could not be resolved.
	ShapesErr error
}

// Admit decides whether q may take w now; nil means yes. q nil means the
// queue name does not exist. The checks run in the order a user fixes
// them: the queue, the namespace (or the creator's grant), the size of
// each pod, then the quota.
func Admit(name string, q *schedv1beta1.Queue, w Workload, st State) *Refusal {
	if q == nil {
		return &Refusal{Queue: name, Reason: ReasonMissing, Message: fmt.Sprintf("queue %q does not exist", name)}
	}
	if q.Spec.Closed {
		return &Refusal{Queue: name, Reason: ReasonClosed, Message: fmt.Sprintf("queue %q is closed", name)}
	}
	if r := admitNamespace(name, q.Spec.NamespaceSelector, w.Namespace); r != nil && !w.Granted {
		return r
	}
	if r := admitShapes(name, q, w, st); r != nil {
		return r
	}
	if q.Spec.Quota != nil {
		if res, over := Over(q.Spec.Quota.Requests, st.Allocated, w.Total()); over {
			return quotaRefusal(name, q, res, st.Allocated, w.Total())
		}
	}
	return nil
}

func quotaRefusal(name string, q *schedv1beta1.Queue, res corev1.ResourceName, allocated, asked corev1.ResourceList) *Refusal {
	max, used, add := q.Spec.Quota.Requests[res], allocated[res], asked[res]
	return &Refusal{Queue: name, Reason: ReasonQuota, Resource: res, Message: fmt.Sprintf(
		"queue %q: %s requests %s would exceed its quota %s (%s allocated)",
		name, res, add.String(), max.String(), used.String())}
}

// AdmitsNamespace reports whether q's namespaceSelector admits ns.
func AdmitsNamespace(q *schedv1beta1.Queue, ns *corev1.Namespace) bool {
	return admitNamespace("", q.Spec.NamespaceSelector, ns) == nil
}

func admitNamespace(name string, sel *metav1.LabelSelector, ns *corev1.Namespace) *Refusal {
	nsName := ""
	var nsLabels labels.Set
	if ns != nil {
		nsName, nsLabels = ns.Name, ns.Labels
	}
	if sel == nil {
		return &Refusal{Queue: name, Reason: ReasonNamespace, Message: fmt.Sprintf(
			"queue %q: namespace %q may not use it (the queue has no namespaceSelector)", name, nsName)}
	}
	s, err := metav1.LabelSelectorAsSelector(sel)
	if err != nil {
		return &Refusal{Queue: name, Reason: ReasonInvalidSelector, Message: fmt.Sprintf(
			"queue %q: spec.namespaceSelector: %v", name, err)}
	}
	if !s.Matches(nsLabels) {
		return &Refusal{Queue: name, Reason: ReasonNamespace, Message: fmt.Sprintf(
			"queue %q: namespace %q does not match its namespaceSelector", name, nsName)}
	}
	return nil
}

func admitShapes(name string, q *schedv1beta1.Queue, w Workload, st State) *Refusal {
	if q.Spec.ResourceShapeProfile == nil || *q.Spec.ResourceShapeProfile == "" {
		return nil
	}
	profile := *q.Spec.ResourceShapeProfile
	if st.ShapesErr != nil {
		return &Refusal{Queue: name, Reason: ReasonShapeUnavailable, Message: fmt.Sprintf(
			"queue %q: resource shape profile %q: %v", name, profile, st.ShapesErr)}
	}
	for _, pod := range w.Pods {
		if ok, res := Fits(st.Shapes, pod); !ok {
			return &Refusal{Queue: name, Reason: ReasonShape, Resource: res, Message: fmt.Sprintf(
				"queue %q: a pod's %s request is larger than every shape of profile %q", name, res, profile)}
		}
	}
	return nil
}
