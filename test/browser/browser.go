// Package browser drives a real headless Chromium (Debian's chromium)
// from tests through the DevTools protocol (chromedp), so that a test sees
// pages as a person does, and saves screenshots of them.
//
// Screenshots go to $ACCELSTACK_SCREENSHOTS when it is set (docs/images
// for the manual's pictures), else to a directory of the test's.
package browser

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/input"
	"github.com/chromedp/chromedp"

	"github.com/accelstack/accelstack/test/testutil"
)

// Width and Height are the window's size, and the screenshots'.
const (
	Width  = 1280
	Height = 800
)

// Path returns the Chromium binary: $ACCELSTACK_CHROMIUM, else chromium
// on $PATH.
func Path() (string, error) {
	if p := os.Getenv("ACCELSTACK_CHROMIUM"); p != "" {
		return p, nil
	}
	p, err := exec.LookPath("chromium")
	if err != nil {
		return "", fmt.Errorf("no chromium on $PATH (apt-get install chromium) and no $ACCELSTACK_CHROMIUM: %w", err)
	}
	return p, nil
}

// New starts a headless Chromium for t, with a fresh profile, that
// accepts any server certificate (the gateways of the tests are
// self-signed), and returns the context of its first tab; everything ends
// with the test. A missing Chromium fails the test.
func New(t testutil.T) context.Context {
	t.Helper()
	path, err := Path()
	if err != nil {
		t.Fatal(err)
	}
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(path),
		chromedp.UserDataDir(t.TempDir()),
		chromedp.WindowSize(Width, Height),
		chromedp.Flag("ignore-certificate-errors", true),
		// The tests run as root, where Chromium's sandbox does not start.
		chromedp.NoSandbox,
		chromedp.Flag("disable-dev-shm-usage", true),
	)
	allocCtx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancel := chromedp.NewContext(allocCtx, chromedp.WithLogf(t.Logf))
	t.Cleanup(func() {
		cancel()
		cancelAlloc()
	})
	if err := chromedp.Do(ctx); err != nil {
		t.Fatalf("starting %s: %v", path, err)
	}
	return ctx
}

// Do runs steps in the browser of ctx within timeout, failing the test
// with what, the page's address and the start of its text on an error.
// Steps that fail on Chromium's error page for a network change (a local
// cluster beside the test adds interfaces, and Chromium then aborts what
// is in flight: ERR_NETWORK_CHANGED) run once more.
func Do(ctx context.Context, t testutil.T, what string, timeout time.Duration, steps ...chromedp.Action[chromedp.Void]) {
	t.Helper()
	for try := 0; ; try++ {
		tctx, cancel := context.WithTimeout(ctx, timeout)
		err := chromedp.Do(tctx, steps...)
		cancel()
		if err != nil && try == 0 && NetworkChanged(ctx) {
			t.Logf("%s: the browser saw the network change (%v); once more", what, err)
			continue
		}
		if err != nil {
			t.Fatalf("%s: %v (at %s)", what, err, Page(ctx))
		}
		return
	}
}

// NetworkChanged reports whether the page of ctx is Chromium's error page
// for a request it aborted because the host's network changed.
func NetworkChanged(ctx context.Context) bool {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	url, _ := chromedp.Run(ctx, chromedp.Location())
	if !strings.HasPrefix(url, "chrome-error:") {
		return false
	}
	text, _ := chromedp.Run(ctx, chromedp.Evaluate[string]("document.body ? document.body.innerText : ''"))
	return strings.Contains(text, "ERR_NETWORK_CHANGED")
}

// Login opens url, which needs a login, and logs in at the login form as
// user, until the element waitFor (a CSS selector) of the page shows. A
// login that a network change interrupts (see Do) starts again from url:
// the identity provider's one-time verifiers rule out going on.
func Login(ctx context.Context, t testutil.T, url, user, password, waitFor string) {
	t.Helper()
	state := "location.href.startsWith('chrome-error:') ? 'error' : document.getElementById('password') ? 'form' : document.querySelector(" +
		strconv.Quote(waitFor) + ") ? 'done' : ''"
	for try := 0; try < 3; try++ {
		Do(ctx, t, "opening "+url, 2*time.Minute, chromedp.Navigate(url))
		if awaitState(ctx, t, state, "form", "done", "error") == "form" {
			Do(ctx, t, "logging in", 2*time.Minute,
				chromedp.SendKeys(chromedp.ID("username"), user),
				chromedp.SendKeys(chromedp.ID("password"), password),
				chromedp.Click(chromedp.CSS(`button[type="submit"]`)))
		}
		if awaitState(ctx, t, state, "done", "error") == "done" {
			return
		}
		t.Logf("the login was interrupted (at %s); again", Page(ctx))
	}
	t.Fatalf("logging in at %s: interrupted three times (at %s)", url, Page(ctx))
}

