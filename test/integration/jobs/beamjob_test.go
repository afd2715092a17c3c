package jobs

import (
	"context"
	"fmt"
	"regexp"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	batchv1beta1 "github.com/accelstack/accelstack/api/batch/v1beta1"
	"github.com/accelstack/accelstack/pkg/jobs"
	"github.com/accelstack/accelstack/pkg/jobs/beamjob"
	"github.com/accelstack/accelstack/test/testutil"
)

// beamClusterSpec is the manual's Flink cluster: 1 job manager, 2 task
// managers.
const beamClusterSpec = `{"flinkVersion":"1.10.1","image":{"name":"t9kpublic/flink:1.10.1"},
"jobManager":{"accessScope":"Cluster","resources":{"limits":{"cpu":"100m","memory":"1Gi"}}},
"taskManager":{"replicas":2,"resources":{"limits":{"cpu":"100m","memory":"2Gi"}}},
"flinkProperties":{"taskmanager.numberOfTaskSlots":"1"}}`

// beamJob returns a BeamJob of the manual's cluster whose submitter runs
// restartPolicy Never pods, retried backoffLimit times.
func beamJob(ns, name string, cleanUp bool, backoffLimit int32) *batchv1beta1.BeamJob {
	pod := template(container("submit-job", "python3", "-m", "apache_beam.examples.wordcount"))
	pod.Spec.RestartPolicy = corev1.RestartPolicyNever
	return &batchv1beta1.BeamJob{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: batchv1beta1.BeamJobSpec{
			FlinkClusterTemplate: batchv1beta1.FlinkClusterTemplate{
				Metadata: metav1.ObjectMeta{Labels: map[string]string{"team": "beam"}},
				Spec:     runtime.RawExtension{Raw: []byte(beamClusterSpec)},
			},
			JobTemplate: &batchv1.JobTemplateSpec{Spec: batchv1.JobSpec{BackoffLimit: ptr.To(backoffLimit), Template: pod}},
			RunPolicy:   batchv1beta1.BeamRunPolicy{CleanUpCluster: cleanUp},
		},
	}
}

// waitBeam waits until cond holds for the BeamJob.
func (e *env) waitBeam(ctx context.Context, t *testing.T, bj *batchv1beta1.BeamJob, what string, cond func(*batchv1beta1.BeamJobStatus) bool) {
	t.Helper()
	testutil.Poll(ctx, t, bj.Name+" "+what, func() (bool, string, error) {
		if err := e.c.Get(ctx, client.ObjectKeyFromObject(bj), bj); err != nil {
			return false, "", err
		}
		return cond(&bj.Status), fmt.Sprintf("%+v", bj.Status), nil
	})
}

// beamCondition returns condition typ of s, or a zero one.
func beamCondition(s *batchv1beta1.BeamJobStatus, typ batchv1beta1.JobConditionType) batchv1beta1.JobCondition {
	for _, c := range s.Conditions {
		if c.Type == typ {
			return c
		}
	}
	return batchv1beta1.JobCondition{}
}

// submitters returns the batch Jobs of the namespace.
func (e *env) submitters(ctx context.Context, t *testing.T, ns string) []batchv1.Job {
	t.Helper()
	var list batchv1.JobList
	if err := e.c.List(ctx, &list, client.InNamespace(ns)); err != nil {
		t.Fatal(err)
	}
	return list.Items
}

// submitterPods returns the pods of a submitter Job, oldest first.
func (e *env) submitterPods(ctx context.Context, t *testing.T, job *batchv1.Job) []corev1.Pod {
	t.Helper()
	var list corev1.PodList
	if err := e.c.List(ctx, &list, client.InNamespace(job.Namespace), client.MatchingLabels{batchv1.ControllerUidLabel: string(job.UID)}); err != nil {
		t.Fatal(err)
	}
	return list.Items
}

// waitSubmitterPod waits for the n-th pod (from 1) of a submitter Job.
func (e *env) waitSubmitterPod(ctx context.Context, t *testing.T, job *batchv1.Job, n int) *corev1.Pod {
	t.Helper()
	var pods []corev1.Pod
	testutil.Poll(ctx, t, fmt.Sprintf("pod %d of %s", n, job.Name), func() (bool, string, error) {
		pods = e.submitterPods(ctx, t, job)
		return len(pods) >= n, fmt.Sprintf("%d pods", len(pods)), nil
	})
	for i := range pods {
		if pods[i].Status.Phase == "" || pods[i].Status.Phase == corev1.PodPending {
			return &pods[i]
		}
	}
	t.Fatalf("no pending pod among %d", len(pods))
	return nil
}

