//go:build e2e

package e2e

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	tensorstackv1beta1 "github.com/accelstack/accelstack/api/tensorstack/v1beta1"
	"github.com/accelstack/accelstack/pkg/console"
	"github.com/accelstack/accelstack/pkg/notebook"
	"github.com/accelstack/accelstack/test/browser"
	"github.com/accelstack/accelstack/test/cluster"
)

// helloNotebook is a notebook of one cell, for Jupyter's contents API.
const helloNotebook = `{"type":"notebook","content":{"cells":[{"cell_type":"code","source":"print(6 * 7)","metadata":{},"outputs":[],"execution_count":null}],"metadata":{},"nbformat":4,"nbformat_minor":5}}`

// TestBrowserOpensNotebook: the demo user, in Chromium, opens a Notebook of
// a Project their group is a member of through the gateway the local
// cluster installs, logs in at the form Hydra sends them to, sees
// Jupyter, runs a cell on a kernel (over the gateway's WebSocket) and
// reads its output, then runs a command in the Build Console's terminal
// of the Notebook's pod; another Project's Notebook answers 403. The
// screenshots are those of docs/access.md and docs/console.md.
func TestBrowserOpensNotebook(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	t.Cleanup(cancel)
	c := crClient(t)
	ns := newProjectE2E(t, c, "0")
	bindDemoUsers(ctx, t, c, ns)
	nb := &tensorstackv1beta1.Notebook{
		ObjectMeta: metav1.ObjectMeta{Name: "lab", Namespace: ns},
		Spec:       tensorstackv1beta1.NotebookSpec{Template: tensorstackv1beta1.NotebookTemplateSpec{Spec: jupyterPodSpec()}},
	}
	if err := c.Create(ctx, nb); err != nil {
		t.Fatal(err)
	}
	nb = waitNotebook(ctx, t, c, nb, "Ready", notebookReady)
	password, err := clus.DemoPassword()
	if err != nil {
		t.Fatal(err)
	}
	base := cluster.GatewayURL + notebook.URLPrefix(ns, nb.Name)

	b := browser.New(t)
	// The login form comes first; the login ends on whatever page the
	// gateway returns to.
	browser.Login(b, t, base+"tree", cluster.DemoUser, password, "body")
	// The login returns to the page asked for; should it land on Jupyter's
	// default page instead, a person opens the file list, as here.
	steps := []chromedp.Action[chromedp.Void]{chromedp.WaitVisible(chromedp.ID("notebook_list"))}
	if landed, err := chromedp.Run(b, chromedp.Location()); err != nil || !strings.HasSuffix(landed, "/tree") {
		t.Logf("the login returned to %s (%v); opening the file list", landed, err)
		steps = append([]chromedp.Action[chromedp.Void]{chromedp.Navigate(base + "tree")}, steps...)
	}
	// A page that has not come after a while is loaded again, as a person
	// would (a loaded machine once held the file list's first load).
	for try := 0; ; try++ {
		tctx, tcancel := context.WithTimeout(b, 90*time.Second)
		err := chromedp.Do(tctx, steps...)
		tcancel()
		if err == nil {
			break
		}
		if try == 1 {
			t.Fatalf("seeing the file list: %v (at %s)", err, browser.Page(b))
		}
		t.Logf("the file list did not show (%v, at %s); loading it again", err, browser.Page(b))
		steps = []chromedp.Action[chromedp.Void]{chromedp.Navigate(base + "tree"), chromedp.WaitVisible(chromedp.ID("notebook_list"))}
	}
	browser.Screenshot(b, t, "notebook-tree")

	// The notebook file comes through Jupyter's contents API, from the
	// page, with the browser's session; the cell runs in Jupyter's page.
	create := `fetch("` + base + `api/contents/hello.ipynb", {method: "PUT", headers: {"Content-Type": "application/json"}, body: ` + "`" + helloNotebook + "`" + `}).then(r => r.status)`
	// The file list may still be loading when the page shows: a fetch
	// then can fail; a person would try again.
	var status int
	for try := 0; try < 5 && status != 201; try++ {
		cctx, ccancel := context.WithTimeout(b, time.Minute)
		status, err = chromedp.Run(cctx, chromedp.Evaluate[int](create, chromedp.EvalAwaitPromise))
		ccancel()
		if status != 201 {
			t.Logf("creating hello.ipynb from the page: %d, %v", status, err)
			time.Sleep(2 * time.Second)
		}
	}
	if status != 201 {
		t.Fatalf("creating hello.ipynb from the page: %d, %v (at %s)", status, err, browser.Page(b))
	}
	browser.Do(b, t, "running the cell", 3*time.Minute,
		chromedp.Navigate(base+"notebooks/hello.ipynb"),
		browser.WaitTrue("Jupyter.notebook && Jupyter.notebook.kernel && Jupyter.notebook.kernel.is_connected()"),
		browser.Eval("Jupyter.notebook.execute_all_cells(); true"),
		chromedp.WaitVisible(chromedp.CSS(".output_subarea pre")))
	tctx, tcancel := context.WithTimeout(b, 30*time.Second)
	defer tcancel()
	if out, err := chromedp.Run(tctx, chromedp.Text(chromedp.CSS(".output_subarea pre"))); err != nil || strings.TrimSpace(out) != "42" {
		t.Errorf("the cell's output: %q, %v; want 42", out, err)
	}
	browser.Screenshot(b, t, "notebook-cell")

	// The Build Console's terminal of the Notebook's pod: a shell by the
	// exec API over a WebSocket through the gateway, as the demo user.
	pod := notebook.PodName(notebook.ObjectName(nb.UID))
	browser.Do(b, t, "the pod's terminal in the Build Console", 2*time.Minute,
		browser.Eval("window.onbeforeunload = null; true"),
		chromedp.Navigate(cluster.GatewayURL+console.BuildPrefix+"projects/"+ns+"/pods/"+pod+"?tab=terminal"),
		chromedp.WaitVisible(chromedp.CSS(`.terminal-state[data-state="open"]`)),
		chromedp.WaitVisible(chromedp.CSS(`.terminal .xterm-rows`)),
		chromedp.Click(chromedp.CSS(`.terminal .xterm-screen`)),
		browser.InsertText("echo term-$((6*7))"),
		chromedp.KeyEvent("\r"),
		browser.WaitTrue(`document.querySelector('.terminal .xterm-rows').innerText.includes('term-42')`))
	browser.Screenshot(b, t, "console-terminal")

	other := newNamespace(t)
	browser.Do(b, t, "another namespace's Notebook", time.Minute,
		// Jupyter asks before leaving a notebook; a person would say yes.
		browser.Eval("window.onbeforeunload = null; true"),
		chromedp.Navigate(cluster.GatewayURL+notebook.URLPrefix(other, "lab")+"tree"))
	if text := browser.Text(b, t); !strings.HasPrefix(text, "forbidden") {
		t.Errorf("another namespace's Notebook shows %q, want the gateway's 403", text)
	}
}
