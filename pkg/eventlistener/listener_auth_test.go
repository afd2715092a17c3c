package eventlistener

import (
	"testing"

	appsv1 "k8s.io/api/apps/v1"

	triggersv1beta1 "github.com/accelstack/accelstack/api/tensorstack/triggers/v1beta1"
	"github.com/accelstack/accelstack/pkg/eventlistener/serverconfig"
)

// TestListenerSecretMounted checks that a listener with auth mounts its
// Secret's key as a file and points the server at it, and that no env or
// argument names more than the Secret.
func TestListenerSecretMounted(t *testing.T) {
	for name, tc := range map[string]struct {
		key, wantKey string
	}{
		"default key": {"", triggersv1beta1.DefaultSecretKey},
		"named key":   {"webhook", "webhook"},
	} {
		t.Run(name, func(t *testing.T) {
			el := newListener("signed")
			el.Spec.Auth = &triggersv1beta1.EventListenerAuth{SecretName: "github-webhook", Key: tc.key}
			f := newFixture(t, el)
			f.reconcileListener(t, el.Name)
			dep := &appsv1.Deployment{}
			f.get(t, ListenerObjectName(el.Name, el.UID), dep)
			ps := dep.Spec.Template.Spec
			if len(ps.Volumes) != 1 || ps.Volumes[0].Secret == nil {
				t.Fatalf("volumes %+v, want the Secret", ps.Volumes)
			}
			sv := ps.Volumes[0].Secret
			if sv.SecretName != "github-webhook" || len(sv.Items) != 1 || sv.Items[0].Key != tc.wantKey || sv.Items[0].Path != secretFile {
				t.Errorf("secret volume %+v, want key %s at %s", sv, tc.wantKey, secretFile)
			}
			c := ps.Containers[0]
			if len(c.VolumeMounts) != 1 || c.VolumeMounts[0].MountPath != secretDir || !c.VolumeMounts[0].ReadOnly {
				t.Errorf("mounts %+v, want %s read-only", c.VolumeMounts, secretDir)
			}
			if got := envOf(c)[serverconfig.EnvSecretFile]; got != secretDir+"/"+secretFile {
				t.Errorf("%s = %q, want %s/%s", serverconfig.EnvSecretFile, got, secretDir, secretFile)
			}
			for _, e := range c.Env {
				if e.ValueFrom != nil {
					t.Errorf("env %s is read from %+v: the secret is mounted, not in the environment", e.Name, e.ValueFrom)
				}
			}
		})
	}
	el := newListener("open")
	f := newFixture(t, el)
	f.reconcileListener(t, el.Name)
	dep := &appsv1.Deployment{}
	f.get(t, ListenerObjectName(el.Name, el.UID), dep)
	if v := dep.Spec.Template.Spec.Volumes; len(v) != 0 {
		t.Errorf("a listener without auth mounts %+v", v)
	}
	if _, ok := envOf(dep.Spec.Template.Spec.Containers[0])[serverconfig.EnvSecretFile]; ok {
		t.Errorf("a listener without auth has %s", serverconfig.EnvSecretFile)
	}
}