// podRefs returns the phase and reference of pods, as the status has them.
func podRefs(pods ...*corev1.Pod) []batchv1beta1.PodStatus {
	var out []batchv1beta1.PodStatus
	for _, p := range pods {
		out = append(out, batchv1beta1.PodStatus{Phase: p.Status.Phase, Reference: batchv1beta1.PodReference{Name: p.Name, UID: string(p.UID)}})
	}
	return out
}

// clusterPodRefs returns the running job and task managers of a cluster
// as the status should name them.
func (e *env) clusterPodRefs(ctx context.Context, t *testing.T, ns, cluster string, tm int) batchv1beta1.FlinkClusterStatus {
	t.Helper()
	get := func(name string) *corev1.Pod {
		p := &corev1.Pod{}
		if err := e.c.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, p); err != nil {
			t.Fatal(err)
		}
		return p
	}
	out := batchv1beta1.FlinkClusterStatus{JobManagerStatus: podRefs(get(cluster + "-jobmanager-0"))}
	for i := range tm {
		out.TaskManagerStatus = append(out.TaskManagerStatus, podRefs(get(fmt.Sprintf("%s-taskmanager-%d", cluster, i)))...)
	}
	return out
}

var submitterName = regexp.MustCompile(`^[a-z0-9-]+-batchjob-[a-z0-9]{5}$`)

// startBeamCluster checks the FlinkCluster the BeamJob made and that no
// submitter exists while it is Creating; then it runs the cluster (pods,
// job manager Service, state Running) and returns the submitter Job made
// then.
func (e *env) startBeamCluster(ctx context.Context, t *testing.T, bj *batchv1beta1.BeamJob, jm *flinkJobManager) (*unstructured.Unstructured, *batchv1.Job) {
	t.Helper()
	ns, cluster := bj.Namespace, beamjob.ClusterName(bj.Name)
	var fc *unstructured.Unstructured
	testutil.Poll(ctx, t, "FlinkCluster "+cluster, func() (bool, string, error) {
		fc = e.flinkCluster(ctx, t, ns, bj.Name)
		return fc != nil, "", nil
	})
	checkClusterObject(t, bj, fc)
	e.setClusterState(ctx, t, fc, "Creating")
	e.waitBeam(ctx, t, bj, "sees the cluster Creating", func(s *batchv1beta1.BeamJobStatus) bool {
		return beamCondition(s, batchv1beta1.BeamClusterRunning).Reason == "ClusterCreating"
	})
	if s := bj.Status; s.Phase != batchv1beta1.BeamJobInitializing || beamCondition(&s, batchv1beta1.BeamClusterRunning).Status != corev1.ConditionFalse ||
		beamCondition(&s, batchv1beta1.BeamJobRunningCond).Status != corev1.ConditionFalse || s.StartTime == nil {
		t.Errorf("status while the cluster is Creating: %+v", s)
	}
	if jobs := e.submitters(ctx, t, ns); len(jobs) != 0 {
		t.Fatalf("a batch Job before the cluster runs: %s", jobs[0].Name)
	}

	e.startFlinkPods(ctx, t, fc, jm)
	e.setClusterState(ctx, t, fc, beamjob.ClusterStateRunning)
	var job *batchv1.Job
	testutil.Poll(ctx, t, "submitter Job", func() (bool, string, error) {
		list := e.submitters(ctx, t, ns)
		if len(list) > 1 {
			return false, "", fmt.Errorf("%d submitter Jobs", len(list))
		}
		if len(list) == 1 {
			job = &list[0]
		}
		return job != nil, "", nil
	})
	checkSubmitter(t, bj, job)
	return fc, job
}

// checkClusterObject checks a BeamJob's FlinkCluster against its template.
func checkClusterObject(t *testing.T, bj *batchv1beta1.BeamJob, fc *unstructured.Unstructured) {
	t.Helper()
	if !metav1.IsControlledBy(fc, bj) {
		t.Errorf("FlinkCluster owners %+v", fc.GetOwnerReferences())
	}
	if l := fc.GetLabels(); l["team"] != "beam" || l[jobs.JobNameLabel] != bj.Name || l[jobs.ComponentLabel] != beamjob.Component {
		t.Errorf("FlinkCluster labels %v", l)
	}
	for path, want := range map[string]any{
		"flinkVersion": "1.10.1", "image.name": "t9kpublic/flink:1.10.1", "jobManager.accessScope": "Cluster",
		"jobManager.resources.limits.memory": "1Gi", "taskManager.replicas": int64(2), "taskManager.resources.limits.memory": "2Gi",
		"flinkProperties.taskmanager\\.numberOfTaskSlots": "1", "jobManager.podLabels.beamjob": bj.Name, "taskManager.podLabels.beamjob": bj.Name,
	} {
		fields := append([]string{"spec"}, splitPath(path)...)
		got, _, _ := unstructured.NestedFieldNoCopy(fc.Object, fields...)
		if got != want {
			t.Errorf("FlinkCluster %s = %v, want %v", path, got, want)
		}
	}
	if _, ok := fc.Object["spec"].(map[string]any)["job"]; ok {
		t.Error("the FlinkCluster has a spec.job: not a session cluster")
	}
}

