package mlservice

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
)

// TestMergePodSpec checks the seed's merge rules: containers merge by name
// and new names are appended, scalars are overridden, lists such as args
// are replaced whole.
func TestMergePodSpec(t *testing.T) {
	base := corev1.PodSpec{Containers: []corev1.Container{{Name: "user-container", Image: "a:1", Args: []string{"x", "y"}, WorkingDir: "/w"}}}
	for _, tc := range []struct {
		name  string
		patch string
		want  []corev1.Container
	}{
		{"none", ``, base.Containers},
		{"image overridden", `{"containers":[{"name":"user-container","image":"a:2"}]}`,
			[]corev1.Container{{Name: "user-container", Image: "a:2", Args: []string{"x", "y"}, WorkingDir: "/w"}}},
		{"args replaced", `{"containers":[{"name":"user-container","args":["z"]}]}`,
			[]corev1.Container{{Name: "user-container", Image: "a:1", Args: []string{"z"}, WorkingDir: "/w"}}},
		{"container appended", `{"containers":[{"name":"side","image":"s"}]}`,
			[]corev1.Container{{Name: "user-container", Image: "a:1", Args: []string{"x", "y"}, WorkingDir: "/w"}, {Name: "side", Image: "s"}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := mergePodSpec(base, []byte(tc.patch))
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, got.Containers); diff != "" {
				t.Errorf("containers (-want +got):\n%s", diff)
			}
		})
	}
}

// TestWeight checks the global URL's split: the canary's percent, the
// rest to the default, 0 to the other releases.
func TestWeight(t *testing.T) {
	m := seed()
	if got := []int32{weight(m, "a"), weight(m, "b"), weight(m, "c")}; !cmp.Equal(got, []int32{70, 30, 0}) {
		t.Errorf("weights %v", got)
	}
	m.Spec.Canary = ""
	if weight(m, "a") != 100 || weight(m, "b") != 0 {
		t.Errorf("without canary: %d %d", weight(m, "a"), weight(m, "b"))
	}
}
