package t9kcli

// kind is a resource kind the CLI has a command for.
type kind struct {
	// name is the command, the kind's name in lower case.
	name string
	// alias is the command's short name, the platform's.
	alias string
	// display is the kind as the API names it.
	display string
	// resource is the kind's plural resource and group, as kubectl takes it.
	resource string
	// clusterScoped kinds have no project.
	clusterScoped bool
	// verbs are the subcommands the kind has beside get.
	verbs []string
	// replicaTypes are the replica types logs and wait --print-log take
	// with --type, the first the default; nil when the kind's pods have none.
	replicaTypes []string
	// openTypes means the kind's replica types are the user's own
	// (GenericJob): any type its spec names is taken.
	openTypes bool
	// terminal are the phases wait stops at, the first the successful one.
	terminal []string
}

// The subcommands a kind may have beside get.
const (
	verbDescribe = "describe"
	verbDelete   = "delete"
	verbLogs     = "logs"
	verbWait     = "wait"
	verbOpen     = "open"
	verbClose    = "close"
)

var (
	jobVerbs      = []string{verbDescribe, verbDelete, verbLogs, verbWait}
	jobPhases     = []string{"Succeeded", "Failed"}
	workflowPhase = []string{"Succeeded", "Failed", "Error"}
)

// kinds are the kinds of the command tree, in its order.
var kinds = []kind{
	{name: "beamjob", alias: "bj", display: "BeamJob", resource: "beamjobs.batch.tensorstack.dev",
		verbs: jobVerbs, replicaTypes: []string{"jobmanager", "taskmanager", "batchjob"}, terminal: jobPhases},
	{name: "colossalaijob", alias: "caij", display: "ColossalAIJob", resource: "colossalaijobs.batch.tensorstack.dev",
		verbs: jobVerbs, replicaTypes: []string{"worker", "launcher"}, terminal: jobPhases},
	{name: "deepspeedjob", alias: "dj", display: "DeepSpeedJob", resource: "deepspeedjobs.batch.tensorstack.dev",
		verbs: jobVerbs, replicaTypes: []string{"worker", "launcher"}, terminal: jobPhases},
	{name: "genericjob", alias: "gj", display: "GenericJob", resource: "genericjobs.batch.tensorstack.dev",
		verbs: jobVerbs, openTypes: true, terminal: jobPhases},
	{name: "mlservice", alias: "mls", display: "MLService", resource: "mlservices.tensorstack.dev",
		verbs: []string{verbDescribe, verbDelete}},
	{name: "mpijob", alias: "mj", display: "MPIJob", resource: "mpijobs.batch.tensorstack.dev",
		verbs: jobVerbs, replicaTypes: []string{"worker", "launcher"}, terminal: jobPhases},
	{name: "notebook", alias: "nb", display: "Notebook", resource: "notebooks.tensorstack.dev",
		verbs: []string{verbDescribe, verbDelete}},
	{name: "podgroup", alias: "pg", display: "PodGroup", resource: "podgroups.scheduler.tensorstack.dev"},
	{name: "project", alias: "proj", display: "Project", resource: "projects.tensorstack.dev",
		verbs: []string{verbDescribe}},
	{name: "pytorchtrainingjob", alias: "pj", display: "PyTorchTrainingJob", resource: "pytorchtrainingjobs.batch.tensorstack.dev",
		verbs: jobVerbs, replicaTypes: []string{"worker", "master"}, terminal: jobPhases},
	{name: "queue", alias: "q", display: "Queue", resource: "queues.scheduler.tensorstack.dev", clusterScoped: true,
		verbs: []string{verbOpen, verbClose}},
	{name: "simplemlservice", alias: "smls", display: "SimpleMLService", resource: "simplemlservices.tensorstack.dev",
		verbs: []string{verbDescribe, verbDelete}},
	{name: "tensorflowtrainingjob", alias: "tj", display: "TensorFlowTrainingJob", resource: "tensorflowtrainingjobs.batch.tensorstack.dev",
		verbs: jobVerbs, replicaTypes: []string{"worker", "chief", "ps", "evaluator"}, terminal: jobPhases},
	{name: "workflowrun", alias: "wr", display: "WorkflowRun", resource: "workflowruns.batch.tensorstack.dev",
		verbs: jobVerbs, terminal: workflowPhase},
	{name: "workflowtemplate", alias: "wt", display: "WorkflowTemplate", resource: "workflowtemplates.batch.tensorstack.dev",
		verbs: []string{verbDescribe, verbDelete}},
	{name: "xgboosttrainingjob", alias: "xj", display: "XGBoostTrainingJob", resource: "xgboosttrainingjobs.batch.tensorstack.dev",
		verbs: jobVerbs, replicaTypes: []string{"worker", "master"}, terminal: jobPhases},
}

// kindNamed is the kind of the command tree named name.
func kindNamed(name string) kind {
	for _, k := range kinds {
		if k.name == name {
			return k
		}
	}
	panic("t9kcli: no kind " + name)
}
