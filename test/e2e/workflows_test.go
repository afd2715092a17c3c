//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	batchv1beta1 "github.com/accelstack/accelstack/api/batch/v1beta1"
	tensorstackv1beta2 "github.com/accelstack/accelstack/api/tensorstack/v1beta2"
	"github.com/accelstack/accelstack/pkg/eventlistener/serverconfig"
	"github.com/accelstack/accelstack/test/cluster"
)

// workflowTemplates is a DAG of SeqPod steps, a Pod and a GenericJob run as a
// Resource: flip writes the result "heads"; write runs only when the coin is
// heads and writes it to the workspace, a StorageShim PVC; tails never
// runs; train, a GenericJob created as the run's service account, runs
// after write.
var workflowTemplates = strings.NewReplacer("BUSYBOX", cluster.BusyboxImage).Replace(`
apiVersion: batch.tensorstack.dev/v1beta1
kind: WorkflowTemplate
metadata:
  name: flip
spec:
  results:
    - name: coin
  type: SeqPod
  seqPod:
    steps:
      - name: flip
        image: BUSYBOX
        script: |
          #!/bin/sh
          printf heads > $(results.coin.path)
      - name: check
        image: BUSYBOX
        command: ["sh", "-c", "test \"$(cat /t9k/results/coin)\" = heads"]
---
apiVersion: batch.tensorstack.dev/v1beta1
kind: WorkflowTemplate
metadata:
  name: write
spec:
  params:
    - name: side
  workspaces:
    - name: out
  type: SeqPod
  seqPod:
    steps:
      - name: write
        image: BUSYBOX
        env:
          - name: SIDE
            value: $(params.side)
        script: |
          #!/bin/sh
          set -e
          printf '%s' "$SIDE" > $(workspaces.out.path)/coin.txt
          echo "wrote $SIDE"
---
apiVersion: batch.tensorstack.dev/v1beta1
kind: WorkflowTemplate
metadata:
  name: tails
spec:
  type: Pod
  pod:
    containers:
      - name: tails
        image: BUSYBOX
        command: ["false"]
---
apiVersion: batch.tensorstack.dev/v1beta1
kind: WorkflowTemplate
metadata:
  name: train
spec:
  type: Resource
  resource:
    manifest: |
      apiVersion: batch.tensorstack.dev/v1beta1
      kind: GenericJob
      metadata:
        generateName: train-
      spec:
        successRules:
          - {"worker": [0]}
        replicaSpecs:
          - type: worker
            replicas: 1
            template:
              spec:
                restartPolicy: Never
                containers:
                  - name: worker
                    image: BUSYBOX
                    command: ["sh", "-c", "echo trained"]
---
apiVersion: batch.tensorstack.dev/v1beta1
kind: WorkflowTemplate
metadata:
  name: pipeline
spec:
  workspaces:
    - name: data
  results:
    - name: coin
      value: $(templates.flip.results.coin)
  type: DAG
  dag:
    templates:
      - name: flip
        workflowTemplateRef: flip
      - name: write
        workflowTemplateRef: write
        when:
          - input: $(templates.flip.results.coin)
            operator: in
            values: ["heads"]
        params:
          - name: side
            value: $(templates.flip.results.coin)
        workspaces:
          - name: out
            workspace: data
            subPath: results
      - name: tails
        workflowTemplateRef: tails
        when:
          - input: $(templates.flip.results.coin)
            operator: in
            values: ["tails"]
      - name: train
        workflowTemplateRef: train
        dependencies: ["write"]
---
apiVersion: v1
kind: ServiceAccount
metadata:
  name: pipeline
---
apiVersion: rbac.authorization.k8s.io/v1
kind: Role
metadata:
  name: genericjobs
rules:
  - apiGroups: ["batch.tensorstack.dev"]
    resources: ["genericjobs"]
    verbs: ["get", "create", "delete"]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata:
  name: pipeline-genericjobs
roleRef:
  apiGroup: rbac.authorization.k8s.io
  kind: Role
  name: genericjobs
subjects:
  - kind: ServiceAccount
    name: pipeline
`)

