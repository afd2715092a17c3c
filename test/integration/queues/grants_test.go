package queues

import (
	"context"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	batchv1beta1 "github.com/accelstack/accelstack/api/batch/v1beta1"
	schedv1beta1 "github.com/accelstack/accelstack/api/scheduler/v1beta1"
	"github.com/accelstack/accelstack/pkg/jobs"
	"github.com/accelstack/accelstack/test/harness"
	"github.com/accelstack/accelstack/test/testutil"
)

// TestQueueGrants runs the queue admission, the grant webhook of
// deploy/controllers/queue-grants-webhook.yaml and the admission policy of
// queue-grants-policy.yaml on a control plane of its own (its admin holds
// every grant), with the controllers, and checks, as users acting through
// RBAC: a member of a group granted the queue's use creates pods and a job
// in a namespace the queue's namespaceSelector does not match, marked, and
// the job's pods carry the mark; a user without the grant is refused, as
// is their own mark, on creation and on update.
func TestQueueGrants(t *testing.T) {
	t.Parallel()
	cp := harness.StartControlPlane(t)
	installWebhook(t, cp)
	cp.InstallMutatingWebhook(t, "controllers/queue-grants-webhook.yaml")
	cp.ApplyDeploy(t, "controllers/queue-grants-policy.yaml")
	cp.StartControllers(t)
	e := &env{c: cp.Client}
	ctx := testutil.SubtestContext(t)

	ns := e.namespace(t, map[string]string{"team": "nlp"})
	q := e.queue(ctx, t, "vision", func(s *schedv1beta1.QueueSpec) {
		s.NamespaceSelector = &metav1.LabelSelector{MatchLabels: map[string]string{"team": "vision"}}
	})
	grantQueue(ctx, t, cp.Client, q.Name, "vision-users")
	member(ctx, t, cp.Client, ns, "alice", "bob")
	alice := userClient(t, cp, "alice", "vision-users")
	bob := userClient(t, cp, "bob", "nlp-users")
	labels := map[string]string{schedv1beta1.QueueLabel: q.Name}

	p := podSpec(ns, "alice", "1", labels)
	if err := alice.Create(ctx, p); err != nil {
		t.Fatalf("a pod of a grant holder was refused: %v", err)
	}
	if got := p.Annotations[schedv1beta1.QueueGrantAnnotation]; got != q.Name {
		t.Errorf("the grant holder's pod is marked %q, want %q", got, q.Name)
	}
	refused(t, "a pod of a user without the grant", bob.Create(ctx, podSpec(ns, "bob", "1", labels)),
		"does not match its namespaceSelector")

	// The policy loads asynchronously: wait for it to refuse bob's own mark.
	var err error
	testutil.Poll(ctx, t, "the policy refusing a mark", func() (bool, string, error) {
		forged := podSpec(ns, "forged", "1", labels)
		forged.Annotations = map[string]string{schedv1beta1.QueueGrantAnnotation: q.Name}
		err = bob.Create(ctx, forged)
		if err == nil {
			_ = cp.Client.Delete(ctx, forged)
		}
		return err != nil && deniedByPolicy(err), "", nil
	})
	refused(t, "a mark written by a user without the grant", err,
		"metadata.annotations[scheduler.tensorstack.dev/queue-grant]", "bob", "queue "+q.Name)

	plain := podSpec(ns, "plain", "1", nil)
	plain.Spec.SchedulerName = ""
	if err := bob.Create(ctx, plain); err != nil {
		t.Fatal(err)
	}
	plain.Annotations = map[string]string{schedv1beta1.QueueGrantAnnotation: q.Name}
	refused(t, "a mark added on update by a user without the grant", bob.Update(ctx, plain), "holds no grant")

	// Templates: a mark in a Deployment's pod template is checked too; a
	// CronJob or Job without template metadata is no error of the policy.
	dep := deployment(ns, "forged", map[string]string{schedv1beta1.QueueGrantAnnotation: q.Name})
	refused(t, "a mark in a pod template written by a user without the grant", bob.Create(ctx, dep),
		"spec.template.metadata.annotations[scheduler.tensorstack.dev/queue-grant]", "bob")
	if err := alice.Create(ctx, deployment(ns, "granted", map[string]string{schedv1beta1.QueueGrantAnnotation: q.Name})); err != nil {
		t.Errorf("a mark in a pod template written by a grant holder: %v", err)
	}
	spec := corev1.PodTemplateSpec{Spec: corev1.PodSpec{RestartPolicy: corev1.RestartPolicyNever,
		Containers: []corev1.Container{{Name: "main", Image: "busybox"}}}}
	cron := &batchv1.CronJob{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "plain"}, Spec: batchv1.CronJobSpec{
		Schedule: "@daily", JobTemplate: batchv1.JobTemplateSpec{Spec: batchv1.JobSpec{Template: spec}}}}
	if err := bob.Create(ctx, cron); err != nil {
		t.Errorf("a CronJob without template metadata: %v", err)
	}

	job := cpuJob(ns, "alice", q.Name, 2, "1")
	if err := alice.Create(ctx, job); err != nil {
		t.Fatalf("a job of a grant holder was refused: %v", err)
	}
	if got := job.Annotations[schedv1beta1.QueueGrantAnnotation]; got != q.Name {
		t.Errorf("the grant holder's job is marked %q, want %q", got, q.Name)
	}
	testutil.Poll(ctx, t, "the job's pods, marked", func() (bool, string, error) {
		var list corev1.PodList
		if err := e.c.List(ctx, &list, client.InNamespace(ns), client.MatchingLabels{jobs.JobNameLabel: job.Name}); err != nil {
			return false, "", err
		}
		for _, p := range list.Items {
			if p.Annotations[schedv1beta1.QueueGrantAnnotation] != q.Name {
				return false, "pod " + p.Name + " unmarked", nil
			}
		}
		return len(list.Items) == 2, "", nil
	})
	refused(t, "a job of a user without the grant", bob.Create(ctx, cpuJob(ns, "bob", q.Name, 1, "1")),
		"does not match its namespaceSelector")
}

