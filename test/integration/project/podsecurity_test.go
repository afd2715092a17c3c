package project

import (
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/util/retry"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	batchv1beta1 "github.com/accelstack/accelstack/api/batch/v1beta1"
	tensorstackv1beta1 "github.com/accelstack/accelstack/api/tensorstack/v1beta1"
	"github.com/accelstack/accelstack/pkg/notebook"
	"github.com/accelstack/accelstack/pkg/project"
	"github.com/accelstack/accelstack/test/testutil"
)

// enforceLabel is the namespace label of the level Pod Security admission
// enforces.
const enforceLabel = "pod-security.kubernetes.io/enforce"

// plainPod is a pod a research team runs: no host access.
func plainPod(ns, name string) *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: corev1.PodSpec{
			AutomountServiceAccountToken: ptr.To(false),
			Containers:                   []corev1.Container{{Name: "main", Image: "busybox", Command: []string{"sleep", "3600"}}},
		},
	}
}

// rootPod is a pod that would own its node: privileged, with the node's
// root file system mounted.
func rootPod(ns, name string) *corev1.Pod {
	pod := plainPod(ns, name)
	pod.Spec.Containers[0].SecurityContext = &corev1.SecurityContext{Privileged: ptr.To(true)}
	pod.Spec.Containers[0].VolumeMounts = []corev1.VolumeMount{{Name: "host", MountPath: "/host"}}
	pod.Spec.Volumes = []corev1.Volume{{Name: "host", VolumeSource: corev1.VolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: "/"}}}}
	return pod
}

// waitNamespaceLabel waits until the namespace name has the label key at
// value and returns it.
func (e *env) waitNamespaceLabel(t *testing.T, name, key, value string) *corev1.Namespace {
	t.Helper()
	ctx := testutil.SubtestContext(t)
	ns := &corev1.Namespace{}
	e.waitFor(ctx, t, "", name, ns, func() bool { return ns.Labels[key] == value })
	return ns
}

// testPodSecurity: a Project's namespace enforces baseline, so the API
// server refuses a privileged hostPath pod there and admits a plain one;
// spec.podSecurity privileged admits it.
func (e *env) testPodSecurity(t *testing.T) {
	ctx := testutil.SubtestContext(t)
	name := name("psa")
	testutil.MustCreate(ctx, t, e.c, newProject(name))
	e.waitReady(ctx, t, name, corev1.ConditionTrue, project.ReasonReady)
	ns := e.waitNamespaceLabel(t, name, enforceLabel, "baseline")
	want := map[string]string{
		"pod-security.kubernetes.io/enforce": "baseline", "pod-security.kubernetes.io/enforce-version": "latest",
		"pod-security.kubernetes.io/warn": "baseline", "pod-security.kubernetes.io/warn-version": "latest",
		"pod-security.kubernetes.io/audit": "baseline", "pod-security.kubernetes.io/audit-version": "latest",
		project.ProjectLabelKey: name, corev1.LabelMetadataName: name,
	}
	if diff := cmp.Diff(want, ns.Labels); diff != "" {
		t.Errorf("namespace labels (-want +got):\n%s", diff)
	}

	err := e.c.Create(ctx, rootPod(name, "root"))
	if !apierrors.IsForbidden(err) || !strings.Contains(err.Error(), "violates PodSecurity \"baseline:latest\"") {
		t.Errorf("creating a privileged hostPath pod = %v, want it refused by Pod Security admission", err)
	}
	testutil.MustCreate(ctx, t, e.c, plainPod(name, "plain"))

	e.updateProject(ctx, t, name, func(p *tensorstackv1beta1.Project) { p.Spec.PodSecurity = tensorstackv1beta1.PodSecurityPrivileged })
	e.waitNamespaceLabel(t, name, enforceLabel, "privileged")
	testutil.MustCreate(ctx, t, e.c, rootPod(name, "root"))
}