// awaitState evaluates the JavaScript expression state in the page until
// it is one of want, across the navigations of a login, and returns it.
func awaitState(ctx context.Context, t testutil.T, state string, want ...string) string {
	t.Helper()
	deadline := time.Now().Add(2 * time.Minute)
	for time.Now().Before(deadline) {
		ectx, cancel := context.WithTimeout(ctx, 5*time.Second)
		v, err := chromedp.Run(ectx, chromedp.Evaluate[string](state))
		cancel()
		if err == nil && slices.Contains(want, v) {
			return v
		}
		time.Sleep(200 * time.Millisecond)
	}
	t.Fatalf("the page never came to %v (at %s)", want, Page(ctx))
	return ""
}

// Page describes the page of ctx for a failure: its address and the start
// of its text.
func Page(ctx context.Context) string {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	url, _ := chromedp.Run(ctx, chromedp.Location())
	text, _ := chromedp.Run(ctx, chromedp.Evaluate[string]("document.body ? document.body.innerText : ''"))
	return fmt.Sprintf("%s: %.500s", url, text)
}

// Text returns the text of the page of ctx.
func Text(ctx context.Context, t testutil.T) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	text, err := chromedp.Run(ctx, chromedp.Evaluate[string]("document.body.innerText"))
	if err != nil {
		t.Fatalf("the page's text: %v", err)
	}
	return text
}

// Screenshot saves the page of ctx as <name>.png into the screenshot
// directory and returns its path.
func Screenshot(ctx context.Context, t testutil.T, name string) string {
	t.Helper()
	dir := os.Getenv("ACCELSTACK_SCREENSHOTS")
	if dir == "" {
		dir = t.TempDir()
	}
	sctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	png, err := chromedp.Run(sctx, chromedp.CaptureScreenshot())
	if err != nil {
		t.Fatalf("a screenshot of %s: %v (at %s)", name, err, Page(ctx))
	}
	p := filepath.Join(dir, name+".png")
	if err := os.WriteFile(p, png, 0o644); err != nil { //nolint:gosec // a picture for the docs
		t.Fatal(err)
	}
	t.Logf("screenshot %s", p)
	return p
}

// Eval runs the JavaScript expression, which ends in a boolean, in the
// page.
func Eval(expression string) chromedp.Action[chromedp.Void] {
	return func(ctx context.Context, t *chromedp.Target) (chromedp.Void, error) {
		_, err := chromedp.Evaluate[bool](expression)(ctx, t)
		return chromedp.Void{}, err
	}
}

// WaitTrue waits until the JavaScript expression is true in the page.
func WaitTrue(expression string) chromedp.Action[chromedp.Void] {
	return func(ctx context.Context, t *chromedp.Target) (chromedp.Void, error) {
		_, err := chromedp.Poll[bool](expression)(ctx, t)
		return chromedp.Void{}, err
	}
}

// InsertText enters text into the focused element as an input method
// does: one input event with all of it. A terminal (xterm.js) takes the
// characters of key events from their keypress, and the key events the
// DevTools protocol synthesizes give it each character twice.
func InsertText(text string) chromedp.Action[chromedp.Void] {
	return func(ctx context.Context, t *chromedp.Target) (chromedp.Void, error) {
		_, err := cdp.Call(ctx, t, input.InsertText, input.InsertTextParams{Text: text})
		return chromedp.Void{}, err
	}
}

// SetValue sets the value of the form field (an input, a text area, a
// select) that the CSS selector sel picks, as typing or picking would: the
// page sees an input and a change event.
func SetValue(sel, value string) chromedp.Action[chromedp.Void] {
	return Eval(`(() => { const el = document.querySelector(` + strconv.Quote(sel) + `);
		el.value = ` + strconv.Quote(value) + `;
		for (const type of ['input', 'change']) el.dispatchEvent(new Event(type, {bubbles: true}));
		return true; })()`)
}

// TextOf waits for the element sel picks and returns its text.
func TextOf(ctx context.Context, t testutil.T, sel string) string {
	t.Helper()
	tctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	text, err := chromedp.Run(tctx, chromedp.Text(chromedp.CSS(sel)))
	if err != nil {
		t.Fatalf("the text of %s: %v (at %s)", sel, err, Page(ctx))
	}
	return text
}