// splitPath splits a dotted path, "\." standing for a dot in a key.
func splitPath(p string) []string {
	parts := strings.Split(strings.ReplaceAll(p, `\.`, "\x00"), ".")
	for i := range parts {
		parts[i] = strings.ReplaceAll(parts[i], "\x00", ".")
	}
	return parts
}

// checkSubmitter checks the submitter Job against the job template.
func checkSubmitter(t *testing.T, bj *batchv1beta1.BeamJob, job *batchv1.Job) {
	t.Helper()
	if !submitterName.MatchString(job.Name) || !strings.HasPrefix(job.Name, bj.Name+"-batchjob-") {
		t.Errorf("submitter name %q", job.Name)
	}
	if !metav1.IsControlledBy(job, bj) {
		t.Errorf("submitter owners %+v", job.OwnerReferences)
	}
	want := bj.Spec.JobTemplate.Spec.Template.Spec.Containers
	if diff := cmp.Diff(want[0].Command, job.Spec.Template.Spec.Containers[0].Command); diff != "" || len(job.Spec.Template.Spec.Containers) != len(want) {
		t.Errorf("submitter containers differ from the template (-want +got):\n%s", diff)
	}
	if *job.Spec.BackoffLimit != *bj.Spec.JobTemplate.Spec.BackoffLimit {
		t.Errorf("submitter backoffLimit %d", *job.Spec.BackoffLimit)
	}
	if l := job.Spec.Template.Labels; l[jobs.JobNameLabel] != bj.Name || l[jobs.ComponentLabel] != beamjob.Component {
		t.Errorf("submitter pod labels %v", l)
	}
}

