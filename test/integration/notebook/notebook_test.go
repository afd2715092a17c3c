package notebook

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/util/retry"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	schedulerv1beta1 "github.com/accelstack/accelstack/api/scheduler/v1beta1"
	tensorstackv1beta1 "github.com/accelstack/accelstack/api/tensorstack/v1beta1"
	"github.com/accelstack/accelstack/pkg/activity"
	"github.com/accelstack/accelstack/pkg/notebook"
	"github.com/accelstack/accelstack/test/testutil"
)

func resourceQuantity(s string) resource.Quantity { return resource.MustParse(s) }

// TestNotebook runs every test against one control plane.
func TestNotebook(t *testing.T) {
	e := startEnv(t)
	t.Run("group", func(t *testing.T) {
		for name, test := range map[string]func(*testing.T){
			"Objects":           e.testObjects,
			"Status":            e.testStatus,
			"SuspendResume":     e.testSuspendResume,
			"SSHServiceChanges": e.testSSHServiceChanges,
			"Refused":           e.testRefused,
			"WrongTypeSecret":   e.testWrongTypeSecret,
			"RStudioAndQueue":   e.testRStudioAndQueue,
			"ManualRunning":     e.testManualRunning,
			"ManualSuspended":   e.testManualSuspended,
		} {
			t.Run(name, func(t *testing.T) {
				t.Parallel()
				test(t)
			})
		}
	})

	// Stale reads and conflicts are retried quietly, not reported.
	for _, line := range strings.Split(e.controllers.Log(), "\n") {
		if strings.Contains(line, "Reconciler error") && strings.Contains(line, `"notebook"`) {
			t.Errorf("the controller failed: %s", line)
		}
	}
}

