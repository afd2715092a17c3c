package v1beta1

// The pod contract of the T9k Scheduler: a pod opts in with its scheduler
// name and joins a queue through its PodGroup or directly through a label.
const (
	// SchedulerName is the schedulerName of pods placed by the T9k Scheduler.
	SchedulerName = "t9k-scheduler"
	// QueueLabel names the queue of a pod that is in no PodGroup.
	QueueLabel = "scheduler.tensorstack.dev/queue"
	// GroupNameLabel names the PodGroup of a pod; the pod uses its group's queue.
	GroupNameLabel = "scheduler.tensorstack.dev/group-name"
	// RoleLabel names the PodGroup role of a pod, matched against roles[].name.
	RoleLabel = "scheduler.tensorstack.dev/role"
	// QueueGrantAnnotation, on a workload or a pod, names the queue its
	// creator holds the use of (UseVerb on that queue, granted to the user
	// or one of their groups). It stands in for the queue's
	// namespaceSelector; the admission policy queue-grant lets only a
	// holder of the grant write it, and the controllers carry it from a
	// workload to its pods.
	QueueGrantAnnotation = "scheduler.tensorstack.dev/queue-grant"
	// UseVerb is the RBAC verb on queues that grants their use.
	UseVerb = "use"
	// DefaultQueue is the queue of a PodGroup that names none.
	DefaultQueue = "default"
	// ShapesNamespace and ShapesConfigMap locate the resource shape profiles
	// that Queues refer to by spec.resourceShapeProfile.
	ShapesNamespace = "t9k-system"
	// ShapesConfigMap is the name of the ConfigMap holding the shape profiles.
	ShapesConfigMap = "resource-shapes"
)

// Condition types and reasons of PodGroups, as the T9k Scheduler writes them.
const (
	// PodGroupScheduled is True once resources were allocated to the group.
	PodGroupScheduled = "GroupScheduled"
	// PodGroupSufficientMember is True while the group has the pods its
	// minMember and roles ask for.
	PodGroupSufficientMember = "SufficientGroupMember"
	// ReasonPodGroupScheduled is the reason of GroupScheduled=True.
	ReasonPodGroupScheduled = "PodGroupScheduled"
	// ReasonSufficientMemberPods is the reason of SufficientGroupMember=True.
	ReasonSufficientMemberPods = "SufficientMemberPods"
	// ReasonInsufficientMemberPods is the reason of SufficientGroupMember=False.
	ReasonInsufficientMemberPods = "InsufficientMemberPods"
	// ReasonPodGroupPending is the reason of GroupScheduled=False.
	ReasonPodGroupPending = "PodGroupPending"
)