// testPodSecurityProfile: a QuotaProfile's podSecurity applies to the
// Projects naming it, and a label an administrator sets by hand is kept,
// with an event saying so.
func (e *env) testPodSecurityProfile(t *testing.T) {
	ctx := testutil.SubtestContext(t)
	qp := &tensorstackv1beta1.QuotaProfile{ObjectMeta: metav1.ObjectMeta{Name: name("psa-profile")}, PodSecurity: tensorstackv1beta1.PodSecurityRestricted}
	testutil.MustCreate(ctx, t, e.c, qp)
	name := name("psa-qp")
	p := newProject(name)
	p.Spec.QuotaProfile = qp.Name
	testutil.MustCreate(ctx, t, e.c, p)
	e.waitReady(ctx, t, name, corev1.ConditionTrue, project.ReasonReady)
	e.waitNamespaceLabel(t, name, enforceLabel, "restricted")
	if err := e.c.Create(ctx, plainPod(name, "plain")); !apierrors.IsForbidden(err) {
		t.Errorf("creating a pod without restricted's settings = %v, want it refused", err)
	}

	// The administrator relaxes enforce by hand: the controller keeps it.
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		ns := &corev1.Namespace{}
		if err := e.c.Get(ctx, keyOf(name), ns); err != nil {
			return err
		}
		ns.Labels[enforceLabel] = "baseline"
		return e.c.Update(ctx, ns)
	})
	if err != nil {
		t.Fatal(err)
	}
	testutil.Poll(ctx, t, "event "+project.ReasonPodSecurityKept, func() (bool, string, error) {
		var list eventsv1.EventList
		if err := e.c.List(ctx, &list, client.InNamespace(metav1.NamespaceDefault)); err != nil {
			return false, "", err
		}
		for _, ev := range list.Items {
			if ev.Regarding.Name == name && ev.Reason == project.ReasonPodSecurityKept {
				return strings.Contains(ev.Note, enforceLabel+"=baseline"), ev.Note, nil
			}
		}
		return false, fmt.Sprintf("%d events", len(list.Items)), nil
	})
	ns := &corev1.Namespace{}
	if err := e.c.Get(ctx, keyOf(name), ns); err != nil {
		t.Fatal(err)
	}
	if ns.Labels[enforceLabel] != "baseline" || ns.Labels["pod-security.kubernetes.io/warn"] != "restricted" {
		t.Errorf("labels %v, want enforce kept at baseline and the others restricted", ns.Labels)
	}
	testutil.MustCreate(ctx, t, e.c, plainPod(name, "plain"))
}

