//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	batchv1beta1 "github.com/accelstack/accelstack/api/batch/v1beta1"
	tensorstackv1beta1 "github.com/accelstack/accelstack/api/tensorstack/v1beta1"
	"github.com/accelstack/accelstack/pkg/jobs"
	"github.com/accelstack/accelstack/pkg/project"
	"github.com/accelstack/accelstack/pkg/satoken"
	"github.com/accelstack/accelstack/test/cluster"
)

// projectContext bounds a Project test.
func projectContext(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	t.Cleanup(cancel)
	return ctx
}

// newProjectE2E creates a Project with a GPU quota of gpus and waits until
// it is Ready; the namespace is deleted with it when the test ends.
func newProjectE2E(t *testing.T, c client.Client, gpus string) string {
	t.Helper()
	ctx := projectContext(t)
	name := fmt.Sprintf("e2e-proj-%d", time.Now().UnixNano()%1_000_000)
	p := &tensorstackv1beta1.Project{
		ObjectMeta: metav1.ObjectMeta{Name: name, Annotations: map[string]string{project.DeleteNamespaceAnnotationKey: "true"}},
		Spec: tensorstackv1beta1.ProjectSpec{ResourceQuota: &tensorstackv1beta1.ProjectResourceQuota{
			Template: &tensorstackv1beta1.ProjectResourceQuotaTemplate{Spec: corev1.ResourceQuotaSpec{Hard: corev1.ResourceList{
				"requests.nvidia.com/gpu": resource.MustParse(gpus),
			}}},
		}},
	}
	if err := c.Create(ctx, p); err != nil {
		t.Fatalf("creating Project: %v", err)
	}
	t.Cleanup(func() { _ = c.Delete(context.Background(), p) })
	err := wait.PollUntilContextCancel(ctx, 500*time.Millisecond, true, func(ctx context.Context) (bool, error) {
		if err := c.Get(ctx, client.ObjectKeyFromObject(p), p); err != nil {
			return false, nil //nolint:nilerr // retried until the timeout
		}
		for _, cond := range p.Status.Conditions {
			if cond.Type == tensorstackv1beta1.ProjectReady && cond.Status == corev1.ConditionTrue {
				return true, nil
			}
		}
		return false, nil
	})
	if err != nil {
		t.Fatalf("Project %s never Ready: %v; status %+v", name, err, p.Status)
	}
	return name
}

// TestProjectGPUQuota: a T9k Job in a Project whose GPU quota its pods
// exceed is accepted and not failed; its pods are refused, and an event
// (CreationFailed) and a condition of the job (ReplicaFailure True,
// ExceededQuota) quote the API server's refusal.
func TestProjectGPUQuota(t *testing.T) {
	c := crClient(t)
	ns := newProjectE2E(t, c, "1")
	ctx := projectContext(t)
	// The admitted pod outlives the test, so the quota keeps refusing the
	// other one; the namespace goes with the Project.
	tmpl := corev1.PodTemplateSpec{Spec: corev1.PodSpec{
		TerminationGracePeriodSeconds: ptr.To[int64](2),
		Containers: []corev1.Container{{
			Name: "worker", Image: cluster.BusyboxImage, ImagePullPolicy: corev1.PullNever, Command: []string{"sleep", "3600"},
			Resources: corev1.ResourceRequirements{Limits: corev1.ResourceList{"nvidia.com/gpu": resource.MustParse("1")}},
		}},
	}}
	job := &batchv1beta1.GenericJob{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "over-quota"},
		Spec: batchv1beta1.GenericJobSpec{ReplicaSpecs: []batchv1beta1.ReplicaSpec{
			{Type: "worker", Replicas: ptr.To[int32](2), Template: tmpl},
		}},
	}
	if err := c.Create(ctx, job); err != nil {
		t.Fatalf("the job was refused, want it accepted: %v", err)
	}
	var (
		note    string
		cond    *batchv1beta1.JobCondition
		lastErr error
	)
	err := wait.PollUntilContextCancel(ctx, time.Second, true, func(ctx context.Context) (bool, error) {
		var list eventsv1.EventList
		if lastErr = c.List(ctx, &list, client.InNamespace(ns)); lastErr != nil {
			return false, nil //nolint:nilerr // retried until the timeout, then reported
		}
		for _, ev := range list.Items {
			if ev.Regarding.Name == job.Name && ev.Reason == jobs.EventCreationFailed && strings.Contains(ev.Note, "exceeded quota") {
				note = ev.Note
			}
		}
		if lastErr = c.Get(ctx, client.ObjectKeyFromObject(job), job); lastErr != nil {
			return false, nil //nolint:nilerr // retried until the timeout, then reported
		}
		cond = jobs.Condition(&job.Status, batchv1beta1.JobReplicaFailure)
		return note != "" && cond != nil && cond.Status == corev1.ConditionTrue && cond.Reason == jobs.ReasonExceededQuota, nil
	})
	if err != nil {
		t.Fatalf("want a CreationFailed event and ReplicaFailure %s: %v (last error %v); event %q, conditions %+v\n%s",
			jobs.ReasonExceededQuota, err, lastErr, note, job.Status.Conditions, describeJob(t, job))
	}
	t.Logf("event: %s", note)
	if !strings.Contains(cond.Message, "exceeded quota") || !strings.Contains(cond.Message, "requests.nvidia.com/gpu") {
		t.Errorf("ReplicaFailure message %q does not quote the API server's refusal", cond.Message)
	}
	if job.Status.Phase == batchv1beta1.JobFailed {
		t.Errorf("the job failed; want it kept waiting for quota")
	}
}