// TestWorkflowDAG runs a DAG whose steps really run: a result passes from
// one node to another's when and params, a SeqPod writes a file through a
// StorageShim PVC into the bucket, and a Resource node runs a GenericJob to
// Succeeded. It runs in a Project namespace: the controllers act as a
// run's ServiceAccount only there.
func TestWorkflowDAG(t *testing.T) {
	t.Parallel()
	c := crClient(t)
	ns := newProjectE2E(t, c, "0")
	s3, bucket := newBucket(t, nil)
	createS3Secret(t, ns)
	shim := &tensorstackv1beta2.StorageShim{
		ObjectMeta: metav1.ObjectMeta{Name: "work", Namespace: ns},
		Spec: tensorstackv1beta2.StorageShimSpec{Type: tensorstackv1beta2.StorageShimTypeS3, S3: &tensorstackv1beta2.S3{
			URI: "s3://" + bucket + "/pipeline", SecretRef: corev1.LocalObjectReference{Name: "s3"}}},
	}
	if err := c.Create(testContext(t), shim); err != nil {
		t.Fatal(err)
	}
	waitShimReady(t, c, ns, "work")
	applyYAML(t, c, ns, workflowTemplates+`
---
apiVersion: batch.tensorstack.dev/v1beta1
kind: WorkflowRun
metadata:
  name: pipeline
spec:
  workflowTemplateRef: pipeline
  serviceAccountName: pipeline
  workspaces:
    - name: data
      persistentVolumeClaim:
        claimName: work
`)
	// A user waits for the run with t9k meanwhile.
	waited := make(chan error, 1)
	go func() {
		_, err := t9k(t, "wr", "wait", "pipeline", "-p", ns, "--timeout", "15m", "--period", "2s")
		waited <- err
	}()
	wr := waitWorkflowRun(t, c, ns, "pipeline", jobTimeout)
	if wr.Status.Phase != batchv1beta1.NodeSucceeded {
		t.Fatalf("run %s: %s", wr.Status.Phase, describeRun(t, c, ns, wr))
	}
	if err := <-waited; err != nil {
		t.Errorf("t9k wr wait pipeline: %v, want exit 0 once the run succeeded", err)
	}
	step := wr.Status.Nodes["write"].WorkflowRunName
	if out, err := t9k(t, "wr", "wait", step, "--print-log", "-p", ns); err != nil || !strings.Contains(out, "wrote heads") {
		t.Errorf("t9k wr wait %s --print-log: %v\n%s\nwant the step's log", step, err, out)
	}
	phases := map[string]batchv1beta1.NodePhase{}
	for n, s := range wr.Status.Nodes {
		phases[n] = s.Phase
	}
	if fmt.Sprint(phases) != "map[flip:Succeeded tails:Skipped train:Succeeded write:Succeeded]" {
		t.Errorf("nodes %v", phases)
	}
	if len(wr.Status.Results) != 1 || wr.Status.Results[0].Value != "heads" {
		t.Errorf("results %+v, want coin=heads", wr.Status.Results)
	}
	waitObject(t, s3, bucket, "pipeline/results/coin.txt", "heads")

	train := &batchv1beta1.WorkflowRun{}
	if err := c.Get(testContext(t), client.ObjectKey{Namespace: ns, Name: wr.Status.Nodes["train"].WorkflowRunName}, train); err != nil {
		t.Fatal(err)
	}
	job := &batchv1beta1.GenericJob{}
	if err := c.Get(testContext(t), client.ObjectKey{Namespace: ns, Name: train.Status.ResourceName}, job); err != nil {
		t.Fatal(err)
	}
	if job.Status.Phase != batchv1beta1.JobSucceeded {
		t.Errorf("GenericJob %s is %s", job.Name, job.Status.Phase)
	}
}

