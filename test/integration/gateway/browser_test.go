package gateway

import (
	"context"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	chromium "github.com/accelstack/accelstack/test/browser"
)

// browserTests: a person in Chromium opens the Notebook, is sent to the
// login form, mistypes the password, logs in, and lands on the Notebook,
// all on the gateway's host (the browser refuses a form whose post is
// redirected to a provider on plain HTTP). The screenshots are the login
// pages of docs/access.md.
func browserTests(t *testing.T, e *env, gw *httptest.Server, nb string) {
	ctx := chromium.New(t)
	chromium.Do(ctx, t, "opening the Notebook", time.Minute,
		chromedp.Navigate(gw.URL+nb),
		chromedp.WaitVisible(chromedp.ID("password")))
	chromium.Screenshot(ctx, t, "login-form")

	chromium.Do(ctx, t, "a wrong password", time.Minute,
		chromedp.SendKeys(chromedp.ID("username"), "erin"),
		chromedp.SendKeys(chromedp.ID("password"), "not-the-password"),
		chromedp.Click(chromedp.CSS(`button[type="submit"]`)),
		chromedp.WaitVisible(chromedp.CSS(`p.error`)))
	if text := chromium.Text(ctx, t); !strings.Contains(text, "wrong user name or password") {
		t.Errorf("the page after a wrong password says:\n%s", text)
	}
	chromium.Screenshot(ctx, t, "login-wrong-password")

	// The form keeps the user name; the password is typed again.
	chromium.Do(ctx, t, "logging in", time.Minute,
		chromedp.SendKeys(chromedp.ID("password"), "erin-pw"),
		chromedp.Click(chromedp.CSS(`button[type="submit"]`)),
		chromedp.WaitNotPresent(chromedp.ID("password")))
	if chromium.NetworkChanged(ctx) {
		t.Log("the login was interrupted by a network change; again")
		chromium.Login(ctx, t, gw.URL+nb, "erin", "erin-pw", "pre")
	}
	ctx2, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	if url, err := chromedp.Run(ctx2, chromedp.Location()); err != nil || url != gw.URL+nb {
		t.Fatalf("the login ended at %s (%v), want %s", chromium.Page(ctx), err, gw.URL+nb)
	}
	if text := chromium.Text(ctx, t); strings.TrimSpace(text) != "ok" {
		t.Errorf("the Notebook's page says %q, want the workload's ok", text)
	}
	select {
	case <-e.reached:
	case <-time.After(30 * time.Second):
		t.Error("the page came, but no request reached the workload")
	}
}