// testObjects: the seed's SSH notebook gets its StatefulSet, Service and SSH
// Service, the public key mounted, and its status.
func (e *env) testObjects(t *testing.T) {
	ctx := testutil.SubtestContext(t)
	ns := e.namespace(t)
	testutil.MustCreate(ctx, t, e.c, sshSecret(ns, "example-user", notebook.SSHSecretType))
	nb := seedNotebook(ns, "tutorial")
	testutil.MustCreate(ctx, t, e.c, nb)
	name := notebook.ObjectName(nb.UID)
	prefix := "/t9k/notebooks/projects/" + ns + "/name/tutorial/"

	sts := e.statefulSet(ctx, t, ns, nb.Name, nil)
	if ptr.Deref(sts.Spec.Replicas, 0) != 1 || sts.Spec.ServiceName != name || !metav1.IsControlledBy(sts, nb) {
		t.Errorf("StatefulSet %s: replicas %v serviceName %s owners %+v", sts.Name, sts.Spec.Replicas, sts.Spec.ServiceName, sts.OwnerReferences)
	}
	if diff := cmp.Diff(map[string]string{notebook.NotebookLabelKey: name}, sts.Spec.Selector.MatchLabels); diff != "" {
		t.Errorf("selector (-want +got):\n%s", diff)
	}
	spec := sts.Spec.Template.Spec
	if len(spec.Containers) != 2 || spec.Containers[0].Name != "notebook" || spec.Containers[1].Name != activity.ContainerName {
		t.Fatalf("containers %+v", spec.Containers)
	}
	nbc, side := spec.Containers[0], spec.Containers[1]
	if diff := cmp.Diff([]corev1.EnvVar{{Name: "NB_PREFIX", Value: strings.TrimSuffix(prefix, "/")}}, nbc.Env); diff != "" {
		t.Errorf("notebook env (-want +got):\n%s", diff)
	}
	if side.Image != activity.DefaultImage || side.Args[0] != "--upstream=http://127.0.0.1:8888" {
		t.Errorf("sidecar %s %q", side.Image, side.Args)
	}
	if ptr.Deref(spec.SecurityContext.FSGroup, 0) != 1000 || spec.RestartPolicy != corev1.RestartPolicyAlways {
		t.Errorf("fsGroup %v restartPolicy %s", spec.SecurityContext.FSGroup, spec.RestartPolicy)
	}
	// The public key only, by reference, read-only; no value in the spec.
	var keys *corev1.Volume
	for i := range spec.Volumes {
		if spec.Volumes[i].Projected != nil {
			keys = &spec.Volumes[i]
		}
	}
	if keys == nil || len(keys.Projected.Sources) != 1 || keys.Projected.Sources[0].Secret.Name != "example-user" ||
		!cmp.Equal(keys.Projected.Sources[0].Secret.Items, []corev1.KeyToPath{{Key: "ssh-publickey", Path: "example-user"}}) {
		t.Fatalf("keys volume %+v", keys)
	}
	mounted := false
	for _, m := range nbc.VolumeMounts {
		mounted = mounted || (m.Name == keys.Name && m.MountPath == notebook.SSHKeysDir && m.ReadOnly)
	}
	if !mounted {
		t.Errorf("notebook mounts %+v, want the keys at %s read-only", nbc.VolumeMounts, notebook.SSHKeysDir)
	}
	if strings.Contains(fmt.Sprintf("%+v", sts.Spec), "AAAAC3") {
		t.Error("the public key's value is in the StatefulSet")
	}

	svc := &corev1.Service{}
	e.waitFor(ctx, t, ns, name, svc)
	want := []corev1.ServicePort{{Name: "http", Port: 80, TargetPort: intstr.FromInt32(8080), Protocol: corev1.ProtocolTCP}}
	if diff := cmp.Diff(want, svc.Spec.Ports); diff != "" || svc.Spec.Type != corev1.ServiceTypeClusterIP {
		t.Errorf("Service %s type %s ports (-want +got):\n%s", name, svc.Spec.Type, diff)
	}
	ssh := &corev1.Service{}
	e.waitFor(ctx, t, ns, name+"-ssh", ssh)
	if p := ssh.Spec.Ports; ssh.Spec.Type != corev1.ServiceTypeClusterIP || len(p) != 1 || p[0].Port != 22 || p[0].TargetPort != intstr.FromInt32(2222) {
		t.Errorf("SSH Service type %s ports %+v", ssh.Spec.Type, p)
	}
	for _, s := range []*corev1.Service{svc, ssh} {
		if diff := cmp.Diff(map[string]string{notebook.NotebookLabelKey: name}, s.Spec.Selector); diff != "" {
			t.Errorf("%s selector (-want +got):\n%s", s.Name, diff)
		}
	}

	// The sidecar requires the Notebook's access token; the NetworkPolicy
	// admits the platform's namespaces, and anyone to sshd.
	testutil.CheckAccess(ctx, t, e.c, testutil.Access{
		Namespace: ns, Name: name, Owner: nb, Selector: map[string]string{notebook.NotebookLabelKey: name},
		Pod: spec, Log: e.controllers.Log,
	})
	np := &networkingv1.NetworkPolicy{}
	e.waitFor(ctx, t, ns, name, np)
	if len(np.Spec.Ingress) != 2 || len(np.Spec.Ingress[1].From) != 0 || np.Spec.Ingress[1].Ports[0].Port.IntValue() != 2222 {
		t.Errorf("NetworkPolicy ingress %+v, want sshd open to all", np.Spec.Ingress)
	}

	got := e.waitNotebook(ctx, t, ns, nb.Name, "SSH status with the cluster IP", func(nb *tensorstackv1beta1.Notebook) bool {
		return nb.Status.SSH != nil && nb.Status.SSH.ClusterIP != ""
	})
	wantSSH := &tensorstackv1beta1.NotebookSSHStatus{ServiceName: name + "-ssh", Port: 22, ClusterIP: ssh.Spec.ClusterIP, Protocol: corev1.ProtocolTCP}
	if diff := cmp.Diff(wantSSH, got.Status.SSH); diff != "" {
		t.Errorf("status.ssh (-want +got):\n%s", diff)
	}
	if got.Status.URL != "http://"+name+"."+ns+".svc.cluster.local"+prefix {
		t.Errorf("status.url %q", got.Status.URL)
	}
	if got.Status.Phase != tensorstackv1beta1.NotebookPending || got.Status.Pod != nil {
		t.Errorf("phase %s pod %+v before any pod", got.Status.Phase, got.Status.Pod)
	}
	if r := condition(got, tensorstackv1beta1.ConditionReady); r.Status != corev1.ConditionFalse || r.Reason != notebook.ReasonWaiting {
		t.Errorf("Ready %+v", r)
	}
	if c := condition(got, notebook.ConditionSSHReady); c.Status != corev1.ConditionTrue {
		t.Errorf("SSHReady %+v", c)
	}
	if note := e.waitEvent(ctx, t, ns, nb.Name, notebook.EventCreated); !strings.Contains(note, "Created") {
		t.Errorf("event note %q", note)
	}
}

