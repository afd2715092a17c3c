package notebook

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"

	schedulerv1beta1 "github.com/accelstack/accelstack/api/scheduler/v1beta1"
	tensorstackv1beta1 "github.com/accelstack/accelstack/api/tensorstack/v1beta1"
	"github.com/accelstack/accelstack/pkg/activity"
)

const testImage = "example.com/activity-proxy:v1"

func container(t *testing.T, spec corev1.PodSpec, name string) corev1.Container {
	t.Helper()
	for _, c := range spec.Containers {
		if c.Name == name {
			return c
		}
	}
	t.Fatalf("no container %s in %+v", name, spec.Containers)
	return corev1.Container{}
}

func TestObjectName(t *testing.T) {
	a, b := ObjectName("uid-a"), ObjectName("uid-b")
	if a == b || len(a) != len("managed-notebook-")+8 || a[:len("managed-notebook-")] != "managed-notebook-" {
		t.Errorf("ObjectName = %q, %q", a, b)
	}
	if ObjectName("uid-a") != a {
		t.Error("ObjectName is not stable")
	}
	if PodName(a) != a+"-0" || SSHServiceName(a) != a+"-ssh" {
		t.Errorf("PodName %q SSHServiceName %q", PodName(a), SSHServiceName(a))
	}
	nb := makeNotebook("demo", "tutorial").obj()
	want := "http://" + ObjectName(nb.UID) + ".demo.svc.cluster.local/t9k/notebooks/projects/demo/name/tutorial/"
	if got := URL("", nb); got != want {
		t.Errorf("URL = %q, want %q", got, want)
	}
}