// TestCronWorkflowRunForbid starts a run every minute that takes 75
// seconds: under Forbid the time that falls while one runs is skipped, and
// no two runs ever overlap.
func TestCronWorkflowRunForbid(t *testing.T) {
	t.Parallel()
	ns := newNamespace(t)
	c := crClient(t)
	applyYAML(t, c, ns, strings.ReplaceAll(`
apiVersion: batch.tensorstack.dev/v1beta1
kind: CronWorkflowRun
metadata:
  name: every-minute
spec:
  schedule: "* * * * *"
  concurrencyPolicy: Forbid
  workflowRun:
    spec:
      workflowTemplateSpec:
        type: Pod
        pod:
          terminationGracePeriodSeconds: 1
          containers:
            - name: slow
              image: BUSYBOX
              command: ["sleep", "75"]
`, "BUSYBOX", cluster.BusyboxImage))
	var runs []batchv1beta1.WorkflowRun
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	err := wait.PollUntilContextCancel(ctx, 2*time.Second, true, func(ctx context.Context) (bool, error) {
		var list batchv1beta1.WorkflowRunList
		if err := c.List(ctx, &list, client.InNamespace(ns)); err != nil {
			return false, nil //nolint:nilerr // retried until the timeout
		}
		runs = list.Items
		return len(runs) >= 2, nil
	})
	if err != nil {
		t.Fatalf("%d runs after 5 minutes, want 2", len(runs))
	}
	first, second := runs[0], runs[1]
	if second.CreationTimestamp.Before(&first.CreationTimestamp) {
		first, second = second, first
	}
	done := &batchv1beta1.WorkflowRun{}
	if err := c.Get(testContext(t), client.ObjectKeyFromObject(&first), done); err != nil {
		t.Fatal(err)
	}
	if done.Status.CompletionTime == nil || second.CreationTimestamp.Before(done.Status.CompletionTime) {
		t.Errorf("run %s started at %s while %s ran (completed %v)", second.Name, second.CreationTimestamp, first.Name, done.Status.CompletionTime)
	}
	if gap := second.CreationTimestamp.Sub(first.CreationTimestamp.Time); gap < 110*time.Second {
		t.Errorf("runs %s and %s started %s apart; the minute in between should have been skipped", first.Name, second.Name, gap)
	}
	// Each run is named <cron>-<unix seconds of its minute>.
	for _, r := range []batchv1beta1.WorkflowRun{first, second} {
		sec, err := strconv.ParseInt(strings.TrimPrefix(r.Name, "every-minute-"), 10, 64)
		if err != nil || sec%60 != 0 {
			t.Errorf("run %s is not named <cron>-<unix time of a minute>", r.Name)
		}
	}
}

// applyYAML creates the objects of a multi-document YAML in ns.
func applyYAML(t *testing.T, c client.Client, ns, docs string) {
	t.Helper()
	for _, doc := range strings.Split(docs, "\n---\n") {
		if strings.TrimSpace(doc) == "" {
			continue
		}
		obj := &unstructured.Unstructured{}
		if err := yaml.Unmarshal([]byte(doc), &obj.Object); err != nil {
			t.Fatalf("decoding %s: %v", doc, err)
		}
		obj.SetNamespace(ns)
		if err := c.Create(testContext(t), obj); err != nil {
			t.Fatalf("creating %s %s: %v", obj.GetKind(), obj.GetName(), err)
		}
	}
}

// waitWorkflowRun waits until the run has ended and returns it.
func waitWorkflowRun(t *testing.T, c client.Client, ns, name string, within time.Duration) *batchv1beta1.WorkflowRun {
	t.Helper()
	wr := &batchv1beta1.WorkflowRun{}
	ctx, cancel := context.WithTimeout(context.Background(), within)
	defer cancel()
	err := wait.PollUntilContextCancel(ctx, time.Second, true, func(ctx context.Context) (bool, error) {
		if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, wr); err != nil {
			return false, nil //nolint:nilerr // retried until the timeout
		}
		return wr.Status.Phase.Done(), nil
	})
	if err != nil {
		t.Fatalf("run %s not done after %s: %s", name, within, describeRun(t, c, ns, wr))
	}
	return wr
}

// describeRun says where a run and its nodes are, for failure messages.
func describeRun(t *testing.T, c client.Client, ns string, wr *batchv1beta1.WorkflowRun) string {
	t.Helper()
	var b strings.Builder
	fmt.Fprintf(&b, "%s phase %q message %q", wr.Name, wr.Status.Phase, wr.Status.Message)
	for n, s := range wr.Status.Nodes {
		fmt.Fprintf(&b, "\n  node %s: %s %s %s", n, s.Phase, s.WorkflowRunName, s.Message)
		child := &batchv1beta1.WorkflowRun{}
		if s.WorkflowRunName != "" && c.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: s.WorkflowRunName}, child) == nil {
			fmt.Fprintf(&b, " (pod %s: %s)", child.Status.PodName, child.Status.Message)
		}
	}
	return b.String()
}

