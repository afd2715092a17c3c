package t9kcli

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/util/retry"
)

// A queue grant (docs/scheduler.md#queue-grants) is the RBAC verb use on
// queues/<queue> of scheduler.tensorstack.dev, bound to users and groups
// by a cluster admin. t9k queue grant and revoke keep one ClusterRole and
// one ClusterRoleBinding per queue, both named grantName(queue) and
// labelled grantLabel; t9k queue grants reads every ClusterRoleBinding, so
// it also shows the grants written as YAML (and cluster-admin's).
const (
	grantLabel    = "scheduler.tensorstack.dev/queue-grant"
	queueGroup    = "scheduler.tensorstack.dev"
	queueResource = "queues"
	useVerb       = "use"
)

// grantName is the name of the ClusterRole and ClusterRoleBinding that
// hold a queue's grants made by t9k.
func grantName(queue string) string { return "accelstack-queue-grant-" + queue }

// grantSubjects are the users and groups of --user and --group.
type grantSubjects struct{ users, groups []string }

func (g *grantSubjects) addFlags(cmd *cobra.Command) {
	cmd.Flags().StringSliceVar(&g.users, "user", nil, "A user (repeat, or separate with commas)")
	cmd.Flags().StringSliceVar(&g.groups, "group", nil, "A group (repeat, or separate with commas)")
}

// subjects returns the flags' subjects, or an error naming the flags when
// there are none.
func (g *grantSubjects) subjects() ([]rbacv1.Subject, error) {
	var s []rbacv1.Subject
	for _, u := range g.users {
		s = append(s, rbacv1.Subject{APIGroup: rbacv1.GroupName, Kind: rbacv1.UserKind, Name: u})
	}
	for _, gr := range g.groups {
		s = append(s, rbacv1.Subject{APIGroup: rbacv1.GroupName, Kind: rbacv1.GroupKind, Name: gr})
	}
	for _, x := range s {
		if strings.TrimSpace(x.Name) == "" {
			return nil, errors.New("--user and --group take non-empty names")
		}
	}
	if len(s) == 0 {
		return nil, errors.New("name at least one --user or --group")
	}
	return s, nil
}

// queueGrantCommands are t9k queue grant, revoke and grants.
func (o *options) queueGrantCommands() []*cobra.Command {
	q := kindNamed("queue")
	var grant, revoke grantSubjects
	grantCmd := &cobra.Command{
		Use:               "grant NAME (--user USER | --group GROUP)...",
		Short:             "Let users and groups use a queue from any project (cluster admins)",
		Example:           "  t9k queue grant a100 --group vision-researchers --user alice",
		Args:              cobra.ExactArgs(1),
		ValidArgsFunction: o.completeNames(q),
		RunE: func(cmd *cobra.Command, args []string) error {
			subjects, err := grant.subjects()
			if err != nil {
				return usageError(cmd, "%v", err)
			}
			cs, err := o.queueClient(cmd.Context(), args[0])
			if err != nil {
				return err
			}
			added, err := grantQueue(cmd.Context(), cs, args[0], subjects)
			if err != nil {
				return fmt.Errorf("granting queue %s: %w", args[0], err)
			}
			fmt.Fprintf(o.streams.Out, "queue %q granted to %s\n", args[0], describeSubjects(subjects, added, "already granted"))
			return nil
		},
	}
	grant.addFlags(grantCmd)
	revokeCmd := &cobra.Command{
		Use:               "revoke NAME (--user USER | --group GROUP)...",
		Short:             "Take back a queue's grants from users and groups (cluster admins)",
		Example:           "  t9k queue revoke a100 --user alice",
		Args:              cobra.ExactArgs(1),
		ValidArgsFunction: o.completeNames(q),
		RunE: func(cmd *cobra.Command, args []string) error {
			subjects, err := revoke.subjects()
			if err != nil {
				return usageError(cmd, "%v", err)
			}
			cs, _, err := o.clients()
			if err != nil {
				return err
			}
			removed, err := revokeQueue(cmd.Context(), cs, args[0], subjects)
			if err != nil {
				return fmt.Errorf("revoking queue %s: %w", args[0], err)
			}
			fmt.Fprintf(o.streams.Out, "queue %q revoked from %s\n", args[0], describeSubjects(subjects, removed, "not granted by t9k"))
			return nil
		},
	}
	revoke.addFlags(revokeCmd)
	grantsCmd := &cobra.Command{
		Use:               "grants NAME",
		Short:             "List the users and groups granted a queue, and the bindings that grant it",
		Example:           "  t9k queue grants a100",
		Args:              cobra.ExactArgs(1),
		ValidArgsFunction: o.completeNames(q),
		RunE: func(cmd *cobra.Command, args []string) error {
			cs, _, err := o.clients()
			if err != nil {
				return err
			}
			grants, err := queueGrants(cmd.Context(), cs, args[0])
			if err != nil {
				return fmt.Errorf("reading the grants of queue %s: %w", args[0], err)
			}
			if len(grants) == 0 {
				fmt.Fprintf(o.streams.Out, "No user or group is granted queue %q.\n", args[0])
				return nil
			}
			w := tabwriter.NewWriter(o.streams.Out, 0, 8, 2, ' ', 0)
			fmt.Fprintln(w, "KIND\tNAME\tCLUSTERROLEBINDING")
			for _, g := range grants {
				fmt.Fprintf(w, "%s\t%s\t%s\n", g.Subject.Kind, g.Subject.Name, g.Binding)
			}
			return w.Flush()
		},
	}
	return []*cobra.Command{grantCmd, revokeCmd, grantsCmd}
}

