package t9kcli

import (
	"context"
	"fmt"
	"time"

	"github.com/spf13/cobra"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	tensorstackv1beta1 "github.com/accelstack/accelstack/api/tensorstack/v1beta1"
	"github.com/accelstack/accelstack/pkg/members"
)

// createProjectCommand creates a Project and makes its owner its admin
// and a member with the scopes given.
func (o *options) createProjectCommand() *cobra.Command {
	var (
		build, deploy bool
		timeout       time.Duration
	)
	cmd := &cobra.Command{
		Use:   "create NAME OWNER",
		Short: "Create a Project with OWNER as its admin and member (cluster admins)",
		Long: "Create the Project NAME, wait for its namespace, and make the user OWNER its admin and a\n" +
			"member with the scopes --build and --deploy (both when neither is given).",
		Example: "  t9k project create sample alice --build",
		Args:    cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			name, owner := args[0], args[1]
			m := members.Member{Kind: members.UserKind, Name: owner, Admin: true}
			if build || !deploy {
				m.Scopes = append(m.Scopes, members.Build)
			}
			if deploy || !build {
				m.Scopes = append(m.Scopes, members.Deploy)
			}
			if err := m.Validate(); err != nil {
				return usageError(cmd, "owner: %v", err)
			}
			c, err := o.controllerClient()
			if err != nil {
				return err
			}
			ctx := cmd.Context()
			p := &tensorstackv1beta1.Project{ObjectMeta: metav1.ObjectMeta{Name: name}}
			if err := c.Create(ctx, p); err != nil {
				return fmt.Errorf("creating Project %s: %w", name, err)
			}
			fmt.Fprintf(o.streams.Out, "project %q created\n", name)
			if err := waitNamespace(ctx, c, name, timeout); err != nil {
				return err
			}
			if err := members.Set(ctx, c, name, m); err != nil {
				return fmt.Errorf("making %s the admin of Project %s: %w", owner, name, err)
			}
			fmt.Fprintf(o.streams.Out, "%s is its admin, with the scopes %v\n", owner, m.Scopes)
			return nil
		},
	}
	cmd.Flags().BoolVar(&build, "build", false, "Give the owner the build scope")
	cmd.Flags().BoolVar(&deploy, "deploy", false, "Give the owner the deploy scope")
	cmd.Flags().DurationVar(&timeout, "timeout", time.Minute, "How long to wait for the Project's namespace")
	return cmd
}

// waitNamespace waits until the namespace name exists.
func waitNamespace(ctx context.Context, c client.Client, name string, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for {
		err := c.Get(ctx, client.ObjectKey{Name: name}, &corev1.Namespace{})
		switch {
		case err == nil:
			return nil
		case !apierrors.IsNotFound(err):
			return fmt.Errorf("reading namespace %s: %w", name, err)
		case time.Now().After(deadline):
			return fmt.Errorf("the namespace of Project %s did not appear within %s: is the Project controller running?", name, timeout)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(500 * time.Millisecond):
		}
	}
}

// controllerClient is a controller-runtime client of the connection
// flags, knowing Projects and RBAC.
func (o *options) controllerClient() (client.Client, error) {
	cfg, err := o.factory.ToRESTConfig()
	if err != nil {
		return nil, err
	}
	scheme := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{corev1.AddToScheme, rbacv1.AddToScheme, tensorstackv1beta1.AddToScheme} {
		if err := add(scheme); err != nil {
			return nil, err
		}
	}
	c, err := client.New(cfg, client.Options{Scheme: scheme})
	if err != nil {
		return nil, fmt.Errorf("creating a client: %w", err)
	}
	return c, nil
}
