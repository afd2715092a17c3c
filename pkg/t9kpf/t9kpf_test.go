package t9kpf

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
)

func TestNotebookOfURL(t *testing.T) {
	for _, tc := range []struct{ url, ns, name string }{
		{"https://platform.example.com/t9k/notebooks/projects/demo/name/ml-labs/lab", "demo", "ml-labs"},
		{"https://platform.example.com/t9k/build-console/projects/demo/notebooks/ml-labs/lab", "demo", "ml-labs"},
		{"https://platform.example.com/t9k/notebooks/projects/demo/name/nb.v2/", "demo", "nb.v2"},
	} {
		ns, name, err := notebookOfURL(tc.url)
		if err != nil || ns != tc.ns || name != tc.name {
			t.Errorf("notebookOfURL(%q) = %q, %q, %v; want %q, %q", tc.url, ns, name, err, tc.ns, tc.name)
		}
	}
	for _, bad := range []string{"https://platform.example.com/t9k/notebooks/", "https://platform.example.com/projects/Demo/name/nb/", "https://x/projects/demo/name/../lab", "::"} {
		if ns, name, err := notebookOfURL(bad); err == nil {
			t.Errorf("notebookOfURL(%q) = %q, %q; want an error", bad, ns, name)
		}
	}
}

func TestPorts(t *testing.T) {
	for _, tc := range []struct {
		arg           string
		local, remote int
	}{{"2222", 0, 2222}, {"3333:2222", 3333, 2222}, {"0:80", 0, 80}} {
		l, r, err := ports(tc.arg)
		if err != nil || l != tc.local || r != tc.remote {
			t.Errorf("ports(%q) = %d, %d, %v", tc.arg, l, r, err)
		}
	}
	for _, bad := range []string{"", "0", "x", "1:", "70000", "1:2:3", "-1:80"} {
		if _, _, err := ports(bad); err == nil {
			t.Errorf("ports(%q) accepted", bad)
		}
	}
}

func TestPodPort(t *testing.T) {
	pod := &corev1.Pod{Spec: corev1.PodSpec{Containers: []corev1.Container{{Ports: []corev1.ContainerPort{{Name: "http", ContainerPort: 8080}}}}}}
	for _, tc := range []struct {
		tp   intstr.IntOrString
		want int
	}{{intstr.FromInt32(9000), 9000}, {intstr.FromString("http"), 8080}, {intstr.IntOrString{}, 80}} {
		if got, err := podPort(pod, tc.tp, 80); err != nil || got != tc.want {
			t.Errorf("podPort(%v) = %d, %v; want %d", tc.tp, got, err, tc.want)
		}
	}
	if _, err := podPort(pod, intstr.FromString("grpc"), 80); err == nil {
		t.Error("a port name the pod does not have was accepted")
	}
}
