package jobs

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/controller-runtime/pkg/client"

	batchv1beta1 "github.com/accelstack/accelstack/api/batch/v1beta1"
	"github.com/accelstack/accelstack/pkg/accelerator"
	"github.com/accelstack/accelstack/pkg/jobkind"
	"github.com/accelstack/accelstack/pkg/ranktable"
)

// fakeKind decorates pods with one variable and a rewritten command.
type fakeKind struct{}

func (fakeKind) Component() string                                     { return "fakejob" }
func (fakeKind) Info() jobkind.Info                                    { return jobkind.Info{} }
func (fakeKind) NewObject() client.Object                              { return &batchv1beta1.PyTorchTrainingJob{} }
func (fakeKind) View(client.Object) *Job                               { return nil }
func (fakeKind) Validate(client.Object, client.Object) field.ErrorList { return nil }
func (fakeKind) Outcome(*Job, *States) Outcome                         { return Outcome{} }
func (fakeKind) Decorate(pod *corev1.Pod, r *Replica, rank int32, _ *Job) []string {
	SetEnvAll(pod, corev1.EnvVar{Name: "FAKE_RANK", Value: r.Type})
	c := MainContainer(&pod.Spec, r.MainContainer)
	c.Command = append([]string{"launch"}, c.Command...)
	return []string{"note"}
}

func testScheme(t *testing.T) *runtime.Scheme {
	s := runtime.NewScheme()
	if err := batchv1beta1.AddToScheme(s); err != nil {
		t.Fatal(err)
	}
	return s
}

func TestNewPod(t *testing.T) {
	job := testJob(batchv1beta1.ReplicaRestartOnFailure, nil, "worker", 2)
	r := &job.Replicas[0]
	r.MainContainer = "main"
	r.Template.Labels = map[string]string{"app": "x"}
	r.Template.Spec.RestartPolicy = corev1.RestartPolicyAlways
	r.Template.Spec.InitContainers = []corev1.Container{{Name: "init"}}
	r.Template.Spec.Containers = []corev1.Container{
		{Name: "sidecar", Command: []string{"side"}},
		{Name: "main", Command: []string{"python", "train.py"}, Args: []string{"--x"}, Env: []corev1.EnvVar{{Name: "FAKE_RANK", Value: "mine"}}},
	}
	pod, notes, err := newPod(fakeKind{}, job, r, 1, testScheme(t))
	if err != nil {
		t.Fatal(err)
	}
	if pod.Name != "j-worker-1" || pod.Namespace != "ns" || pod.Spec.RestartPolicy != corev1.RestartPolicyNever || !cmp.Equal(notes, []string{"note"}) {
		t.Errorf("pod %s/%s restartPolicy %s notes %v", pod.Namespace, pod.Name, pod.Spec.RestartPolicy, notes)
	}
	want := map[string]string{"app": "x", JobNameLabel: "j", ComponentLabel: "fakejob", "fakejob": "j", "fakejob-replica": "j-worker-1",
		ComponentTypeLabel: "user", ReplicaTypeLabel: "worker", ReplicaIndexLabel: "1"}
	if diff := cmp.Diff(want, pod.Labels); diff != "" {
		t.Errorf("labels (-want +got):\n%s", diff)
	}
	if main := pod.Spec.Containers[1]; !cmp.Equal(main.Command, []string{"launch", "python", "train.py"}) || main.Env[0].Value != "mine" {
		t.Errorf("main container %+v: the kind's decoration, the user's variable kept", main)
	}
	if ref := pod.OwnerReferences; len(ref) != 1 || ref[0].Kind != "PyTorchTrainingJob" || ref[0].UID != "job-uid" || !*ref[0].Controller {
		t.Errorf("owner %+v", ref)
	}
	if r.Template.Spec.RestartPolicy != corev1.RestartPolicyAlways || len(r.Template.Spec.Containers[1].Command) != 2 {
		t.Error("the template was changed")
	}
}