// queueClient returns the typed client, once the queue is found: a grant
// of a misspelt queue would grant nothing.
func (o *options) queueClient(ctx context.Context, queue string) (kubernetes.Interface, error) {
	r, err := o.resource(kindNamed("queue"))
	if err != nil {
		return nil, err
	}
	if _, err := r.Get(ctx, queue, metav1.GetOptions{}); err != nil {
		return nil, fmt.Errorf("queue %s: %w", queue, err)
	}
	cs, _, err := o.clients()
	return cs, err
}

// describeSubjects says "user alice, group vision", with the subjects
// of all that are not in changed marked by why.
func describeSubjects(all, changed []rbacv1.Subject, why string) string {
	var parts []string
	for _, s := range all {
		p := strings.ToLower(s.Kind) + " " + s.Name
		if !slices.Contains(changed, s) {
			p += " (" + why + ")"
		}
		parts = append(parts, p)
	}
	return strings.Join(parts, ", ")
}

// grantQueue binds the use of queue to subjects, making the queue's
// ClusterRole and ClusterRoleBinding when missing, and returns the
// subjects it added.
func grantQueue(ctx context.Context, cs kubernetes.Interface, queue string, subjects []rbacv1.Subject) ([]rbacv1.Subject, error) {
	name := grantName(queue)
	meta := metav1.ObjectMeta{Name: name, Labels: map[string]string{grantLabel: queue}}
	role := &rbacv1.ClusterRole{ObjectMeta: meta, Rules: []rbacv1.PolicyRule{{
		APIGroups: []string{queueGroup}, Resources: []string{queueResource}, ResourceNames: []string{queue}, Verbs: []string{useVerb},
	}}}
	if _, err := cs.RbacV1().ClusterRoles().Create(ctx, role, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return nil, err
	} else if err != nil {
		existing, err := cs.RbacV1().ClusterRoles().Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return nil, err
		}
		if existing.Labels[grantLabel] != queue {
			return nil, fmt.Errorf("ClusterRole %s exists and is not t9k's grant of the queue (label %s=%s)", name, grantLabel, queue)
		}
	}
	var added []rbacv1.Subject
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		added = nil
		b, err := cs.RbacV1().ClusterRoleBindings().Get(ctx, name, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			b = &rbacv1.ClusterRoleBinding{ObjectMeta: meta, RoleRef: rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: name}}
			b.Subjects, added = merge(nil, subjects)
			_, err = cs.RbacV1().ClusterRoleBindings().Create(ctx, b, metav1.CreateOptions{})
			return err
		} else if err != nil {
			return err
		}
		if b.Labels[grantLabel] != queue || b.RoleRef.Name != name {
			return fmt.Errorf("ClusterRoleBinding %s exists and is not t9k's grant of the queue (label %s=%s)", name, grantLabel, queue)
		}
		if b.Subjects, added = merge(b.Subjects, subjects); len(added) == 0 {
			return nil
		}
		_, err = cs.RbacV1().ClusterRoleBindings().Update(ctx, b, metav1.UpdateOptions{})
		return err
	})
	return added, err
}