// grantQueue grants group the use of queue name, as a cluster admin does.
func grantQueue(ctx context.Context, t *testing.T, c client.Client, name, group string) {
	t.Helper()
	role := &rbacv1.ClusterRole{
		ObjectMeta: metav1.ObjectMeta{Name: "queue-" + name},
		Rules: []rbacv1.PolicyRule{{APIGroups: []string{schedv1beta1.GroupVersion.Group}, Resources: []string{"queues"},
			ResourceNames: []string{name}, Verbs: []string{schedv1beta1.UseVerb}}},
	}
	binding := &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: "queue-" + name},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: role.Name},
		Subjects:   []rbacv1.Subject{{APIGroup: rbacv1.GroupName, Kind: rbacv1.GroupKind, Name: group}},
	}
	for _, o := range []client.Object{role, binding} {
		if err := c.Create(ctx, o); err != nil {
			t.Fatal(err)
		}
	}
}

// member lets users create and change pods and GenericJobs in ns.
func member(ctx context.Context, t *testing.T, c client.Client, ns string, users ...string) {
	t.Helper()
	role := &rbacv1.Role{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "member"},
		Rules: []rbacv1.PolicyRule{
			{APIGroups: []string{""}, Resources: []string{"pods"}, Verbs: []string{"get", "create", "update"}},
			{APIGroups: []string{batchv1beta1.GroupVersion.Group}, Resources: []string{"genericjobs"}, Verbs: []string{"get", "create"}},
			{APIGroups: []string{"apps"}, Resources: []string{"deployments"}, Verbs: []string{"create"}},
			{APIGroups: []string{"batch"}, Resources: []string{"cronjobs"}, Verbs: []string{"create"}},
		},
	}
	binding := &rbacv1.RoleBinding{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "member"},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: role.Name},
	}
	for _, u := range users {
		binding.Subjects = append(binding.Subjects, rbacv1.Subject{APIGroup: rbacv1.GroupName, Kind: rbacv1.UserKind, Name: u})
	}
	for _, o := range []client.Object{role, binding} {
		if err := c.Create(ctx, o); err != nil {
			t.Fatal(err)
		}
	}
}

// deployment is a Deployment of one pod of the default scheduler, with
// annotations on its pod template.
func deployment(ns, name string, annotations map[string]string) *appsv1.Deployment {
	labels := map[string]string{"app": name}
	return &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: appsv1.DeploymentSpec{
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels, Annotations: annotations},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "main", Image: "busybox"}}},
			},
		},
	}
}

// userClient acts as user, a member of group.
func userClient(t *testing.T, cp *harness.ControlPlane, user, group string) client.Client {
	t.Helper()
	c := rest.CopyConfig(cp.Config)
	c.Impersonate = rest.ImpersonationConfig{UserName: user, Groups: []string{group, "system:authenticated"}}
	cl, err := client.New(c, client.Options{Scheme: cp.Scheme})
	if err != nil {
		t.Fatal(err)
	}
	return cl
}

// deniedByPolicy reports whether err is a ValidatingAdmissionPolicy denial.
func deniedByPolicy(err error) bool {
	return err != nil && strings.Contains(err.Error(), "ValidatingAdmissionPolicy")
}