func TestStatefulSet(t *testing.T) {
	nb := makeNotebook("demo", "tutorial").obj()
	name := ObjectName(nb.UID)
	sts := statefulSet(nb, name, testImage, nil)

	if sts.Name != name || sts.Namespace != "demo" || ptr.Deref(sts.Spec.Replicas, 0) != 1 || sts.Spec.ServiceName != name {
		t.Errorf("StatefulSet %s/%s replicas %v serviceName %q", sts.Namespace, sts.Name, sts.Spec.Replicas, sts.Spec.ServiceName)
	}
	if diff := cmp.Diff(map[string]string{NotebookLabelKey: name}, sts.Spec.Selector.MatchLabels); diff != "" {
		t.Errorf("selector (-want +got):\n%s", diff)
	}
	wantLabels := map[string]string{
		NotebookLabelKey: name, "app.kubernetes.io/name": "notebook", "app.kubernetes.io/instance": "tutorial",
		"app.kubernetes.io/component": "notebook", "app.kubernetes.io/managed-by": "accelstack",
	}
	if diff := cmp.Diff(wantLabels, sts.Spec.Template.Labels); diff != "" {
		t.Errorf("pod labels (-want +got):\n%s", diff)
	}
	if sts.Spec.PodManagementPolicy != appsv1.ParallelPodManagement {
		t.Errorf("podManagementPolicy %q", sts.Spec.PodManagementPolicy)
	}
	spec := sts.Spec.Template.Spec
	if spec.RestartPolicy != corev1.RestartPolicyAlways || spec.SchedulerName != "" {
		t.Errorf("restartPolicy %q schedulerName %q", spec.RestartPolicy, spec.SchedulerName)
	}
	if sc := spec.SecurityContext; ptr.Deref(sc.FSGroup, 0) != 1000 || ptr.Deref(sc.FSGroupChangePolicy, "") != corev1.FSGroupChangeOnRootMismatch {
		t.Errorf("security context %+v", sc)
	}
	nbc := container(t, spec, tensorstackv1beta1.NotebookContainer)
	if diff := cmp.Diff([]corev1.EnvVar{{Name: NBPrefixEnv, Value: "/t9k/notebooks/projects/demo/name/tutorial"}}, nbc.Env); diff != "" {
		t.Errorf("notebook env (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]corev1.ContainerPort{{Name: "notebook", ContainerPort: JupyterPort, Protocol: corev1.ProtocolTCP}}, nbc.Ports); diff != "" {
		t.Errorf("notebook ports (-want +got):\n%s", diff)
	}
	if len(nbc.VolumeMounts) != 1 || len(spec.Volumes) != 2 || spec.Volumes[1].Secret == nil || spec.Volumes[1].Secret.SecretName != name+"-access" {
		t.Errorf("volumes %+v mounts %+v, want the template's and the access Secret", spec.Volumes, nbc.VolumeMounts)
	}
	side := container(t, spec, activity.ContainerName)
	if side.Image != testImage || !cmp.Equal(side.Args, []string{"--upstream=http://127.0.0.1:8888", "--access-token-file=/var/run/t9k/access/token"}) {
		t.Errorf("sidecar image %q args %q", side.Image, side.Args)
	}
	if p := side.ReadinessProbe.HTTPGet; p.Path != activity.ReadyzPath {
		t.Errorf("sidecar readiness probe %+v, want %s: ready when the server listens", p, activity.ReadyzPath)
	}
	if p := side.LivenessProbe.HTTPGet; p.Path != activity.HealthzPath {
		t.Errorf("sidecar liveness probe %+v", p)
	}
	if got := sts.Spec.Template.Annotations["kubectl.kubernetes.io/default-container"]; got != "notebook" {
		t.Errorf("default container %q", got)
	}
	// The Notebook's own template is left alone.
	if len(nb.Spec.Template.Spec.Containers) != 1 || nb.Spec.Template.Spec.Containers[0].Env != nil {
		t.Errorf("the Notebook's template changed: %+v", nb.Spec.Template.Spec.Containers)
	}
}

func TestStatefulSetOptions(t *testing.T) {
	for _, tc := range []struct {
		name  string
		nb    *tensorstackv1beta1.Notebook
		keys  []string
		check func(t *testing.T, sts *appsv1.StatefulSet)
	}{
		{
			name: "suspended",
			nb:   makeNotebook("demo", "nb").suspend().obj(),
			check: func(t *testing.T, sts *appsv1.StatefulSet) {
				if ptr.Deref(sts.Spec.Replicas, 1) != 0 {
					t.Errorf("replicas %v, want 0", sts.Spec.Replicas)
				}
			},
		},
		{
			name: "runMode suspended",
			nb:   makeNotebook("demo", "nb").runMode(tensorstackv1beta1.NotebookRunModeSuspended).obj(),
			check: func(t *testing.T, sts *appsv1.StatefulSet) {
				if ptr.Deref(sts.Spec.Replicas, 1) != 0 {
					t.Errorf("replicas %v, want 0", sts.Spec.Replicas)
				}
			},
		},
		{
			// The Resource Keeper suspends by spec.suspend: it holds over
			// runMode running.
			name: "runMode running and suspend",
			nb:   makeNotebook("demo", "nb").runMode(tensorstackv1beta1.NotebookRunModeRunning).suspend().obj(),
			check: func(t *testing.T, sts *appsv1.StatefulSet) {
				if ptr.Deref(sts.Spec.Replicas, 1) != 0 {
					t.Errorf("replicas %v, want 0", sts.Spec.Replicas)
				}
			},
		},
		{
			name: "runMode running",
			nb:   makeNotebook("demo", "nb").runMode(tensorstackv1beta1.NotebookRunModeRunning).obj(),
			check: func(t *testing.T, sts *appsv1.StatefulSet) {
				if ptr.Deref(sts.Spec.Replicas, 0) != 1 {
					t.Errorf("replicas %v, want 1", sts.Spec.Replicas)
				}
			},
		},
		{
			// The 2023 manual's notebooks name their container after the
			// framework; the first container runs the server.
			name: "no container named notebook",
			nb: makeNotebook("demo", "nb").ssh("", "alice").podSpec(func(s *corev1.PodSpec) {
				s.Containers[0].Name = "tensorflow"
				s.Containers = append(s.Containers, corev1.Container{Name: "helper", Image: "busybox"})
			}).obj(),
			keys: []string{"alice"},
			check: func(t *testing.T, sts *appsv1.StatefulSet) {
				spec := sts.Spec.Template.Spec
				c := container(t, spec, "tensorflow")
				if !hasEnv(c.Env, NBPrefixEnv) || !hasPort(c.Ports, JupyterPort) || len(c.VolumeMounts) != 2 {
					t.Errorf("main container env %+v ports %+v mounts %+v, want NB_PREFIX, 8888 and the keys", c.Env, c.Ports, c.VolumeMounts)
				}
				if h := container(t, spec, "helper"); len(h.Env) != 0 || len(h.Ports) != 0 || len(h.VolumeMounts) != 0 {
					t.Errorf("second container changed: %+v", h)
				}
				if got := sts.Spec.Template.Annotations["kubectl.kubernetes.io/default-container"]; got != "tensorflow" {
					t.Errorf("default container %q", got)
				}
			},
		},
		{
			name: "rstudio",
			nb:   makeNotebook("demo", "nb").typ(tensorstackv1beta1.NotebookRStudio).obj(),
			check: func(t *testing.T, sts *appsv1.StatefulSet) {
				side := container(t, sts.Spec.Template.Spec, activity.ContainerName)
				if side.Args[0] != "--upstream=http://127.0.0.1:8787" {
					t.Errorf("sidecar args %q, want RStudio's port", side.Args)
				}
				if p := container(t, sts.Spec.Template.Spec, "notebook").Ports; len(p) != 1 || p[0].ContainerPort != RStudioPort {
					t.Errorf("notebook ports %+v", p)
				}
			},
		},
		{
			name: "T9k Scheduler",
			nb:   makeNotebook("demo", "nb").queue("research").obj(),
			check: func(t *testing.T, sts *appsv1.StatefulSet) {
				if s := sts.Spec.Template.Spec.SchedulerName; s != schedulerv1beta1.SchedulerName {
					t.Errorf("schedulerName %q", s)
				}
				if q := sts.Spec.Template.Labels[schedulerv1beta1.QueueLabel]; q != "research" {
					t.Errorf("queue label %q", q)
				}
				if _, ok := sts.Labels[schedulerv1beta1.QueueLabel]; ok {
					t.Error("the StatefulSet carries the pods' queue label")
				}
			},
		},
		{
			name: "template's own values kept",
			nb: makeNotebook("demo", "nb").podSpec(func(s *corev1.PodSpec) {
				s.RestartPolicy = corev1.RestartPolicyNever
				s.SecurityContext = &corev1.PodSecurityContext{FSGroup: ptr.To[int64](100)}
				c := &s.Containers[0]
				c.Env = []corev1.EnvVar{{Name: NBPrefixEnv, Value: "/custom"}}
				c.Ports = []corev1.ContainerPort{{Name: "jupyter", ContainerPort: 8888}}
			}).obj(),
			check: func(t *testing.T, sts *appsv1.StatefulSet) {
				spec := sts.Spec.Template.Spec
				if spec.RestartPolicy != corev1.RestartPolicyAlways {
					t.Errorf("restartPolicy %q, want Always (a StatefulSet's)", spec.RestartPolicy)
				}
				if ptr.Deref(spec.SecurityContext.FSGroup, 0) != 100 || spec.SecurityContext.FSGroupChangePolicy != nil {
					t.Errorf("security context %+v, want the template's", spec.SecurityContext)
				}
				c := container(t, spec, "notebook")
				if diff := cmp.Diff([]corev1.EnvVar{{Name: NBPrefixEnv, Value: "/custom"}}, c.Env); diff != "" {
					t.Errorf("env (-want +got):\n%s", diff)
				}
				if diff := cmp.Diff([]corev1.ContainerPort{{Name: "jupyter", ContainerPort: 8888}}, c.Ports); diff != "" {
					t.Errorf("ports (-want +got):\n%s", diff)
				}
			},
		},
		{
			name: "SSH keys",
			nb:   makeNotebook("demo", "nb").ssh("", "alice", "bob").obj(),
			keys: []string{"alice", "bob"},
			check: func(t *testing.T, sts *appsv1.StatefulSet) {
				spec := sts.Spec.Template.Spec
				want := corev1.Volume{Name: sshKeysVolume, VolumeSource: corev1.VolumeSource{Projected: &corev1.ProjectedVolumeSource{
					DefaultMode: ptr.To[int32](0o444),
					Sources: []corev1.VolumeProjection{
						{Secret: &corev1.SecretProjection{LocalObjectReference: corev1.LocalObjectReference{Name: "alice"}, Items: []corev1.KeyToPath{{Key: "ssh-publickey", Path: "alice"}}}},
						{Secret: &corev1.SecretProjection{LocalObjectReference: corev1.LocalObjectReference{Name: "bob"}, Items: []corev1.KeyToPath{{Key: "ssh-publickey", Path: "bob"}}}},
					},
				}}}
				var got corev1.Volume
				for _, v := range spec.Volumes {
					if v.Name == sshKeysVolume {
						got = v
					}
				}
				if diff := cmp.Diff(want, got); diff != "" {
					t.Errorf("keys volume (-want +got):\n%s", diff)
				}
				mounts := container(t, spec, "notebook").VolumeMounts
				if diff := cmp.Diff(corev1.VolumeMount{Name: sshKeysVolume, MountPath: SSHKeysDir, ReadOnly: true}, mounts[len(mounts)-1]); diff != "" {
					t.Errorf("keys mount (-want +got):\n%s", diff)
				}
				if m := container(t, spec, activity.ContainerName).VolumeMounts; len(m) != 1 || m[0].Name != activity.AccessVolumeName {
					t.Errorf("the sidecar mounts %+v, want the access Secret only", m)
				}
			},
		},
		{
			name: "SSH without a valid key",
			nb:   makeNotebook("demo", "nb").ssh("", "missing").obj(),
			check: func(t *testing.T, sts *appsv1.StatefulSet) {
				if len(sts.Spec.Template.Spec.Volumes) != 2 {
					t.Errorf("volumes %+v, want no keys volume", sts.Spec.Template.Spec.Volumes)
				}
			},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.check(t, statefulSet(tc.nb, ObjectName(tc.nb.UID), testImage, tc.keys))
		})
	}
}