// testStatus: the status follows the pod the tests create and write, and
// keeps the Resource Keeper's Idle condition.
func (e *env) testStatus(t *testing.T) {
	ctx := testutil.SubtestContext(t)
	ns := e.namespace(t)
	nb := seedNotebook(ns, "status")
	nb.Spec.SSH = nil
	testutil.MustCreate(ctx, t, e.c, nb)
	sts := e.statefulSet(ctx, t, ns, nb.Name, nil)
	pod := e.createPod(ctx, t, sts)

	e.setPodStatus(ctx, t, pod, corev1.PodRunning, true, corev1.ContainerState{Running: &corev1.ContainerStateRunning{}})
	got := e.waitNotebook(ctx, t, ns, nb.Name, "Running and Ready", func(nb *tensorstackv1beta1.Notebook) bool {
		return nb.Status.Phase == tensorstackv1beta1.NotebookRunning && condition(nb, tensorstackv1beta1.ConditionReady).Status == corev1.ConditionTrue
	})
	p := &corev1.Pod{}
	e.waitFor(ctx, t, ns, pod.Name, p)
	wantPod := &tensorstackv1beta1.PodStatus{Reference: tensorstackv1beta1.PodReference{Name: pod.Name, UID: p.UID}, Phase: corev1.PodRunning, Status: "Running"}
	if diff := cmp.Diff(wantPod, got.Status.Pod); diff != "" {
		t.Errorf("status.pod (-want +got):\n%s", diff)
	}
	if got.Status.SSH != nil || condition(got, notebook.ConditionSSHReady).Type != "" {
		t.Errorf("SSH status %+v without SSH", got.Status.SSH)
	}

	// The Resource Keeper writes Idle; the controller keeps it.
	idle := tensorstackv1beta1.WorkloadCondition{
		Type: tensorstackv1beta1.ConditionIdle, Status: corev1.ConditionTrue, Reason: "NoActivity", Message: "No request for 1h",
		LastTransitionTime: metav1.NewTime(time.Now().Truncate(time.Second)), LastProbeTime: metav1.NewTime(time.Now().Truncate(time.Second)),
	}
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		cur := e.notebook(ctx, t, ns, nb.Name)
		cur.Status.Conditions = append(cur.Status.Conditions, idle)
		return e.c.Status().Update(ctx, cur)
	})
	if err != nil {
		t.Fatal(err)
	}
	e.setPodStatus(ctx, t, pod, corev1.PodPending, false, corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "ImagePullBackOff", Message: "Back-off pulling image"}})
	got = e.waitNotebook(ctx, t, ns, nb.Name, "Failed on ImagePullBackOff", func(nb *tensorstackv1beta1.Notebook) bool {
		return nb.Status.Phase == tensorstackv1beta1.NotebookFailed
	})
	if r := condition(got, tensorstackv1beta1.ConditionReady); r.Status != corev1.ConditionFalse || r.Reason != notebook.ReasonPodFailed || !strings.Contains(r.Message, "ImagePullBackOff") {
		t.Errorf("Ready %+v", r)
	}
	if diff := cmp.Diff(idle, condition(got, tensorstackv1beta1.ConditionIdle)); diff != "" {
		t.Errorf("Idle (-want +got):\n%s", diff)
	}
	if got.Status.Pod.Status != "ImagePullBackOff" {
		t.Errorf("status.pod.status %q", got.Status.Pod.Status)
	}
}

