package sidecar

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"

	"github.com/accelstack/accelstack/pkg/activity"
)

func TestSidecar(t *testing.T) {
	c := Container("example.com/activity:v1", 6006, "")
	if c.Name != activity.ContainerName || c.Image != "example.com/activity:v1" {
		t.Errorf("name %q image %q", c.Name, c.Image)
	}
	if diff := cmp.Diff([]string{"--upstream=http://127.0.0.1:6006"}, c.Args); diff != "" {
		t.Errorf("args (-want +got):\n%s", diff)
	}
	want := []corev1.ContainerPort{
		{Name: activity.HTTPPortName, ContainerPort: activity.HTTPPort, Protocol: corev1.ProtocolTCP},
		{Name: activity.SSHPortName, ContainerPort: activity.SSHPort, Protocol: corev1.ProtocolTCP},
	}
	if diff := cmp.Diff(want, c.Ports); diff != "" {
		t.Errorf("ports (-want +got):\n%s", diff)
	}
	for _, p := range []struct {
		name, path string
		probe      *corev1.Probe
	}{{"readiness", activity.ReadyzPath, c.ReadinessProbe}, {"liveness", activity.HealthzPath, c.LivenessProbe}} {
		if p.probe == nil || p.probe.HTTPGet == nil || p.probe.HTTPGet.Path != p.path || p.probe.HTTPGet.Port.String() != activity.HTTPPortName {
			t.Errorf("%s probe %+v, want GET %s on %s", p.name, p.probe, p.path, activity.HTTPPortName)
		}
	}
	if len(c.VolumeMounts) != 0 {
		t.Errorf("mounts %v without an access Secret", c.VolumeMounts)
	}
	sc := c.SecurityContext
	if !ptr.Deref(sc.RunAsNonRoot, false) || ptr.Deref(sc.AllowPrivilegeEscalation, true) || !ptr.Deref(sc.ReadOnlyRootFilesystem, false) {
		t.Errorf("security context %+v", sc)
	}
}

// TestSidecarAccess: with an access Secret the sidecar mounts it read-only
// and is told the token file; the token is in no argument or variable.
func TestSidecarAccess(t *testing.T) {
	c := Container("example.com/activity:v1", 6006, "w-access")
	if diff := cmp.Diff([]string{"--upstream=http://127.0.0.1:6006", "--access-token-file=/var/run/t9k/access/token"}, c.Args); diff != "" {
		t.Errorf("args (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]corev1.VolumeMount{{Name: activity.AccessVolumeName, MountPath: activity.AccessTokenDir, ReadOnly: true}}, c.VolumeMounts); diff != "" {
		t.Errorf("mounts (-want +got):\n%s", diff)
	}
	if len(c.Env) != 0 || len(c.EnvFrom) != 0 {
		t.Errorf("env %v %v", c.Env, c.EnvFrom)
	}
	v := AccessVolume("w-access")
	if v.Name != activity.AccessVolumeName || v.Secret == nil || v.Secret.SecretName != "w-access" ||
		len(v.Secret.Items) != 1 || v.Secret.Items[0].Key != activity.AccessTokenKey || v.Secret.Items[0].Path != activity.AccessTokenKey {
		t.Errorf("volume %+v", v)
	}
}