// merge returns have with the subjects of add it lacks, and those.
func merge(have, add []rbacv1.Subject) ([]rbacv1.Subject, []rbacv1.Subject) {
	var added []rbacv1.Subject
	for _, s := range add {
		if !slices.Contains(have, s) && !slices.Contains(added, s) {
			added = append(added, s)
		}
	}
	return append(have, added...), added
}

// revokeQueue takes subjects out of the queue's t9k grant, deleting the
// binding and the role when no one is left, and returns the subjects it
// removed.
func revokeQueue(ctx context.Context, cs kubernetes.Interface, queue string, subjects []rbacv1.Subject) ([]rbacv1.Subject, error) {
	name := grantName(queue)
	var removed []rbacv1.Subject
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		removed = nil
		b, err := cs.RbacV1().ClusterRoleBindings().Get(ctx, name, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return nil
		} else if err != nil {
			return err
		}
		if b.Labels[grantLabel] != queue {
			return fmt.Errorf("ClusterRoleBinding %s is not t9k's grant of the queue (label %s=%s)", name, grantLabel, queue)
		}
		kept := b.Subjects[:0:0]
		for _, s := range b.Subjects {
			if slices.Contains(subjects, s) {
				removed = append(removed, s)
			} else {
				kept = append(kept, s)
			}
		}
		switch {
		case len(removed) == 0:
			return nil
		case len(kept) == 0:
			return cs.RbacV1().ClusterRoleBindings().Delete(ctx, name, metav1.DeleteOptions{Preconditions: &metav1.Preconditions{ResourceVersion: &b.ResourceVersion}})
		}
		b.Subjects = kept
		_, err = cs.RbacV1().ClusterRoleBindings().Update(ctx, b, metav1.UpdateOptions{})
		return err
	})
	if err != nil {
		return nil, err
	}
	if _, err := cs.RbacV1().ClusterRoleBindings().Get(ctx, name, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		return removed, nil
	}
	// No binding is left: the role goes too, when it is t9k's.
	role, err := cs.RbacV1().ClusterRoles().Get(ctx, name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) || (err == nil && role.Labels[grantLabel] != queue) {
		return removed, nil
	} else if err != nil {
		return removed, err
	}
	err = cs.RbacV1().ClusterRoles().Delete(ctx, name, metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &role.UID}})
	if err != nil && !apierrors.IsNotFound(err) {
		return removed, err
	}
	return removed, nil
}

// queueGrant is a subject that may use a queue, and the binding that lets
// it.
type queueGrant struct {
	Subject rbacv1.Subject
	Binding string
}

// queueGrants returns who may use queue by a ClusterRoleBinding: the
// subjects of every binding whose ClusterRole has a rule for the verb use
// on the queue, as RBAC matches it (wildcards included).
func queueGrants(ctx context.Context, cs kubernetes.Interface, queue string) ([]queueGrant, error) {
	roles, err := cs.RbacV1().ClusterRoles().List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, err
	}
	granting := map[string]bool{}
	for _, r := range roles.Items {
		for _, rule := range r.Rules {
			if grantsUse(rule, queue) {
				granting[r.Name] = true
				break
			}
		}
	}
	bindings, err := cs.RbacV1().ClusterRoleBindings().List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, err
	}
	var grants []queueGrant
	for _, b := range bindings.Items {
		if b.RoleRef.Kind != "ClusterRole" || !granting[b.RoleRef.Name] {
			continue
		}
		for _, s := range b.Subjects {
			grants = append(grants, queueGrant{Subject: s, Binding: b.Name})
		}
	}
	slices.SortFunc(grants, func(a, b queueGrant) int {
		return strings.Compare(a.Subject.Kind+"/"+a.Subject.Name+"/"+a.Binding, b.Subject.Kind+"/"+b.Subject.Name+"/"+b.Binding)
	})
	return grants, nil
}

// grantsUse reports whether rule allows the verb use on queue.
func grantsUse(rule rbacv1.PolicyRule, queue string) bool {
	has := func(list []string, v string) bool { return slices.Contains(list, v) || slices.Contains(list, "*") }
	return has(rule.Verbs, useVerb) && has(rule.APIGroups, queueGroup) && has(rule.Resources, queueResource) &&
		(len(rule.ResourceNames) == 0 || slices.Contains(rule.ResourceNames, queue))
}