// testSuspendResume: suspend scales the StatefulSet to 0 and keeps the
// Services; resume brings the pod back.
func (e *env) testSuspendResume(t *testing.T) {
	ctx := testutil.SubtestContext(t)
	ns := e.namespace(t)
	testutil.MustCreate(ctx, t, e.c, sshSecret(ns, "example-user", notebook.SSHSecretType))
	nb := seedNotebook(ns, "suspend")
	testutil.MustCreate(ctx, t, e.c, nb)
	sts := e.statefulSet(ctx, t, ns, nb.Name, nil)
	pod := e.createPod(ctx, t, sts)
	e.setPodStatus(ctx, t, pod, corev1.PodRunning, true, corev1.ContainerState{Running: &corev1.ContainerStateRunning{}})
	e.waitNotebook(ctx, t, ns, nb.Name, "Running", func(nb *tensorstackv1beta1.Notebook) bool {
		return nb.Status.Phase == tensorstackv1beta1.NotebookRunning
	})

	e.update(ctx, t, ns, nb.Name, func(nb *tensorstackv1beta1.Notebook) { nb.Spec.Suspend = true })
	sts = e.statefulSet(ctx, t, ns, nb.Name, func(s *appsv1.StatefulSet) bool { return ptr.Deref(s.Spec.Replicas, 1) == 0 })
	e.waitNotebook(ctx, t, ns, nb.Name, "Suspended", func(nb *tensorstackv1beta1.Notebook) bool {
		r := condition(nb, tensorstackv1beta1.ConditionReady)
		return nb.Status.Phase == tensorstackv1beta1.NotebookSuspended && r.Status == corev1.ConditionFalse && r.Reason == notebook.ReasonSuspended
	})
	// The StatefulSet controller deletes the pod.
	if err := e.c.Delete(ctx, pod); err != nil {
		t.Fatal(err)
	}
	got := e.waitNotebook(ctx, t, ns, nb.Name, "no pod", func(nb *tensorstackv1beta1.Notebook) bool { return nb.Status.Pod == nil })
	if got.Status.Phase != tensorstackv1beta1.NotebookSuspended || got.Status.SSH == nil {
		t.Errorf("phase %s ssh %+v while suspended", got.Status.Phase, got.Status.SSH)
	}
	for _, svc := range []string{sts.Name, sts.Name + "-ssh"} {
		if err := e.c.Get(ctx, client.ObjectKey{Namespace: ns, Name: svc}, &corev1.Service{}); err != nil {
			t.Errorf("Service %s while suspended: %v", svc, err)
		}
	}

	e.update(ctx, t, ns, nb.Name, func(nb *tensorstackv1beta1.Notebook) { nb.Spec.Suspend = false })
	e.statefulSet(ctx, t, ns, nb.Name, func(s *appsv1.StatefulSet) bool { return ptr.Deref(s.Spec.Replicas, 0) == 1 })
	e.waitNotebook(ctx, t, ns, nb.Name, "Pending after resume", func(nb *tensorstackv1beta1.Notebook) bool {
		return nb.Status.Phase == tensorstackv1beta1.NotebookPending
	})
	pod = e.createPod(ctx, t, sts)
	e.setPodStatus(ctx, t, pod, corev1.PodRunning, true, corev1.ContainerState{Running: &corev1.ContainerStateRunning{}})
	e.waitNotebook(ctx, t, ns, nb.Name, "Running after resume", func(nb *tensorstackv1beta1.Notebook) bool {
		return nb.Status.Phase == tensorstackv1beta1.NotebookRunning && nb.Status.Pod != nil && nb.Status.Pod.Reference.Name == pod.Name
	})
}