// TestEventListenerStartsRun posts a JSON event to an EventListener: the
// WorkflowTrigger whose filter it passes starts a run with a param taken
// from the body, created as the trigger's service account, and the run
// really runs; an event the filter refuses starts nothing.
func TestEventListenerStartsRun(t *testing.T) {
	t.Parallel()
	ns := newNamespace(t)
	c := crClient(t)
	applyYAML(t, c, ns, strings.ReplaceAll(`
apiVersion: batch.tensorstack.dev/v1beta1
kind: WorkflowTemplate
metadata:
  name: greet
spec:
  params:
    - name: message
  type: Pod
  pod:
    containers:
      - name: greet
        image: BUSYBOX
        env:
          - name: MESSAGE
            value: $(params.message)
        command: ["sh", "-c", "echo \"got: $MESSAGE\""]
---
apiVersion: v1
kind: ServiceAccount
metadata:
  name: trigger
---
apiVersion: rbac.authorization.k8s.io/v1
kind: Role
metadata:
  name: start-runs
rules:
  - apiGroups: ["batch.tensorstack.dev"]
    resources: ["workflowruns"]
    verbs: ["create"]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata:
  name: trigger-start-runs
roleRef:
  apiGroup: rbac.authorization.k8s.io
  kind: Role
  name: start-runs
subjects:
  - kind: ServiceAccount
    name: trigger
---
apiVersion: tensorstack.dev/v1beta1
kind: EventListener
metadata:
  name: hooks
---
apiVersion: tensorstack.dev/v1beta1
kind: WorkflowTrigger
metadata:
  name: on-push
spec:
  serviceAccountName: trigger
  eventSources:
    - eventListenerName: hooks
      filters:
        - path: header.X-Github-Event
          type: string
          values: ["push"]
  workflowRunSpec:
    workflowTemplateRef: greet
    params:
      - name: message
        value: $(body.head_commit.message)
`, "BUSYBOX", cluster.BusyboxImage))
	for _, kind := range []string{"eventlistener/hooks", "workflowtrigger/on-push"} {
		if _, err := clus.Kubectl(testContext(t), "-n", ns, "wait", "--for=condition=Ready", kind, "--timeout=180s"); err != nil {
			t.Fatalf("%s not Ready: %v", kind, err)
		}
	}
	// The listener's Deployment rolls when the trigger subscribes: post to
	// a Ready pod that delivers to the trigger.
	var ip string
	err := wait.PollUntilContextCancel(testContext(t), time.Second, true, func(ctx context.Context) (bool, error) {
		var pods corev1.PodList
		if err := c.List(ctx, &pods, client.InNamespace(ns), client.MatchingLabels{"app.kubernetes.io/component": "event-listener"}); err != nil {
			return false, nil //nolint:nilerr // retried until the timeout
		}
		for _, p := range pods.Items {
			if p.DeletionTimestamp != nil || !ready(&p) {
				continue
			}
			for _, e := range p.Spec.Containers[0].Env {
				if e.Name == serverconfig.EnvSubscribers && strings.Contains(e.Value, "on-push-workflowtrigger") {
					ip = p.Status.PodIP
					return true, nil
				}
			}
		}
		return false, nil
	})
	if err != nil {
		t.Fatalf("no Ready listener pod delivering to the trigger: %v", err)
	}
	post := func(event, body string) {
		t.Helper()
		req, err := http.NewRequestWithContext(testContext(t), http.MethodPost, "http://"+ip+":8080/", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("X-Github-Event", event)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		reply, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK || strings.TrimSpace(string(reply)) != "success" {
			t.Fatalf("POST %s: %s %q", event, resp.Status, reply)
		}
	}
	post("issues", `{"head_commit": {"message": "not a push"}}`)
	post("push", `{"head_commit": {"message": "fix the loader"}}`)

	var runs batchv1beta1.WorkflowRunList
	err = wait.PollUntilContextCancel(testContext(t), time.Second, true, func(ctx context.Context) (bool, error) {
		if err := c.List(ctx, &runs, client.InNamespace(ns)); err != nil {
			return false, nil //nolint:nilerr // retried until the timeout
		}
		return len(runs.Items) > 0, nil
	})
	if err != nil {
		t.Fatal("no WorkflowRun after the push event")
	}
	name := runs.Items[0].Name
	if !strings.HasPrefix(name, "hooks-on-push-") || len(name) != len("hooks-on-push-")+5 {
		t.Errorf("run %s, want hooks-on-push-<5 hex>", name)
	}
	wr := waitWorkflowRun(t, c, ns, name, timeout)
	if wr.Status.Phase != batchv1beta1.NodeSucceeded {
		t.Fatalf("run %s: %s", wr.Status.Phase, describeRun(t, c, ns, wr))
	}
	if logs := podLogs(t, ns, wr.Status.PodName); !strings.Contains(logs, "got: fix the loader") {
		t.Errorf("the run's pod printed %q, want the commit message from the event", logs)
	}
	// The listener reached the trigger; other pods of the namespace do not.
	checkTriggerNetworkPolicy(t, c, ns, ip)
	// The issues event passed no filter: still one run.
	if err := c.List(testContext(t), &runs, client.InNamespace(ns)); err != nil {
		t.Fatal(err)
	}
	if len(runs.Items) != 1 {
		t.Errorf("%d runs, want 1: the issues event must not start one", len(runs.Items))
	}
}
