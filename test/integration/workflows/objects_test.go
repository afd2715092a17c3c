package workflows

import (
	"context"
	"testing"

	batchv1 "k8s.io/api/batch/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// rbacRole is the Role and RoleBinding that let managed-project-sa of a
// namespace manage Jobs there.
type rbacRole struct{ ns string }

func (r *rbacRole) role() *rbacv1.Role {
	return &rbacv1.Role{
		ObjectMeta: metav1.ObjectMeta{Namespace: r.ns, Name: "jobs"},
		Rules:      []rbacv1.PolicyRule{{APIGroups: []string{"batch"}, Resources: []string{"jobs"}, Verbs: []string{"get", "create", "delete"}}},
	}
}

func (r *rbacRole) binding() *rbacv1.RoleBinding {
	return &rbacv1.RoleBinding{
		ObjectMeta: metav1.ObjectMeta{Namespace: r.ns, Name: "jobs"},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: "jobs"},
		Subjects:   []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Namespace: r.ns, Name: "managed-project-sa"}},
	}
}

// jobObject is a batch/v1 Job a Resource run created.
type jobObject struct{ batchv1.Job }

func (e *env) job(ctx context.Context, ns, name string) (*jobObject, error) {
	j := &jobObject{}
	return j, e.c.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, &j.Job)
}

// command is the Job's container command.
func (j *jobObject) command() []string { return j.Spec.Template.Spec.Containers[0].Command }

// setSucceeded writes the Job's status as the Job controller would once its
// pod succeeded.
func (j *jobObject) setSucceeded(ctx context.Context, t *testing.T, e *env) {
	t.Helper()
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		cur := &batchv1.Job{}
		if err := e.c.Get(ctx, client.ObjectKeyFromObject(&j.Job), cur); err != nil {
			return err
		}
		now := metav1.Now()
		cur.Status.StartTime, cur.Status.CompletionTime, cur.Status.Succeeded = &now, &now, 1
		cur.Status.Conditions = []batchv1.JobCondition{
			{Type: batchv1.JobSuccessCriteriaMet, Status: "True", LastTransitionTime: now},
			{Type: batchv1.JobComplete, Status: "True", LastTransitionTime: now},
		}
		return e.c.Status().Update(ctx, cur)
	})
	if err != nil {
		t.Fatalf("setting Job %s succeeded: %v", j.Name, err)
	}
}

// jobList lists batch/v1 Jobs.
type jobList struct{ batchv1.JobList }

func (l *jobList) obj() *batchv1.JobList { return &l.JobList }
func (l *jobList) len() int              { return len(l.Items) }
