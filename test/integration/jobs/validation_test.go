package jobs

import (
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	batchv1beta1 "github.com/accelstack/accelstack/api/batch/v1beta1"
	tensorstackv1beta1 "github.com/accelstack/accelstack/api/tensorstack/v1beta1"
	"github.com/accelstack/accelstack/test/testutil"
)

func tfJob(ns, name string, specs ...batchv1beta1.TensorFlowReplicaSpec) *batchv1beta1.TensorFlowTrainingJob {
	return &batchv1beta1.TensorFlowTrainingJob{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec:       batchv1beta1.TensorFlowTrainingJobSpec{ReplicaSpecs: specs},
	}
}

func tfReplicas(typ batchv1beta1.TensorFlowReplicaType, n int32) batchv1beta1.TensorFlowReplicaSpec {
	return batchv1beta1.TensorFlowReplicaSpec{Type: typ, Replicas: ptr.To(n), Template: template(container("tensorflow", "python", "train.py"))}
}

func elasticJob(ns, name string) *batchv1beta1.PyTorchTrainingJob {
	j := pytorchJob(ns, name, pytorchReplicas("worker", 2, batchv1beta1.ReplicaRestartOnFailure))
	j.Spec.TorchrunConfig = &batchv1beta1.TorchrunConfig{Enabled: true}
	j.Spec.Elastic = &batchv1beta1.ElasticConfig{Enabled: true, MinReplicas: ptr.To[int32](1), MaxReplicas: ptr.To[int32](4)}
	return j
}

// testRefused: what cannot run is refused at creation or update, naming the
// field, by the CRD schema or the webhook.
func testRefused(t *testing.T, e *env) {
	ctx := testutil.SubtestContext(t)
	ns := e.namespace(t, nil)
	generic := func(name string, specs ...batchv1beta1.ReplicaSpec) *batchv1beta1.GenericJob {
		return &batchv1beta1.GenericJob{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}, Spec: batchv1beta1.GenericJobSpec{ReplicaSpecs: specs}}
	}
	worker := batchv1beta1.ReplicaSpec{Type: "worker", Replicas: ptr.To[int32](2), Template: template(container("main", "run"))}

	badRules := generic("rules", worker)
	badRules.Spec.SuccessRules = []batchv1beta1.FinishRule{{"chief": {0}}}
	badRules.Spec.FailureRules = []batchv1beta1.FinishRule{{"worker": {5}}}
	badDebug := generic("debug", worker)
	badDebug.Spec.RunMode = &batchv1beta1.RunMode{Debug: &batchv1beta1.DebugMode{Enabled: true, ReplicaSpecs: []batchv1beta1.ReplicaDebugSet{{Type: "ps"}}}}
	noTorchrun := elasticJob(ns, "notorchrun")
	noTorchrun.Spec.TorchrunConfig = nil
	minMax := elasticJob(ns, "minmax")
	minMax.Spec.Elastic.MinReplicas = ptr.To[int32](5)
	twoMasters := &batchv1beta1.XGBoostTrainingJob{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "masters"},
		Spec: batchv1beta1.XGBoostTrainingJobSpec{ReplicaSpecs: []batchv1beta1.XGBoostReplicaSpec{
			{Type: "master", Replicas: ptr.To[int32](2), Template: template(container("xgboost", "python", "main.py"))}}}}
	noQueue := generic("noqueue", worker)
	noQueue.Spec.Scheduler = &batchv1beta1.SchedulePolicy{T9kScheduler: &batchv1beta1.T9kScheduler{}}
	tbTraversal := tfJob(ns, "tblogs", tfReplicas("worker", 1))
	tbTraversal.Spec.TensorboardSpec = &tensorstackv1beta1.TensorBoardSpec{TrainingLogFilesets: []string{"t9k://pvc/logs/../../etc"}}

	for _, tc := range []struct {
		name string
		obj  client.Object
		want []string
	}{
		{"no replicaSpecs", generic("empty"), []string{"spec.replicaSpecs"}},
		{"duplicate types", generic("dup", worker, worker), []string{"spec.replicaSpecs[1]", "Duplicate value"}},
		{"tensorflow type", tfJob(ns, "tftype", tfReplicas("master", 1)), []string{"spec.replicaSpecs[0].type", `Unsupported value: "master"`}},
		{"two chiefs", tfJob(ns, "chiefs", tfReplicas("chief", 2), tfReplicas("worker", 1)), []string{"spec.replicaSpecs[0].replicas", "at most one chief"}},
		{"elastic without torchrun", noTorchrun, []string{"spec.elastic.enabled", "needs spec.torchrunConfig.enabled"}},
		{"minReplicas above maxReplicas", minMax, []string{"spec.elastic.minReplicas", "must not exceed maxReplicas"}},
		{"finish rules", badRules, []string{`spec.successRules[0][chief]: Not found`, `spec.failureRules[0][worker][0]: Invalid value: 5: rank out of range`}},
		{"debug type", badDebug, []string{`spec.runMode.debug.replicaSpecs[0].type: Not found: "ps"`}},
		{"two masters", twoMasters, []string{"spec.replicaSpecs[0].replicas", "at most one master"}},
		{"no queue", noQueue, []string{"spec.scheduler.t9kScheduler.queue"}},
		{"tensorboard traversal", tbTraversal, []string{"spec.tensorboardSpec.trainingLogFilesets[0]", "'..'"}},
		{"long name", generic(strings.Repeat("x", 60), worker), []string{"spec.replicaSpecs[0].type", "at most 63 characters"}},
	} {
		err := e.c.Create(ctx, tc.obj)
		if err == nil {
			t.Errorf("%s: created", tc.name)
			continue
		}
		for _, w := range tc.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%s: error %q does not say %q", tc.name, err, w)
			}
		}
	}

	// Immutable fields.
	ej := elasticJob(ns, "fixed")
	ej.Spec.RunMode = &batchv1beta1.RunMode{Pause: &batchv1beta1.PauseMode{ResumeSpecs: []batchv1beta1.ResumeSpec{{Type: "worker", Args: []string{"--resume"}}}}}
	if err := e.c.Create(ctx, ej); err != nil {
		t.Fatal(err)
	}
	j := &batchv1beta1.PyTorchTrainingJob{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "fixed"}}
	for _, tc := range []struct {
		name   string
		change func(*batchv1beta1.PyTorchTrainingJob)
		want   string
	}{
		{"minReplicas", func(j *batchv1beta1.PyTorchTrainingJob) { j.Spec.Elastic.MinReplicas = ptr.To[int32](2) }, "spec.elastic.minReplicas"},
		{"maxReplicas", func(j *batchv1beta1.PyTorchTrainingJob) { j.Spec.Elastic.MaxReplicas = ptr.To[int32](8) }, "spec.elastic.maxReplicas"},
		{"resumeSpecs", func(j *batchv1beta1.PyTorchTrainingJob) {
			j.Spec.RunMode.Pause.ResumeSpecs[0].Args = []string{"--other"}
		}, "spec.runMode.pause.resumeSpecs"},
	} {
		if err := e.update(ctx, t, j, func() { tc.change(j) }); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("changing %s: %v, want a refusal naming %s", tc.name, err, tc.want)
		}
	}
	// What may change does.
	if err := e.update(ctx, t, j, func() {
		j.Spec.Elastic.ExpectedReplicas = ptr.To[int32](3)
		j.Spec.RunMode.Pause.Enabled = true
	}); err != nil {
		t.Errorf("changing expectedReplicas and pause.enabled: %v", err)
	}
}

