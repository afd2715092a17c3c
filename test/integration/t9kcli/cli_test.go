package t9kcli

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	authorizationv1 "k8s.io/api/authorization/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	batchv1beta1 "github.com/accelstack/accelstack/api/batch/v1beta1"
	schedv1beta1 "github.com/accelstack/accelstack/api/scheduler/v1beta1"
	tensorstackv1beta1 "github.com/accelstack/accelstack/api/tensorstack/v1beta1"
	"github.com/accelstack/accelstack/pkg/members"
	"github.com/accelstack/accelstack/pkg/t9kcli"
	"github.com/accelstack/accelstack/test/harness"
	"github.com/accelstack/accelstack/test/testutil"
)

// cli runs t9k commands against one control plane.
type cli struct {
	t          *testing.T
	kubeconfig string
}

// run runs t9k with args and input, and returns its output, its error
// output and its error.
func (c *cli) run(input string, args ...string) (string, string, error) {
	c.t.Helper()
	var out, errOut bytes.Buffer
	root := t9kcli.NewRoot(genericiooptions.IOStreams{In: strings.NewReader(input), Out: &out, ErrOut: &errOut})
	kubeconfig := "--kubeconfig=" + c.kubeconfig
	if args[0] == "__complete" { // the last argument is the word to complete
		args = append([]string{args[0], kubeconfig}, args[1:]...)
	} else {
		args = append(args, kubeconfig)
	}
	root.SetArgs(args)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	err := root.ExecuteContext(ctx)
	return out.String(), errOut.String(), err
}

// mustRun runs t9k and fails the test on an error.
func (c *cli) mustRun(args ...string) string {
	c.t.Helper()
	out, errOut, err := c.run("", args...)
	if err != nil {
		c.t.Fatalf("t9k %s: %v\n%s", strings.Join(args, " "), err, errOut)
	}
	return out
}

// genericJob is a GenericJob of one worker replica.
func genericJob(ns, name string) *batchv1beta1.GenericJob {
	return &batchv1beta1.GenericJob{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: batchv1beta1.GenericJobSpec{
			Scheduler: &batchv1beta1.SchedulePolicy{T9kScheduler: &batchv1beta1.T9kScheduler{Queue: "gpu"}},
			ReplicaSpecs: []batchv1beta1.ReplicaSpec{{Type: "trainer", Replicas: ptr.To[int32](1),
				Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "main", Image: "busybox"}}}}}},
		},
	}
}