func TestNewPodRunModes(t *testing.T) {
	job := testJob(batchv1beta1.ReplicaRestartOnFailure, nil, "master", 1, "worker", 1)
	for i := range job.Replicas {
		job.Replicas[i].Template.Spec.InitContainers = []corev1.Container{{Name: "init"}}
		job.Replicas[i].Template.Spec.Containers[0].Command = []string{"python", "train.py"}
		job.Replicas[i].Template.Spec.Containers[0].Args = []string{"--epochs=3"}
	}
	job.RunMode = &batchv1beta1.RunMode{
		Pause: &batchv1beta1.PauseMode{ResumeSpecs: []batchv1beta1.ResumeSpec{{Type: "worker", SkipInitContainer: true, Args: []string{"--resume"}}}},
	}
	scheme := testScheme(t)

	// Not yet paused: resumeSpecs do not apply.
	pod, _, _ := newPod(fakeKind{}, job, &job.Replicas[1], 0, scheme)
	if c := pod.Spec.Containers[0]; !cmp.Equal(c.Args, []string{"--epochs=3"}) || len(pod.Spec.InitContainers) != 1 {
		t.Errorf("before pausing: args %q init %d", c.Args, len(pod.Spec.InitContainers))
	}
	// Resumed: they do, before the kind's decoration.
	setCondition(job.Status, batchv1beta1.JobPausedCond, corev1.ConditionFalse, reasonResumed, msgResumed, metav1.Unix(1, 0))
	pod, _, _ = newPod(fakeKind{}, job, &job.Replicas[1], 0, scheme)
	if c := pod.Spec.Containers[0]; !cmp.Equal(c.Command, []string{"launch", "python", "train.py"}) || !cmp.Equal(c.Args, []string{"--resume"}) || len(pod.Spec.InitContainers) != 0 {
		t.Errorf("resumed worker: command %q args %q init %d", c.Command, c.Args, len(pod.Spec.InitContainers))
	}
	pod.Spec.Containers[0].Args[0] = "--changed"
	if a := job.RunMode.Pause.ResumeSpecs[0].Args; a[0] != "--resume" {
		t.Errorf("the pod shares its args with resumeSpecs: %q", a)
	}
	pod, _, _ = newPod(fakeKind{}, job, &job.Replicas[0], 0, scheme)
	if c := pod.Spec.Containers[0]; !cmp.Equal(c.Args, []string{"--epochs=3"}) || len(pod.Spec.InitContainers) != 1 {
		t.Errorf("resumed master, not in resumeSpecs: args %q init %d", c.Args, len(pod.Spec.InitContainers))
	}

	// Debug: after the decoration, the environment stays.
	job.RunMode.Debug = &batchv1beta1.DebugMode{Enabled: true, ReplicaSpecs: []batchv1beta1.ReplicaDebugSet{{Type: "master", SkipInitContainer: true, Command: []string{"sshd"}}}}
	pod, _, _ = newPod(fakeKind{}, job, &job.Replicas[0], 0, scheme)
	if c := pod.Spec.Containers[0]; !cmp.Equal(c.Command, []string{"sshd"}) || c.Args != nil || len(pod.Spec.InitContainers) != 0 || c.Env[0].Name != "FAKE_RANK" {
		t.Errorf("debug master: %+v init %d", c, len(pod.Spec.InitContainers))
	}
	pod, _, _ = newPod(fakeKind{}, job, &job.Replicas[1], 0, scheme)
	if c := pod.Spec.Containers[0]; !cmp.Equal(c.Command, DefaultDebugCommand) || c.Args != nil {
		t.Errorf("debug worker: %+v", c)
	}
}

func TestNewPodSchedulerAndAscend(t *testing.T) {
	job := testJob(batchv1beta1.ReplicaRestartOnFailure, nil, "worker", 1)
	job.Scheduler = &batchv1beta1.SchedulePolicy{T9kScheduler: &batchv1beta1.T9kScheduler{Queue: "gpu", Priority: 50}}
	c := &job.Replicas[0].Template.Spec.Containers[0]
	c.Resources.Limits = corev1.ResourceList{accelerator.Ascend910: resource.MustParse("8")}
	pod, _, err := newPod(fakeKind{}, job, &job.Replicas[0], 0, testScheme(t))
	if err != nil {
		t.Fatal(err)
	}
	if pod.Spec.SchedulerName != SchedulerName || pod.Labels[GroupNameLabel] != "j" || pod.Labels[QueueLabel] != "gpu" || pod.Labels[RoleLabel] != "worker" {
		t.Errorf("scheduler %q labels %v", pod.Spec.SchedulerName, pod.Labels)
	}
	if pod.Labels[ranktable.RingControllerLabel] != ranktable.ChipTypeAscend910 {
		t.Errorf("labels %v", pod.Labels)
	}
	wantMount := corev1.VolumeMount{Name: ranktable.VolumeName, MountPath: ranktable.MountPath, ReadOnly: true}
	if m := pod.Spec.Containers[0].VolumeMounts; len(m) != 1 || !cmp.Equal(m[0], wantMount) {
		t.Errorf("mounts %+v", m)
	}
	if v := pod.Spec.Volumes; len(v) != 1 || v[0].ConfigMap == nil || v[0].ConfigMap.Name != "rings-config-j" {
		t.Errorf("volumes %+v", v)
	}
	if !usesAscend(job) || gang(job) != 1 {
		t.Error("usesAscend or gang")
	}
}
