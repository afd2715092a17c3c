package reclaim

import (
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	tensorstackv1beta1 "github.com/accelstack/accelstack/api/tensorstack/v1beta1"
	"github.com/accelstack/accelstack/pkg/activity"
	notebookpkg "github.com/accelstack/accelstack/pkg/notebook"
)

// accessSecret is the access Secret of nb holding token, owned by owner.
func accessSecret(nb *tensorstackv1beta1.Notebook, owner metav1.Object, token string) *corev1.Secret {
	return &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Namespace: nb.Namespace, Name: notebookpkg.ObjectName(nb.UID) + "-access",
			OwnerReferences: []metav1.OwnerReference{{APIVersion: "tensorstack.dev/v1beta1", Kind: "Notebook",
				Name: owner.GetName(), UID: owner.GetUID(), Controller: ptr.To(true)}}},
		Data: map[string][]byte{activity.AccessTokenKey: []byte(token)},
	}
}

// TestKeeperSendsAccessToken: the Keeper's calls to Jupyter through the
// sidecar carry the Notebook's access token as the sidecar's cookie, and
// Jupyter's own token in Authorization; the sidecar's report needs none.
func TestKeeperSendsAccessToken(t *testing.T) {
	f := newFixture(t, nil, nil)
	const token = "feedfacefeedfacefeedfacefeedfacefeedfacefeedfacefeedfacefeedface"
	nb, srv := f.notebook(testNS, "guarded", tensorstackv1beta1.NotebookJupyter, 0, corev1.EnvVar{Name: "JUPYTER_TOKEN", Value: "jt"})
	f.create(accessSecret(nb, nb, token))

	f.clock.Step(time.Minute)
	f.probe()
	jupyter := 0
	for _, r := range srv.Requests() {
		if r.Path == activity.ReportPath {
			if r.Cookie != "" {
				t.Errorf("the report request carried cookie %q", r.Cookie)
			}
			continue
		}
		jupyter++
		if r.Cookie != activity.AccessCookie+"="+token || r.Authorization != "token jt" {
			t.Errorf("Jupyter request %s: cookie %q authorization %q", r.Path, r.Cookie, r.Authorization)
		}
	}
	if jupyter == 0 {
		t.Fatal("no Jupyter request")
	}
	if strings.Contains(strings.Join(f.events.of(nb.Name), "\n"), token) {
		t.Error("an event holds the access token")
	}
}

// TestKeeperAccessSecretNotOwned: an access Secret that is not the
// Notebook's is not sent; Jupyter's evidence is unknown.
func TestKeeperAccessSecretNotOwned(t *testing.T) {
	f := newFixture(t, nil, nil)
	nb, srv := f.notebook(testNS, "foreign", tensorstackv1beta1.NotebookJupyter, 0)
	other := &tensorstackv1beta1.Notebook{ObjectMeta: metav1.ObjectMeta{Name: "other", UID: "other-uid"}}
	f.create(accessSecret(nb, other, "planted"))

	f.clock.Step(2 * time.Hour)
	f.probe()
	for _, r := range srv.Requests() {
		if r.Path != activity.ReportPath {
			t.Errorf("the Keeper called Jupyter (%s, cookie %q) with another's access Secret", r.Path, r.Cookie)
		}
	}
	f.wantIdle(nb, corev1.ConditionTrue, ReasonNoActivity, "Jupyter unknown", "is not the workload's")
}