// testBeamJobSucceeded: the FlinkCluster from the template, no submitter
// until it runs, then the submitter from jobTemplate; Running with both
// conditions, the pods of the cluster and the submitter, and the Flink
// job's URL; Succeeded with the Job, and the cluster kept
// (cleanUpCluster false).
func testBeamJobSucceeded(t *testing.T, e *env) {
	ctx := testutil.SubtestContext(t)
	ns := e.namespace(t, nil)
	bj := beamJob(ns, "wordcount", false, 0)
	if err := e.c.Create(ctx, bj); err != nil {
		t.Fatal(err)
	}
	jm := startFlinkJobManager(t, "c9f62e4d61d089f351ab1f8b29e1df32")
	fc, job := e.startBeamCluster(ctx, t, bj, jm)

	pod := e.waitSubmitterPod(ctx, t, job, 1)
	e.setPod(ctx, t, pod, corev1.PodRunning, nil)
	e.get(ctx, t, pod)
	e.waitBeam(ctx, t, bj, "running", func(s *batchv1beta1.BeamJobStatus) bool {
		return s.Phase == batchv1beta1.BeamJobRunning && beamCondition(s, batchv1beta1.BeamJobRunningCond).Status == corev1.ConditionTrue &&
			(jm == nil || s.JobURL != "")
	})
	s := bj.Status
	if c := beamCondition(&s, batchv1beta1.BeamClusterRunning); c.Status != corev1.ConditionTrue {
		t.Errorf("ClusterRunning %+v", c)
	}
	if diff := cmp.Diff(e.clusterPodRefs(ctx, t, ns, fc.GetName(), 2), s.FlinkClusterStatus); diff != "" {
		t.Errorf("flinkClusterStatus (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(podRefs(pod), s.JobStatus); diff != "" {
		t.Errorf("jobStatus (-want +got):\n%s", diff)
	}
	if jm == nil {
		t.Log("no host address but loopback ones: the job URL is not checked")
	} else if want := "/t9k/flink-cluster/wordcount-flinkcluster/namespace/" + ns + "/#/job/" + jm.jobID + "/overview/"; s.JobURL != want {
		t.Errorf("jobURL %q, want %q", s.JobURL, want)
	}

	e.setPod(ctx, t, pod, corev1.PodSucceeded, nil)
	e.get(ctx, t, pod)
	e.waitBeam(ctx, t, bj, "succeeded", func(s *batchv1beta1.BeamJobStatus) bool { return s.Phase == batchv1beta1.BeamJobSucceeded })
	s = bj.Status
	if c := beamCondition(&s, batchv1beta1.BeamJobRunningCond); c.Status != corev1.ConditionFalse || c.Reason != "JobSucceeded" {
		t.Errorf("JobRunning %+v", c)
	}
	if diff := cmp.Diff(podRefs(pod), s.JobStatus); diff != "" {
		t.Errorf("jobStatus (-want +got):\n%s", diff)
	}
	if s.CompletionTime == nil {
		t.Error("no completionTime")
	}
	if e.flinkCluster(ctx, t, ns, bj.Name) == nil {
		t.Error("the FlinkCluster was deleted, cleanUpCluster being false")
	}
}

// testBeamJobFailed: a submitter whose pods fail until its backoffLimit
// runs out fails the BeamJob; every pod is in jobStatus; cleanUpCluster
// deletes the FlinkCluster.
func testBeamJobFailed(t *testing.T, e *env) {
	ctx := testutil.SubtestContext(t)
	ns := e.namespace(t, nil)
	bj := beamJob(ns, "fails", true, 1)
	if err := e.c.Create(ctx, bj); err != nil {
		t.Fatal(err)
	}
	_, job := e.startBeamCluster(ctx, t, bj, nil)
	first := e.waitSubmitterPod(ctx, t, job, 1)
	e.setPod(ctx, t, first, corev1.PodFailed, map[string]int32{"submit-job": 1})
	second := e.waitSubmitterPod(ctx, t, job, 2)
	e.setPod(ctx, t, second, corev1.PodRunning, nil)
	e.waitBeam(ctx, t, bj, "running again", func(s *batchv1beta1.BeamJobStatus) bool {
		return beamCondition(s, batchv1beta1.BeamJobRunningCond).Status == corev1.ConditionTrue && len(s.JobStatus) == 2
	})
	if bj.Status.Phase != batchv1beta1.BeamJobRunning {
		t.Errorf("phase %s after a retry", bj.Status.Phase)
	}
	e.setPod(ctx, t, second, corev1.PodFailed, map[string]int32{"submit-job": 1})
	e.waitBeam(ctx, t, bj, "failed", func(s *batchv1beta1.BeamJobStatus) bool { return s.Phase == batchv1beta1.BeamJobFailed })
	e.get(ctx, t, first)
	e.get(ctx, t, second)
	if diff := cmp.Diff(podRefs(first, second), bj.Status.JobStatus); diff != "" {
		t.Errorf("jobStatus (-want +got):\n%s", diff)
	}
	if c := beamCondition(&bj.Status, batchv1beta1.BeamJobRunningCond); c.Status != corev1.ConditionFalse || c.Reason != "JobFailed" {
		t.Errorf("JobRunning %+v", c)
	}
	testutil.Poll(ctx, t, "FlinkCluster deleted", func() (bool, string, error) {
		return e.flinkCluster(ctx, t, ns, bj.Name) == nil, "", nil
	})
	e.waitEvent(ctx, t, ns, bj.Name, "ClusterDeleted", beamjob.ClusterName(bj.Name))
}

// testBeamJobRefused: a BeamJob without jobTemplate is refused, naming the
// field.
func testBeamJobRefused(t *testing.T, e *env) {
	ctx := testutil.SubtestContext(t)
	ns := e.namespace(t, nil)
	bj := beamJob(ns, "nojob", false, 0)
	bj.Spec.JobTemplate = nil
	err := e.c.Create(ctx, bj)
	if err == nil || !strings.Contains(err.Error(), "spec.jobTemplate") || !strings.Contains(err.Error(), "Required") {
		t.Fatalf("creating a BeamJob without jobTemplate: %v", err)
	}
}

// checkSeedBeamJob checks what the controller made of the manual's
// BeamJob: its FlinkCluster, and the job Initializing until that runs.
func checkSeedBeamJob(ctx context.Context, t *testing.T, e *env, bj *batchv1beta1.BeamJob) {
	t.Helper()
	e.waitBeam(ctx, t, bj, "initializing", func(s *batchv1beta1.BeamJobStatus) bool {
		return s.Phase == batchv1beta1.BeamJobInitializing && beamCondition(s, batchv1beta1.BeamClusterRunning).Type != ""
	})
	fc := e.flinkCluster(ctx, t, bj.Namespace, bj.Name)
	if fc == nil {
		t.Fatal("no FlinkCluster")
	}
	if tm, _, _ := unstructured.NestedInt64(fc.Object, "spec", "taskManager", "replicas"); tm != 2 {
		t.Errorf("FlinkCluster taskManager.replicas %d", tm)
	}
}