func TestServices(t *testing.T) {
	nb := makeNotebook("demo", "nb").ssh(corev1.ServiceTypeNodePort).obj()
	name := ObjectName(nb.UID)
	svc := httpService(nb, name)
	want := []corev1.ServicePort{{Name: "http", Port: 80, TargetPort: intstr.FromInt32(activity.HTTPPort), Protocol: corev1.ProtocolTCP}}
	if diff := cmp.Diff(want, svc.Spec.Ports); diff != "" || svc.Name != name || svc.Spec.Type != corev1.ServiceTypeClusterIP {
		t.Errorf("Service %s type %s ports (-want +got):\n%s", svc.Name, svc.Spec.Type, diff)
	}
	ssh := sshService(nb, name)
	want = []corev1.ServicePort{{Name: "ssh", Port: 22, TargetPort: intstr.FromInt32(activity.SSHPort), Protocol: corev1.ProtocolTCP}}
	if diff := cmp.Diff(want, ssh.Spec.Ports); diff != "" || ssh.Name != name+"-ssh" || ssh.Spec.Type != corev1.ServiceTypeNodePort {
		t.Errorf("SSH Service %s type %s ports (-want +got):\n%s", ssh.Name, ssh.Spec.Type, diff)
	}
	for _, s := range []*corev1.Service{svc, ssh} {
		if diff := cmp.Diff(map[string]string{NotebookLabelKey: name}, s.Spec.Selector); diff != "" {
			t.Errorf("%s selector (-want +got):\n%s", s.Name, diff)
		}
	}
	if typ := sshService(makeNotebook("demo", "nb").ssh("").obj(), name).Spec.Type; typ != corev1.ServiceTypeClusterIP {
		t.Errorf("default SSH Service type %s", typ)
	}
}