// testInvalidPastWebhook: a job the webhook never saw fails with the reason
// instead of running; immutable fields stay immutable without the webhook.
func testInvalidPastWebhook(t *testing.T, e *env) {
	ctx := testutil.SubtestContext(t)
	ns := e.namespace(t, map[string]string{bypassLabel: "true"})
	job := tfJob(ns, "chiefs", tfReplicas("chief", 2), tfReplicas("worker", 1))
	if err := e.c.Create(ctx, job); err != nil {
		t.Fatal(err)
	}
	s := e.waitPhase(ctx, t, job, batchv1beta1.JobFailed)
	c := condition(t, s, batchv1beta1.JobFailedCond)
	if c.Reason != "InvalidSpec" || !strings.Contains(c.Message, "spec.replicaSpecs[0].replicas: Invalid value: 2: there can be at most one chief") {
		t.Errorf("Failed condition %+v", c)
	}
	if pods := e.pods(ctx, t, ns, "chiefs"); len(pods) != 0 {
		t.Errorf("%d pods of an invalid job", len(pods))
	}

	ej := elasticJob(ns, "fixed")
	if err := e.c.Create(ctx, ej); err != nil {
		t.Fatal(err)
	}
	if err := e.update(ctx, t, ej, func() { ej.Spec.Elastic.MaxReplicas = ptr.To[int32](8) }); err == nil || !strings.Contains(err.Error(), "spec.elastic.maxReplicas cannot be changed") {
		t.Errorf("changing maxReplicas without the webhook: %v", err)
	}
}