// testPlatformPodsBaseline: the pods the platform makes in a Project's
// namespace from a plain template pass baseline: a T9k Job's pod and an
// MPIJob's worker running sshd, which their controller creates, a
// workflow's SeqPod pod, and a Notebook's with SSH (the StatefulSet
// controller does not run here: the test creates its pod from the
// template, as that controller would).
func (e *env) testPlatformPodsBaseline(t *testing.T) {
	ctx := testutil.SubtestContext(t)
	name := name("psa-platform")
	testutil.MustCreate(ctx, t, e.c, newProject(name))
	e.waitReady(ctx, t, name, corev1.ConditionTrue, project.ReasonReady)
	e.waitNamespaceLabel(t, name, enforceLabel, "baseline")

	job := &batchv1beta1.GenericJob{
		ObjectMeta: metav1.ObjectMeta{Namespace: name, Name: "train"},
		Spec: batchv1beta1.GenericJobSpec{ReplicaSpecs: []batchv1beta1.ReplicaSpec{{
			Type: "worker", Replicas: ptr.To[int32](1),
			Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "worker", Image: "busybox"}}}},
		}}},
	}
	testutil.MustCreate(ctx, t, e.c, job)
	mpi := &batchv1beta1.MPIJob{
		ObjectMeta: metav1.ObjectMeta{Namespace: name, Name: "mpi"},
		Spec: batchv1beta1.MPIJobSpec{
			Worker: &batchv1beta1.MPIWorkerSpec{
				Replicas: ptr.To[int32](1), Cmd: []string{"python3", "allreduce.py"},
				Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "mpi-worker", Image: "t9kpublic/horovod:latest"}}}},
			},
			SSH: &batchv1beta1.MPISSHConfig{SSHDPath: "/usr/sbin/sshd"},
		},
	}
	testutil.MustCreate(ctx, t, e.c, mpi)
	run := &unstructured.Unstructured{}
	if err := yaml.Unmarshal([]byte(seqPodRun), &run.Object); err != nil {
		t.Fatal(err)
	}
	run.SetNamespace(name)
	testutil.MustCreate(ctx, t, e.c, run)
	// The job's pod, the MPI worker and the SeqPod's pod: each refused by
	// Pod Security admission would be missing, with an event.
	testutil.Poll(ctx, t, "the pods of the job, the MPIJob and the workflow run", func() (bool, string, error) {
		var pods corev1.PodList
		if err := e.c.List(ctx, &pods, client.InNamespace(name)); err != nil {
			return false, "", err
		}
		var names []string
		job, worker, step := false, false, false
		for _, p := range pods.Items {
			names = append(names, p.Name)
			job = job || p.Name == "train-worker-0"
			worker = worker || p.Name == "mpi-worker-0"
			step = step || strings.HasPrefix(p.Name, "steps-")
		}
		return job && worker && step, fmt.Sprintf("pods %v", names), nil
	})

	testutil.MustCreate(ctx, t, e.c, &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Namespace: name, Name: "key", Labels: map[string]string{notebook.ResourceLabelKey: notebook.SSHSecretType}},
		Data: map[string][]byte{notebook.SSHPublicKeyKey: []byte(
			"ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIOMqqnkVzrm0SdG6UOoqKLsabgH5C9okWi0dh2l9GKJl user@laptop\n")},
	})
	nb := &tensorstackv1beta1.Notebook{
		ObjectMeta: metav1.ObjectMeta{Namespace: name, Name: "nb"},
		Spec: tensorstackv1beta1.NotebookSpec{
			Template: tensorstackv1beta1.NotebookTemplateSpec{Spec: corev1.PodSpec{
				Containers: []corev1.Container{{Name: "notebook", Image: "t9kpublic/torch-2.1.0-notebook:1.77.1"}},
			}},
			SSH: &tensorstackv1beta1.NotebookSSHSpec{Enabled: true, AuthorizedKeys: []string{"key"}},
		},
	}
	testutil.MustCreate(ctx, t, e.c, nb)
	sts := &appsv1.StatefulSet{}
	e.waitFor(ctx, t, name, notebook.ObjectName(nb.UID), sts, func() bool { return len(sts.Spec.Template.Spec.Volumes) > 0 })
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: name, Name: notebook.PodName(sts.Name), Labels: sts.Spec.Template.Labels},
		Spec:       sts.Spec.Template.Spec,
	}
	if err := e.c.Create(ctx, pod); err != nil {
		t.Errorf("the Notebook's pod with SSH under baseline: %v", err)
	}
}

// seqPodRun is a WorkflowRun of one SeqPod step.
const seqPodRun = `
apiVersion: batch.tensorstack.dev/v1beta1
kind: WorkflowRun
metadata:
  name: steps
spec:
  workflowTemplateSpec:
    type: SeqPod
    seqPod:
      steps:
        - name: hello
          image: busybox
          script: |
            #!/bin/sh
            echo hello
`

// testDefaultQuotaProfile: the controllers create the QuotaProfile
// default, with object counts the API server takes as a ResourceQuota of
// a Project naming it.
func (e *env) testDefaultQuotaProfile(t *testing.T) {
	ctx := testutil.SubtestContext(t)
	qp := &tensorstackv1beta1.QuotaProfile{}
	e.waitFor(ctx, t, "", project.DefaultQuotaProfileName, qp, nil)
	name := name("default-profile")
	p := newProject(name)
	p.Spec.QuotaProfile = project.DefaultQuotaProfileName
	testutil.MustCreate(ctx, t, e.c, p)
	e.waitReady(ctx, t, name, corev1.ConditionTrue, project.ReasonReady)
	rq := &corev1.ResourceQuota{}
	e.waitFor(ctx, t, name, project.ResourceQuotaName, rq, nil)
	for _, r := range []corev1.ResourceName{"pods", "count/configmaps", "count/secrets",
		"count/genericjobs.batch.tensorstack.dev", "count/workflowruns.batch.tensorstack.dev", "count/notebooks.tensorstack.dev"} {
		if q, ok := rq.Spec.Hard[r]; !ok || q.Sign() <= 0 {
			t.Errorf("ResourceQuota hard[%s] = %v, want a count", r, q)
		}
	}
	e.waitNamespaceLabel(t, name, enforceLabel, "baseline")
}