// TestServiceAccountTokenKubeconfig: the kubeconfig of a
// ServiceAccountToken lists pods in its Project and is refused elsewhere.
func TestServiceAccountTokenKubeconfig(t *testing.T) {
	c := crClient(t)
	ns := newProjectE2E(t, c, "1")
	ctx := projectContext(t)
	sat := &tensorstackv1beta1.ServiceAccountToken{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "sat-sample"},
		Spec:       tensorstackv1beta1.ServiceAccountTokenSpec{Duration: "1h"},
	}
	if err := c.Create(ctx, sat); err != nil {
		t.Fatal(err)
	}
	err := wait.PollUntilContextCancel(ctx, 500*time.Millisecond, true, func(ctx context.Context) (bool, error) {
		if err := c.Get(ctx, client.ObjectKeyFromObject(sat), sat); err != nil {
			return false, nil //nolint:nilerr // retried until the timeout
		}
		for _, cond := range sat.Status.Conditions {
			if cond.Type == tensorstackv1beta1.ServiceAccountTokenReady && cond.Status == corev1.ConditionTrue {
				return true, nil
			}
		}
		return false, nil
	})
	if err != nil {
		t.Fatalf("ServiceAccountToken never Ready: %v; status %+v", err, sat.Status)
	}
	secret := &corev1.Secret{}
	if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: sat.Status.SecretRef.Name}, secret); err != nil {
		t.Fatal(err)
	}
	cfg, err := clientcmd.RESTConfigFromKubeConfig(secret.Data[satoken.KubeconfigKey])
	if err != nil {
		t.Fatal(err)
	}
	user, err := client.New(cfg, client.Options{Scheme: c.Scheme()})
	if err != nil {
		t.Fatal(err)
	}
	err = wait.PollUntilContextCancel(ctx, time.Second, true, func(ctx context.Context) (bool, error) {
		return user.List(ctx, &corev1.PodList{}, client.InNamespace(ns)) == nil, nil
	})
	if err != nil {
		t.Fatalf("the kubeconfig cannot list pods in %s: %v", ns, user.List(ctx, &corev1.PodList{}, client.InNamespace(ns)))
	}
	if err := user.List(ctx, &corev1.PodList{}, client.InNamespace("kube-system")); !apierrors.IsForbidden(err) {
		t.Errorf("listing pods in kube-system: %v, want Forbidden", err)
	}
}