// testSSHServiceChanges: a NodePort SSH Service gets its node port into the
// status; disabling SSH deletes it and keeps the web Service.
func (e *env) testSSHServiceChanges(t *testing.T) {
	ctx := testutil.SubtestContext(t)
	ns := e.namespace(t)
	testutil.MustCreate(ctx, t, e.c, sshSecret(ns, "example-user", notebook.SSHSecretType))
	nb := seedNotebook(ns, "nodeport")
	nb.Spec.SSH.ServiceType = corev1.ServiceTypeNodePort
	testutil.MustCreate(ctx, t, e.c, nb)
	name := notebook.ObjectName(nb.UID)

	got := e.waitNotebook(ctx, t, ns, nb.Name, "a node port", func(nb *tensorstackv1beta1.Notebook) bool {
		return nb.Status.SSH != nil && nb.Status.SSH.NodePort != 0
	})
	ssh := &corev1.Service{}
	e.waitFor(ctx, t, ns, name+"-ssh", ssh)
	if ssh.Spec.Type != corev1.ServiceTypeNodePort || ssh.Spec.Ports[0].NodePort != got.Status.SSH.NodePort {
		t.Errorf("SSH Service type %s ports %+v, status %+v", ssh.Spec.Type, ssh.Spec.Ports, got.Status.SSH)
	}

	// Back to ClusterIP: the node port goes.
	e.update(ctx, t, ns, nb.Name, func(nb *tensorstackv1beta1.Notebook) { nb.Spec.SSH.ServiceType = corev1.ServiceTypeClusterIP })
	e.waitNotebook(ctx, t, ns, nb.Name, "no node port", func(nb *tensorstackv1beta1.Notebook) bool {
		return nb.Status.SSH != nil && nb.Status.SSH.NodePort == 0 && nb.Status.SSH.ClusterIP != ""
	})

	e.update(ctx, t, ns, nb.Name, func(nb *tensorstackv1beta1.Notebook) { nb.Spec.SSH.Enabled = false })
	testutil.Poll(ctx, t, "the SSH Service deleted", func() (bool, string, error) {
		err := e.c.Get(ctx, client.ObjectKey{Namespace: ns, Name: name + "-ssh"}, &corev1.Service{})
		return apierrors.IsNotFound(err), fmt.Sprint(err), nil
	})
	got = e.waitNotebook(ctx, t, ns, nb.Name, "no SSH status", func(nb *tensorstackv1beta1.Notebook) bool {
		return nb.Status.SSH == nil && condition(nb, notebook.ConditionSSHReady).Type == ""
	})
	if err := e.c.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, &corev1.Service{}); err != nil {
		t.Errorf("the web Service after disabling SSH: %v", err)
	}
	e.statefulSet(ctx, t, ns, nb.Name, func(s *appsv1.StatefulSet) bool {
		for _, v := range s.Spec.Template.Spec.Volumes {
			if v.Projected != nil {
				return false
			}
		}
		return true
	})
	e.waitEvent(ctx, t, ns, got.Name, notebook.EventDeleted)
}

// testRefused: the webhook refuses what cannot run, naming the field.
func (e *env) testRefused(t *testing.T) {
	ctx := testutil.SubtestContext(t)
	ns := e.namespace(t)
	for _, tc := range []struct {
		name      string
		edit      func(*tensorstackv1beta1.Notebook)
		wantField string
	}{
		{"activity-container", func(nb *tensorstackv1beta1.Notebook) { nb.Spec.Template.Spec.Containers[0].Name = "activity" }, "spec.template.spec.containers[0].name"},
		{"bad-key-name", func(nb *tensorstackv1beta1.Notebook) { nb.Spec.SSH.AuthorizedKeys = []string{"Example_User"} }, "spec.ssh.authorized_keys[0]"},
		{"sidecar-port", func(nb *tensorstackv1beta1.Notebook) {
			nb.Spec.Template.Spec.Containers[0].Ports = []corev1.ContainerPort{{ContainerPort: 8080}}
		}, "spec.template.spec.containers[0].ports[0].containerPort"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			nb := seedNotebook(ns, tc.name)
			tc.edit(nb)
			err := e.c.Create(ctx, nb)
			if !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), tc.wantField) {
				t.Errorf("create = %v, want it refused naming %s", err, tc.wantField)
			}
		})
	}

	// An update that breaks a valid Notebook is refused too.
	nb := seedNotebook(ns, "valid")
	testutil.MustCreate(ctx, t, e.c, nb)
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		cur := e.notebook(ctx, t, ns, nb.Name)
		cur.Spec.Template.Spec.Containers[0].Name = "activity"
		return e.c.Update(ctx, cur)
	})
	if !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), "spec.template.spec.containers[0].name") {
		t.Errorf("update = %v, want it refused", err)
	}
}