// TestCLI runs every verb of t9k against a real API server.
func TestCLI(t *testing.T) {
	cp := harness.StartControlPlane(t)
	c := &cli{t: t, kubeconfig: cp.KubeconfigPath}
	ctx := testutil.SubtestContext(t)
	admin := cp.Client
	harness.CreateNamespace(ctx, t, admin, "demo")
	harness.CreateNamespace(ctx, t, admin, "other")
	for _, o := range []client.Object{genericJob("demo", "mnist"), genericJob("demo", "bert"), genericJob("other", "gpt")} {
		if err := admin.Create(ctx, o); err != nil {
			t.Fatal(err)
		}
	}
	q := &schedv1beta1.Queue{ObjectMeta: metav1.ObjectMeta{Name: "gpu"}, Spec: schedv1beta1.QueueSpec{NamespaceSelector: &metav1.LabelSelector{}}}
	if err := admin.Create(ctx, q); err != nil {
		t.Fatal(err)
	}

	t.Run("get", func(t *testing.T) {
		out := c.mustRun("gj", "get", "-p", "demo")
		lines := strings.Split(strings.TrimSpace(out), "\n")
		if len(lines) != 3 || !strings.HasPrefix(lines[0], "NAME") || !strings.Contains(lines[0], "PHASE") {
			t.Fatalf("t9k gj get -p demo:\n%s\nwant a table of 2 jobs with the printer columns", out)
		}
		if !strings.HasPrefix(lines[1], "bert") || !strings.HasPrefix(lines[2], "mnist") {
			t.Errorf("rows %q, want bert and mnist", lines[1:])
		}
		if got := c.mustRun("genericjob", "get", "-n", "other", "-o", "name"); strings.TrimSpace(got) != "genericjob.batch.tensorstack.dev/gpt" {
			t.Errorf("-o name = %q", got)
		}
		if got := c.mustRun("gj", "get", "-n", "other", "-p", "demo", "mnist", "-o", "template"); !strings.Contains(got, "mnist") || strings.Contains(got, "gpt") {
			t.Errorf("-p over -n, -o template:\n%s", got)
		}
		all := c.mustRun("gj", "get", "-A")
		for _, want := range []string{"NAMESPACE", "demo", "other", "gpt", "mnist"} {
			if !strings.Contains(all, want) {
				t.Errorf("t9k gj get -A does not show %q:\n%s", want, all)
			}
		}
		if got := c.mustRun("queue", "get", "-o", "jsonpath={.items[*].metadata.name}"); got != "gpu" {
			t.Errorf("t9k queue get -o jsonpath = %q", got)
		}
	})

	t.Run("queue", func(t *testing.T) {
		c.mustRun("queue", "close", "gpu")
		if err := admin.Get(ctx, client.ObjectKey{Name: "gpu"}, q); err != nil || !q.Spec.Closed {
			t.Fatalf("after t9k queue close: closed %t (%v)", q.Spec.Closed, err)
		}
		c.mustRun("queue", "open", "gpu")
		if err := admin.Get(ctx, client.ObjectKey{Name: "gpu"}, q); err != nil || q.Spec.Closed {
			t.Fatalf("after t9k queue open: closed %t (%v)", q.Spec.Closed, err)
		}

		// A grant is RBAC the API server enforces: alice may use the
		// queue once granted, and no more once revoked.
		// The API server's authorizer sees a new binding a moment later.
		awaitUse := func(user string, want bool) {
			t.Helper()
			testutil.Eventually(ctx, t, 30*time.Second, fmt.Sprintf("%s may use queue gpu: %t", user, want), func() (bool, string, error) {
				sar := &authorizationv1.SubjectAccessReview{Spec: authorizationv1.SubjectAccessReviewSpec{User: user,
					ResourceAttributes: &authorizationv1.ResourceAttributes{Group: "scheduler.tensorstack.dev", Resource: "queues", Name: "gpu", Verb: "use"}}}
				if err := admin.Create(ctx, sar); err != nil {
					return false, "", err
				}
				return sar.Status.Allowed == want, fmt.Sprintf("allowed %t (%s)", sar.Status.Allowed, sar.Status.Reason), nil
			})
		}
		if out := c.mustRun("queue", "grant", "gpu", "--user", "alice", "--group", "vision"); !strings.Contains(out, `queue "gpu" granted to user alice, group vision`) {
			t.Errorf("t9k queue grant: %q", out)
		}
		awaitUse("alice", true)
		if out := c.mustRun("queue", "grants", "gpu"); !strings.Contains(out, "User") || !strings.Contains(out, "alice") || !strings.Contains(out, "vision") {
			t.Errorf("t9k queue grants:\n%s", out)
		}
		c.mustRun("queue", "revoke", "gpu", "--user", "alice")
		awaitUse("alice", false)
		if _, _, err := c.run("", "queue", "grant", "gpus", "--user", "alice"); err == nil || !strings.Contains(err.Error(), "not found") {
			t.Errorf("a grant of a queue that does not exist: %v", err)
		}
		if _, _, err := c.run("", "queue", "grant", "gpu"); err == nil || !strings.Contains(err.Error(), "--user or --group") {
			t.Errorf("a grant to no one: %v", err)
		}
	})

	t.Run("describe", func(t *testing.T) {
		job := &batchv1beta1.GenericJob{}
		if err := admin.Get(ctx, client.ObjectKey{Namespace: "demo", Name: "mnist"}, job); err != nil {
			t.Fatal(err)
		}
		job.Status.Phase = "Pending"
		job.Status.Conditions = []batchv1beta1.JobCondition{{Type: "Initialized", Status: corev1.ConditionTrue, Reason: "PodsCreated", LastTransitionTime: metav1.Now()}}
		if err := admin.Status().Update(ctx, job); err != nil {
			t.Fatal(err)
		}
		pod := &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Namespace: "demo", Name: "mnist-trainer-0", Labels: map[string]string{
				batchv1beta1.JobNameLabel: "mnist", batchv1beta1.ReplicaTypeLabel: "trainer", batchv1beta1.ReplicaIndexLabel: "0"},
				OwnerReferences: []metav1.OwnerReference{*metav1.NewControllerRef(job, batchv1beta1.GroupVersion.WithKind("GenericJob"))}},
			Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "main", Image: "busybox"}}},
		}
		if err := admin.Create(ctx, pod); err != nil {
			t.Fatal(err)
		}
		pod.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodScheduled, Status: corev1.ConditionFalse,
			Reason: "Unschedulable", Message: `queue "gpu": nvidia.com/gpu requests 8 would exceed its quota 4 (0 allocated)`}}
		pod.Status.Phase = corev1.PodPending
		if err := admin.Status().Update(ctx, pod); err != nil {
			t.Fatal(err)
		}
		ev := &corev1.Event{
			ObjectMeta:     metav1.ObjectMeta{Namespace: "demo", Name: "mnist-trainer-0.1"},
			InvolvedObject: corev1.ObjectReference{Kind: "Pod", Namespace: "demo", Name: pod.Name, UID: pod.UID},
			Type:           corev1.EventTypeWarning, Reason: "FailedScheduling", Message: "0/1 nodes are available",
			LastTimestamp: metav1.Now(), Source: corev1.EventSource{Component: "t9k-scheduler"},
		}
		if err := admin.Create(ctx, ev); err != nil {
			t.Fatal(err)
		}
		out := c.mustRun("gj", "describe", "mnist", "-p", "demo")
		for _, want := range []string{
			"Name:", "mnist", "Project:", "demo", "Phase:", "Pending", "Initialized", "PodsCreated",
			"Queue:", "gpu", "Closed:", "false",
			"mnist-trainer-0", "Unschedulable", "would exceed its quota",
			"FailedScheduling", "pod/mnist-trainer-0",
		} {
			if !strings.Contains(out, want) {
				t.Errorf("t9k gj describe does not show %q:\n%s", want, out)
			}
		}
		if _, _, err := c.run("", "gj", "describe", "missing", "-p", "demo"); err == nil || !apierrors.IsNotFound(err) {
			t.Errorf("describe of a missing job: %v, want not found", err)
		}
	})

	t.Run("logs", func(t *testing.T) {
		_, _, err := c.run("", "gj", "logs", "mnist", "--type", "worker", "-p", "demo")
		if err == nil || !strings.Contains(err.Error(), `no replica type "worker"; the valid types are: trainer`) {
			t.Errorf("logs of a type the job does not have: %v", err)
		}
		_, _, err = c.run("", "gj", "logs", "bert", "-p", "demo")
		if err == nil || !strings.Contains(err.Error(), "has no trainer 0 pod yet") {
			t.Errorf("logs of a job without pods: %v", err)
		}
		_, _, err = c.run("", "gj", "logs", "bert", "--index", "-1", "-p", "demo")
		if t9kcli.ExitCode(err) != t9kcli.ExitBadUsage {
			t.Errorf("--index -1: %v (exit %d), want a usage error", err, t9kcli.ExitCode(err))
		}
	})

	t.Run("wait", func(t *testing.T) {
		setPhase := func(name, phase string) {
			job := &batchv1beta1.GenericJob{}
			if err := admin.Get(ctx, client.ObjectKey{Namespace: "demo", Name: name}, job); err != nil {
				t.Fatal(err)
			}
			job.Status.Phase = batchv1beta1.JobPhase(phase)
			if err := admin.Status().Update(ctx, job); err != nil {
				t.Fatal(err)
			}
		}
		go func() {
			time.Sleep(time.Second)
			setPhase("bert", "Succeeded")
		}()
		if _, _, err := c.run("", "gj", "wait", "bert", "-p", "demo", "--period", "100ms", "--timeout", "30s"); err != nil {
			t.Errorf("wait for a job that succeeds: %v", err)
		}
		setPhase("mnist", "Failed")
		if _, _, err := c.run("", "gj", "wait", "mnist", "-p", "demo", "--period", "100ms"); err == nil || !strings.Contains(err.Error(), "ended Failed") {
			t.Errorf("wait for a job that failed: %v", err)
		}
		_, _, err := c.run("", "gj", "wait", "gpt", "-p", "other", "--period", "100ms", "--timeout", "500ms")
		if err == nil || !strings.Contains(err.Error(), "timed out") {
			t.Errorf("wait past its timeout: %v", err)
		}
	})

	t.Run("terminal", func(t *testing.T) { testTerminal(t, cp.KubeconfigPath) })

	t.Run("complete", func(t *testing.T) {
		out := c.mustRun("__complete", "gj", "describe", "-p", "demo", "")
		if !strings.Contains(out, "bert\n") || !strings.Contains(out, "mnist\n") || strings.Contains(out, "gpt") {
			t.Errorf("completion of names in demo:\n%s", out)
		}
	})

	t.Run("create-mls", func(t *testing.T) {
		file := filepath.Join(t.TempDir(), "mls.yaml")
		if err := os.WriteFile(file, []byte(mlsYAML), 0o600); err != nil {
			t.Fatal(err)
		}
		if out := c.mustRun("create", "-f", file, "-p", "demo"); !strings.Contains(out, "created") {
			t.Fatalf("t9k create -f:\n%s", out)
		}
		mls := func() *tensorstackv1beta1.MLService {
			m := &tensorstackv1beta1.MLService{}
			if err := admin.Get(ctx, client.ObjectKey{Namespace: "demo", Name: "mask"}, m); err != nil {
				t.Fatal(err)
			}
			return m
		}
		dry := c.mustRun("mls", "set-canary", "mask", "--canary=b", "--traffic=20", "-p", "demo", "--dry-run", "-o", "json")
		if !strings.Contains(dry, `"canaryTrafficPercent": 20`) || mls().Spec.Canary != "" {
			t.Errorf("set-canary --dry-run printed\n%s\nand stored canary %q, want the change printed only", dry, mls().Spec.Canary)
		}
		c.mustRun("mls", "canary", "mask", "--canary=b", "--traffic=20", "-p", "demo")
		if m := mls(); m.Spec.Canary != "b" || ptr.Deref(m.Spec.CanaryTrafficPercent, 0) != 20 {
			t.Errorf("after set-canary: canary %q at %v", m.Spec.Canary, m.Spec.CanaryTrafficPercent)
		}
		c.mustRun("mls", "set-canary", "mask", "--traffic=30", "-p", "demo")
		if m := mls(); m.Spec.Canary != "b" || ptr.Deref(m.Spec.CanaryTrafficPercent, 0) != 30 {
			t.Errorf("after --traffic=30: canary %q at %v", m.Spec.Canary, m.Spec.CanaryTrafficPercent)
		}
		// The API server's validation answers, naming the field.
		_, _, err := c.run("", "mls", "set-canary", "mask", "--canary=a", "-p", "demo")
		if err == nil || !strings.Contains(err.Error(), "canary must differ from default") {
			t.Errorf("a canary equal to the default: %v", err)
		}
		if _, _, err := c.run("", "mls", "delete-release", "mask", "--release=a", "-p", "demo"); err == nil || !strings.Contains(err.Error(), "default") {
			t.Errorf("removing the default release: %v", err)
		}
		c.mustRun("delete-release", "mask", "--release=b", "-p", "demo")
		if m := mls(); len(m.Spec.Releases) != 1 || m.Spec.Canary != "" || m.Spec.CanaryTrafficPercent != nil {
			t.Errorf("after removing the canary release: %+v", m.Spec)
		}
		if out := c.mustRun("delete", "-f", file, "-p", "demo"); !strings.Contains(out, "deleted") {
			t.Errorf("t9k delete -f:\n%s", out)
		}
	})

	t.Run("project-create", func(t *testing.T) {
		// No Project controller runs here: the namespace is there already.
		harness.CreateNamespace(ctx, t, admin, "team-x")
		out := c.mustRun("project", "create", "team-x", "alice", "--build")
		if !strings.Contains(out, `project "team-x" created`) || !strings.Contains(out, "alice is its admin") {
			t.Errorf("t9k project create:\n%s", out)
		}
		got, err := members.Get(ctx, admin, "team-x", members.UserKind, "alice")
		if err != nil || !got.Admin || len(got.Scopes) != 1 || got.Scopes[0] != members.Build {
			t.Errorf("alice in team-x: %+v (%v), want the admin with the build scope", got, err)
		}
		_, _, err = c.run("", "project", "create", "team-y", "bob", "--timeout", "1s")
		if err == nil || !strings.Contains(err.Error(), "did not appear") {
			t.Errorf("project create without a Project controller: %v", err)
		}
		if _, _, err := c.run("", "project", "create", "team-z", "bad user"); t9kcli.ExitCode(err) != t9kcli.ExitBadUsage {
			t.Errorf("an owner name with a space: %v, want a usage error", err)
		}
	})

	t.Run("smls-create", func(t *testing.T) {
		c.mustRun("smls", "create", "mnist", "--model=s3://models/mnist/", "--secret=s3-cred",
			"--image=t9kpublic/tensorflow-serving:2.6.0", "-p", "demo")
		s := &tensorstackv1beta1.SimpleMLService{}
		if err := admin.Get(ctx, client.ObjectKey{Namespace: "demo", Name: "mnist"}, s); err != nil {
			t.Fatal(err)
		}
		if st := s.Spec.Storage; s.Spec.TensorFlow == nil || s.Spec.TensorFlow.Image != "t9kpublic/tensorflow-serving:2.6.0" ||
			st == nil || st.S3 == nil || st.S3.URI != "s3://models/mnist/" || st.S3.SecretRef.Name != "s3-cred" {
			t.Errorf("the SimpleMLService t9k smls create made: %+v", s.Spec)
		}
		dry := c.mustRun("smls", "create", "torch", "--model=pvc://models/mnist", "--image=t9kpublic/pytorch-serve:0.4.1-cpu",
			"-p", "demo", "--dry-run")
		if !strings.Contains(dry, "pytorch:") || !strings.Contains(dry, "subPath: mnist") {
			t.Errorf("smls create --dry-run of a PVC model:\n%s", dry)
		}
		for args, want := range map[string]string{
			"--model=mms://aihub/t9kpublic/mnist:v1 --image=tensorflow-serving": "mms:// (the model management service) is not served",
			"--model=s3://models/mnist/ --image=tensorflow-serving":             "needs --secret",
			"--model=pvc://models/x --image=serving --tech=xgboost":             "serves tensorflow or pytorch",
			"--model=pvc://models/x --image=serving":                            "give --tech",
		} {
			_, _, err := c.run("", append([]string{"smls", "create", "bad", "-p", "demo"}, strings.Fields(args)...)...)
			if t9kcli.ExitCode(err) != t9kcli.ExitBadUsage || !strings.Contains(err.Error(), want) {
				t.Errorf("smls create %s: %v, want a usage error with %q", args, err, want)
			}
		}
	})

	t.Run("wt-start", func(t *testing.T) {
		wt := &batchv1beta1.WorkflowTemplate{
			ObjectMeta: metav1.ObjectMeta{Namespace: "demo", Name: "hello"},
			Spec: batchv1beta1.WorkflowTemplateSpec{
				Type:   batchv1beta1.WorkflowTemplateTypePod,
				Params: []batchv1beta1.ParamSpec{{Name: "who"}, {Name: "greeting", Default: ptr.To("hello")}},
				Pod: &batchv1beta1.PodWorkflowTemplate{PodSpec: corev1.PodSpec{
					Containers: []corev1.Container{{Name: "main", Image: "busybox", Command: []string{"echo", "$(params.greeting) $(params.who)"}}}}},
			},
		}
		if err := admin.Create(ctx, wt); err != nil {
			t.Fatal(err)
		}
		if _, _, err := c.run("", "wt", "start", "hello", "-p", "demo"); t9kcli.ExitCode(err) != t9kcli.ExitBadUsage || !strings.Contains(err.Error(), `needs param "who"`) {
			t.Errorf("start without a required param: %v", err)
		}
		name := strings.TrimSpace(c.mustRun("wt", "start", "hello", "-p", "demo", "-r", "who=world", "--use-param-defaults",
			"-l", "team=vision", "--serviceaccount", "runner", "--timeout", "10m", "-w", "name=data,type=pvc,claimName=data-pvc,subPath=in"))
		if !strings.HasPrefix(name, "hello-run-") || len(name) != len("hello-run-")+5 {
			t.Fatalf("t9k wt start printed %q, want hello-run-<5 characters>", name)
		}
		run := &batchv1beta1.WorkflowRun{}
		if err := admin.Get(ctx, client.ObjectKey{Namespace: "demo", Name: name}, run); err != nil {
			t.Fatal(err)
		}
		params := map[string]string{}
		for _, p := range run.Spec.Params {
			params[p.Name] = p.Value
		}
		ws := run.Spec.Workspaces
		if run.Spec.WorkflowTemplateRef != "hello" || params["who"] != "world" || params["greeting"] != "hello" ||
			run.Labels["team"] != "vision" || run.Spec.ServiceAccountName != "runner" || run.Spec.Timeout == nil ||
			len(ws) != 1 || ws[0].PersistentVolumeClaim == nil || ws[0].PersistentVolumeClaim.ClaimName != "data-pvc" || ws[0].SubPath != "in" {
			t.Errorf("the run t9k wt start created: %+v %+v", run.Labels, run.Spec)
		}
		if _, _, err := c.run("", "wt", "start", "hello", "-p", "demo", "-r", "who=x", "-w", "name=d,type=nfs"); t9kcli.ExitCode(err) != t9kcli.ExitBadUsage {
			t.Errorf("a workspace of an unknown type: %v", err)
		}
	})

	t.Run("delete", func(t *testing.T) {
		out, _, err := c.run("n\n", "gj", "delete", "mnist", "-p", "demo")
		if err != nil || !strings.Contains(out, "Nothing deleted") {
			t.Fatalf("delete answered no: %v\n%s", err, out)
		}
		out = c.mustRun("gj", "rm", "mnist", "-p", "demo", "-f")
		if !strings.Contains(out, `"mnist" deleted`) {
			t.Errorf("delete -f:\n%s", out)
		}
		out, _, err = c.run("yes\n", "gj", "delete", "--all", "-p", "demo")
		if err != nil || !strings.Contains(out, `"bert" deleted`) {
			t.Errorf("delete --all answered yes: %v\n%s", err, out)
		}
		var left batchv1beta1.GenericJobList
		if err := admin.List(ctx, &left); err != nil || len(left.Items) != 1 || left.Items[0].Name != "gpt" {
			t.Errorf("after the deletes in demo, jobs left: %v (%v), want gpt of other", left.Items, err)
		}
		if _, _, err := c.run("", "gj", "delete", "-p", "demo"); t9kcli.ExitCode(err) != t9kcli.ExitBadUsage {
			t.Errorf("delete without names: %v, want a usage error", err)
		}
	})
}

// mlsYAML is an MLService of two releases, as a user writes it.
const mlsYAML = `apiVersion: tensorstack.dev/v1beta1
kind: MLService
metadata:
  name: mask
spec:
  default: a
  releases:
    - name: a
      predictor:
        model: {runtime: torchserve}
    - name: b
      predictor:
        model: {runtime: torchserve}
`
