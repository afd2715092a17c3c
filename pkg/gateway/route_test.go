package gateway

import (
	"errors"
	"net/http/httptest"
	"testing"

	"github.com/accelstack/accelstack/pkg/webroute"
)

func TestRoute(t *testing.T) {
	rt := Router{Host: "ai.example.com", ServingDomain: "serving.example.com"}
	for _, tc := range []struct {
		host, target string
		want         Route
	}{
		{"ai.example.com", "/t9k/notebooks/projects/demo/name/nb/lab?x=1",
			Route{Resource: Notebooks, Namespace: "demo", Name: "nb", Path: "/t9k/notebooks/projects/demo/name/nb/lab"}},
		{"AI.example.com:443", "/t9k/notebooks/projects/demo/name/nb",
			Route{Resource: Notebooks, Namespace: "demo", Name: "nb", Path: "/t9k/notebooks/projects/demo/name/nb"}},
		{"ai.example.com", "/tensorboard/demo/tb/data/runs",
			Route{Resource: TensorBoards, Namespace: "demo", Name: "tb", Path: "/tensorboard/demo/tb/data/runs"}},
		{"ai.example.com", "/explorer/demo/ex/file-browser/api/resources/",
			Route{Resource: Explorers, Namespace: "demo", Name: "ex", Component: webroute.FileBrowser, Path: "/explorer/demo/ex/file-browser/api/resources/"}},
		{"ai.example.com", "/explorer/demo/ex/code-server/static/out/x.js",
			Route{Resource: Explorers, Namespace: "demo", Name: "ex", Component: webroute.CodeServer, Path: "/static/out/x.js"}},
		{"ai.example.com", "/explorer/demo/ex/code-server/",
			Route{Resource: Explorers, Namespace: "demo", Name: "ex", Component: webroute.CodeServer, Path: "/"}},
		{"ai.example.com", "/t9k/workflow/triggers/demo/el",
			Route{Resource: EventListeners, Namespace: "demo", Name: "el", Path: "/t9k/workflow/triggers/demo/el"}},
		{"mnist.demo.serving.example.com", "/v1/models/mnist:predict",
			Route{Resource: Serving, Namespace: "demo", Name: "mnist", Path: "/v1/models/mnist:predict"}},
		// The host the controllers write into an MLService's status.
		{webroute.ServingHost(rt.ServingDomain, "demo", "mnist-predict-v1"), "/v1/models/mnist:predict",
			Route{Resource: Serving, Namespace: "demo", Name: "mnist-predict-v1", Path: "/v1/models/mnist:predict"}},
	} {
		r := httptest.NewRequest("GET", "https://"+tc.host+tc.target, nil)
		r.Host = tc.host
		got, err := rt.Route(r)
		if err != nil || got != tc.want {
			t.Errorf("%s%s: got %+v, %v; want %+v", tc.host, tc.target, got, err, tc.want)
		}
	}
	// A Host flag with a port routes by the host alone.
	withPort := Router{Host: "ai.example.com:8443"}
	r := httptest.NewRequest("GET", "https://ai.example.com:8443/tensorboard/demo/tb/", nil)
	if got, err := withPort.Route(r); err != nil || got.Name != "tb" {
		t.Errorf("a Host with a port: got %+v, %v", got, err)
	}
}

func TestRouteRefuses(t *testing.T) {
	rt := Router{Host: "ai.example.com", ServingDomain: "serving.example.com"}
	for _, tc := range []struct {
		host, target string
		bad          bool // a *BadPathError, else ErrNoRoute
	}{
		{"other.example.com", "/t9k/notebooks/projects/demo/name/nb/", false},
		{"ai.example.com", "/", false},
		{"ai.example.com", "/t9k/notebooks/projects/demo/name", false},
		{"ai.example.com", "/explorer/demo/ex/shell/", false},
		{"a.b.demo.serving.example.com", "/", false},
		{"ai.example.com", "/t9k/notebooks/projects/demo/name/nb/../../other/name/nb/", true},
		{"ai.example.com", "/tensorboard/demo/tb/./x", true},
		{"ai.example.com", "/tensorboard/demo/tb//x", true},
		{"ai.example.com", "/tensorboard/demo/tb%2F..%2F..%2Fother/x", true},
		{"ai.example.com", "/tensorboard/demo/tb/x%5c..", true},
		{"ai.example.com", "/tensorboard/Demo/tb/", true},
		{"ai.example.com", "/tensorboard/demo/tb_1/", true},
		{"Bad_Name.demo.serving.example.com", "/", true},
	} {
		r := httptest.NewRequest("GET", "https://"+tc.host+tc.target, nil)
		r.Host = tc.host
		_, err := rt.Route(r)
		var bad *BadPathError
		if tc.bad && !errors.As(err, &bad) || !tc.bad && !errors.Is(err, ErrNoRoute) {
			t.Errorf("%s%s: got %v, want a bad path: %v", tc.host, tc.target, err, tc.bad)
		}
	}
}

// TestRouteMatchesWebroute checks that every path the controllers serve a
// workload under routes back to that workload.
func TestRouteMatchesWebroute(t *testing.T) {
	for _, tc := range []struct {
		path string
		want Route
	}{
		{webroute.NotebookPrefix("ns", "a.b"), Route{Resource: Notebooks, Namespace: "ns", Name: "a.b"}},
		{webroute.TensorBoardPrefix("ns", "tb"), Route{Resource: TensorBoards, Namespace: "ns", Name: "tb"}},
		{webroute.ExplorerPrefix("ns", "ex", webroute.FileBrowser), Route{Resource: Explorers, Namespace: "ns", Name: "ex", Component: webroute.FileBrowser}},
		{webroute.EventListenerPath("ns", "el"), Route{Resource: EventListeners, Namespace: "ns", Name: "el"}},
	} {
		r := httptest.NewRequest("GET", tc.path, nil)
		got, err := Router{}.Route(r)
		tc.want.Path = tc.path
		if err != nil || got != tc.want {
			t.Errorf("%s: got %+v, %v; want %+v", tc.path, got, err, tc.want)
		}
	}
}
