package gateway

import (
	"context"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	tensorstackv1beta1 "github.com/accelstack/accelstack/api/tensorstack/v1beta1"
	"github.com/accelstack/accelstack/pkg/console"
	"github.com/accelstack/accelstack/pkg/members"
	chromium "github.com/accelstack/accelstack/test/browser"
	"github.com/accelstack/accelstack/test/testutil"
)

// startConsole serves the consoles for the gateways of e.
func (e *env) startConsole(t *testing.T) {
	t.Helper()
	h, err := console.NewHandler(console.DefaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	e.console = httptest.NewServer(h)
	t.Cleanup(e.console.Close)
}

// consoleTests: erin, a member of team-a with the build scope, opens the
// Build Console through the gateway, logs in, lands on her project, sees
// its Notebook, creates one from the form, sees a change made elsewhere
// without reloading, is refused YAML of another project and a value the
// API server refuses (with its message), deletes what she made, and sees
// team-b's objects refused. The screenshots are docs/console.md's.
func consoleTests(t *testing.T, e *env, gw *httptest.Server) {
	ctx := context.Background()
	for _, p := range []string{"team-a", "team-b"} {
		project := &unstructured.Unstructured{}
		project.SetAPIVersion("tensorstack.dev/v1beta1")
		project.SetKind("Project")
		project.SetName(p)
		if err := e.c.Create(ctx, project); err != nil && !apierrors.IsAlreadyExists(err) {
			t.Fatal(err)
		}
	}
	if err := members.Set(ctx, e.c, "team-a", members.Member{Kind: "User", Name: "erin", Scopes: []members.Scope{members.Build}}); err != nil {
		t.Fatal(err)
	}
	base := gw.URL + console.BuildPrefix

	b := chromium.New(t)
	chromium.Do(b, t, "opening the console", time.Minute,
		chromedp.Navigate(base),
		chromedp.WaitVisible(chromedp.ID("password")),
		chromedp.SendKeys(chromedp.ID("username"), "erin"),
		chromedp.SendKeys(chromedp.ID("password"), "erin-pw"),
		chromedp.Click(chromedp.CSS(`button[type="submit"]`)),
		chromedp.WaitVisible(chromedp.CSS(`section.overview .cards`)))
	if got := chromium.TextOf(b, t, "#project-select"); !strings.Contains(got, "team-a (build)") || strings.Contains(got, "team-b") {
		t.Errorf("the project selector offers %q, want team-a with its build scope only", got)
	}
	if got := chromium.TextOf(b, t, "header .user"); got != "erin" {
		t.Errorf("the header shows the user %q", got)
	}
	chromium.Screenshot(b, t, "console-overview")

	chromium.Do(b, t, "the Notebook list", time.Minute,
		chromedp.Click(chromedp.CSS(`nav.side a[href$="/team-a/notebooks"]`)),
		chromedp.WaitVisible(chromedp.CSS(`tr[data-name="nb"]`)))

	chromium.Do(b, t, "creating a Notebook from the form", time.Minute,
		chromedp.Click(chromedp.CSS(`section.list a.button.primary`)),
		chromedp.WaitVisible(chromedp.CSS(`input[name="name"]`)),
		chromium.SetValue(`input[name="name"]`, "lab2"),
		chromium.SetValue(`input[name="image"]`, "jupyter:2"),
		chromium.SetValue(`input[name="cpu"]`, "2"))
	chromium.Screenshot(b, t, "console-create-notebook")
	chromium.Do(b, t, "submitting the form", time.Minute,
		chromedp.Click(chromedp.CSS(`button.create`)),
		chromedp.WaitVisible(chromedp.CSS(`section.detail table.info`)))
	var nb tensorstackv1beta1.Notebook
	if err := e.c.Get(ctx, client.ObjectKey{Namespace: "team-a", Name: "lab2"}, &nb); err != nil {
		t.Fatalf("the Notebook the form created: %v", err)
	}
	if c := nb.Spec.Template.Spec.Containers[0]; c.Image != "jupyter:2" || c.Resources.Limits.Cpu().String() != "2" {
		t.Errorf("the form created a Notebook of image %q, limits %v", c.Image, c.Resources.Limits)
	}
	chromium.Screenshot(b, t, "console-notebook-detail")

	// A change made elsewhere shows on the open list.
	chromium.Do(b, t, "back to the list", time.Minute,
		chromedp.Click(chromedp.CSS(`nav.side a[href$="/team-a/notebooks"]`)),
		chromedp.WaitVisible(chromedp.CSS(`tr[data-name="lab2"]`)))
	if err := e.c.Get(ctx, client.ObjectKey{Namespace: "team-a", Name: "nb"}, &nb); err != nil {
		t.Fatal(err)
	}
	nb.Status.Phase = "Running"
	if err := e.c.Status().Update(ctx, &nb); err != nil {
		t.Fatal(err)
	}
	chromium.Do(b, t, "the list following the Notebook's phase", time.Minute,
		chromedp.WaitVisible(chromedp.CSS(`tr[data-name="nb"] .phase.ok`)))
	chromium.Screenshot(b, t, "console-notebooks")

	t.Run("YAML of another project is refused before it is sent", func(t *testing.T) {
		chromium.Do(b, t, "the YAML editor", time.Minute,
			chromedp.Navigate(base+"projects/team-a/notebooks/-/create"),
			chromedp.WaitVisible(chromedp.CSS(`section.create`)),
			chromedp.Click(chromedp.CSS(`button.to-yaml`)),
			chromedp.WaitVisible(chromedp.CSS(`textarea.yaml-editor`)),
			chromium.SetValue(`textarea.yaml-editor`, "apiVersion: tensorstack.dev/v1beta1\nkind: Notebook\nmetadata: {name: x, namespace: team-b}\nspec: {template: {spec: {containers: [{name: notebook, image: j}]}}}\n"),
			chromedp.Click(chromedp.CSS(`button.create`)),
			chromedp.WaitVisible(chromedp.CSS(`.submit-error .state.error`)))
		if got := chromium.TextOf(b, t, ".submit-error"); !strings.Contains(got, "this page creates in project team-a") {
			t.Errorf("the refusal says %q", got)
		}
	})
	t.Run("the API server's refusal names the field", func(t *testing.T) {
		chromium.Do(b, t, "a bad type", time.Minute,
			chromium.SetValue(`textarea.yaml-editor`, "apiVersion: tensorstack.dev/v1beta1\nkind: Notebook\nmetadata: {name: x}\nspec: {type: vscode, template: {spec: {containers: [{name: notebook, image: j}]}}}\n"),
			chromedp.Click(chromedp.CSS(`button.check`)),
			chromium.WaitTrue(`document.querySelector('.submit-error').innerText.includes('spec.type')`))
		chromium.Screenshot(b, t, "console-create-refused")
		if err := e.c.Get(ctx, client.ObjectKey{Namespace: "team-a", Name: "x"}, &nb); !apierrors.IsNotFound(err) {
			t.Errorf("the refused Notebook: %v", err)
		}
	})
	t.Run("delete", func(t *testing.T) {
		chromium.Do(b, t, "deleting lab2", time.Minute,
			chromedp.Navigate(base+"projects/team-a/notebooks"),
			chromedp.WaitVisible(chromedp.CSS(`tr[data-name="lab2"]`)),
			chromium.Eval(`window.confirm = () => true; true`),
			chromedp.Click(chromedp.CSS(`tr[data-name="lab2"] button.danger`)),
			chromedp.WaitNotPresent(chromedp.CSS(`tr[data-name="lab2"]`)))
		testutil.Poll(ctx, t, "lab2 deleted", func() (bool, string, error) {
			err := e.c.Get(ctx, client.ObjectKey{Namespace: "team-a", Name: "lab2"}, &tensorstackv1beta1.Notebook{})
			return apierrors.IsNotFound(err), "", client.IgnoreNotFound(err)
		})
	})
	t.Run("another project's objects are refused", func(t *testing.T) {
		chromium.Do(b, t, "team-b's Notebooks", time.Minute,
			chromedp.Navigate(base+"projects/team-b/notebooks"),
			chromedp.WaitVisible(chromedp.CSS(`.state.error`)))
		if got := chromium.TextOf(b, t, ".state.error"); !strings.Contains(got, "forbidden") {
			t.Errorf("team-b's list says %q, want the API server's forbidden", got)
		}
		if strings.Contains(chromium.Text(b, t), "nb") && strings.Contains(chromium.Text(b, t), "jupyter") {
			t.Error("team-b's Notebook shows")
		}
	})
}