// testWrongTypeSecret: a Secret of another type is a False SSHReady
// condition and an event, its key stays out of the pod, and the notebook
// runs; once the Secret is fixed, the controller mounts it.
func (e *env) testWrongTypeSecret(t *testing.T) {
	ctx := testutil.SubtestContext(t)
	ns := e.namespace(t)
	secret := sshSecret(ns, "example-user", "s3-cfg")
	testutil.MustCreate(ctx, t, e.c, secret)
	nb := seedNotebook(ns, "wrongtype")
	// The webhook refuses a Notebook naming an existing Secret of another
	// type.
	err := e.c.Create(ctx, nb.DeepCopy())
	if !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), "spec.ssh.authorized_keys[0]") || !strings.Contains(err.Error(), `is of type "s3-cfg"`) {
		t.Fatalf("create = %v, want it refused naming spec.ssh.authorized_keys[0]", err)
	}
	// A Secret that is not there yet is admitted; one that turns out of the
	// wrong type afterwards is the controller's to report.
	if err := e.c.Delete(ctx, secret); err != nil {
		t.Fatal(err)
	}
	testutil.MustCreate(ctx, t, e.c, nb)
	secret = sshSecret(ns, "example-user", "s3-cfg")
	testutil.MustCreate(ctx, t, e.c, secret)

	// Until the controller sees the Secret, SSHReady is False for
	// SecretNotFound; the wait is for the reason the Secret gives.
	got := e.waitNotebook(ctx, t, ns, nb.Name, "SSHReady False, SecretInvalid", func(nb *tensorstackv1beta1.Notebook) bool {
		c := condition(nb, notebook.ConditionSSHReady)
		return c.Status == corev1.ConditionFalse && c.Reason == notebook.ReasonSecretInvalid
	})
	c := condition(got, notebook.ConditionSSHReady)
	if !strings.Contains(c.Message, `Secret example-user is of type "s3-cfg"`) {
		t.Errorf("SSHReady %+v", c)
	}
	if note := e.waitEvent(ctx, t, ns, nb.Name, notebook.EventSSHKeys); !strings.Contains(note, "example-user") {
		t.Errorf("event note %q", note)
	}
	sts := e.statefulSet(ctx, t, ns, nb.Name, nil)
	for _, v := range sts.Spec.Template.Spec.Volumes {
		if v.Projected != nil {
			t.Errorf("a wrong-type Secret is mounted: %+v", v)
		}
	}
	if got.Status.SSH == nil || got.Status.Phase != tensorstackv1beta1.NotebookPending {
		t.Errorf("phase %s ssh %+v: the notebook runs without the key", got.Status.Phase, got.Status.SSH)
	}

	// The user fixes the Secret; the controller looks again (Secrets are
	// not watched) and mounts it.
	err = retry.RetryOnConflict(retry.DefaultRetry, func() error {
		s := &corev1.Secret{}
		if err := e.c.Get(ctx, client.ObjectKeyFromObject(secret), s); err != nil {
			return err
		}
		s.Labels[notebook.ResourceLabelKey] = notebook.SSHSecretType
		return e.c.Update(ctx, s)
	})
	if err != nil {
		t.Fatal(err)
	}
	e.waitNotebook(ctx, t, ns, nb.Name, "SSHReady True after the fix", func(nb *tensorstackv1beta1.Notebook) bool {
		return condition(nb, notebook.ConditionSSHReady).Status == corev1.ConditionTrue
	})
	e.statefulSet(ctx, t, ns, nb.Name, func(s *appsv1.StatefulSet) bool {
		for _, v := range s.Spec.Template.Spec.Volumes {
			if v.Projected != nil && v.Projected.Sources[0].Secret.Name == "example-user" {
				return true
			}
		}
		return false
	})
}

// testRStudioAndQueue: RStudio's port is the sidecar's upstream; a queue
// puts the pod under the T9k Scheduler.
func (e *env) testRStudioAndQueue(t *testing.T) {
	ctx := testutil.SubtestContext(t)
	ns := e.namespace(t)
	nb := seedNotebook(ns, "rstudio")
	nb.Spec.SSH = nil
	nb.Spec.Type = tensorstackv1beta1.NotebookRStudio
	nb.Spec.Scheduler = &tensorstackv1beta1.SchedulePolicy{T9kScheduler: &tensorstackv1beta1.T9kScheduler{Queue: "research"}}
	testutil.MustCreate(ctx, t, e.c, nb)
	sts := e.statefulSet(ctx, t, ns, nb.Name, nil)
	spec := sts.Spec.Template.Spec
	side := spec.Containers[len(spec.Containers)-1]
	if side.Args[0] != "--upstream=http://127.0.0.1:8787" {
		t.Errorf("sidecar args %q, want RStudio's port", side.Args)
	}
	if spec.SchedulerName != schedulerv1beta1.SchedulerName || sts.Spec.Template.Labels[schedulerv1beta1.QueueLabel] != "research" {
		t.Errorf("schedulerName %q queue label %q", spec.SchedulerName, sts.Spec.Template.Labels[schedulerv1beta1.QueueLabel])
	}
}
