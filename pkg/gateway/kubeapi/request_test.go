package kubeapi

import (
	"net/http"
	"testing"

	rbacv1 "k8s.io/api/rbac/v1"
)

func TestRead(t *testing.T) {
	for _, tc := range []struct {
		method, path string
		watch        bool
		want         Attributes
	}{
		{"GET", "/api", false, Attributes{Path: "/api", Verb: "get"}},
		{"GET", "/apis/batch.tensorstack.dev/v1beta1", false, Attributes{Path: "/apis/batch.tensorstack.dev/v1beta1", Verb: "get"}},
		{"GET", "/api/v1/namespaces/a/pods", false, Attributes{Resource: true, Verb: "list", Kind: "pods", Namespace: "a"}},
		{"GET", "/api/v1/namespaces/a/pods", true, Attributes{Resource: true, Verb: "watch", Kind: "pods", Namespace: "a"}},
		{"GET", "/api/v1/namespaces/a/pods/p/log", false, Attributes{Resource: true, Verb: "get", Kind: "pods", Subresource: "log", Namespace: "a", Name: "p"}},
		{"POST", "/api/v1/namespaces/a/pods/p/portforward", false, Attributes{Resource: true, Verb: "create", Kind: "pods", Subresource: "portforward", Namespace: "a", Name: "p"}},
		{"DELETE", "/apis/batch.tensorstack.dev/v1beta1/namespaces/a/pytorchtrainingjobs", false, Attributes{Resource: true, Verb: "deletecollection", Group: "batch.tensorstack.dev", Kind: "pytorchtrainingjobs", Namespace: "a"}},
		{"PATCH", "/apis/scheduler.tensorstack.dev/v1beta1/queues/q", false, Attributes{Resource: true, Verb: "patch", Group: "scheduler.tensorstack.dev", Kind: "queues", Name: "q"}},
		{"GET", "/api/v1/namespaces/a", false, Attributes{Resource: true, Verb: "get", Kind: "namespaces", Name: "a", Namespace: "a"}},
		{"GET", "/api/v1/nodes", false, Attributes{Resource: true, Verb: "list", Kind: "nodes"}},
	} {
		got := Read(tc.method, tc.path, tc.watch)
		if got.Resource {
			tc.want.Path = tc.path
		}
		if got != tc.want {
			t.Errorf("Read(%s %s) = %+v, want %+v", tc.method, tc.path, got, tc.want)
		}
	}
}

func TestAllowed(t *testing.T) {
	rules := []rbacv1.PolicyRule{
		{Verbs: []string{"get", "list"}, APIGroups: []string{""}, Resources: []string{"pods", "pods/log"}},
		{Verbs: []string{"*"}, APIGroups: []string{"batch.tensorstack.dev"}, Resources: []string{"*"}},
		{Verbs: []string{"get"}, APIGroups: []string{""}, Resources: []string{"configmaps"}, ResourceNames: []string{"settings"}},
		{Verbs: []string{"create"}, APIGroups: []string{""}, Resources: []string{"*/portforward"}},
		{Verbs: []string{"get"}, NonResourceURLs: []string{"/version", "/apis/*"}},
	}
	res := func(verb, group, kind, sub, name string) Attributes {
		return Attributes{Resource: true, Verb: verb, Group: group, Kind: kind, Subresource: sub, Namespace: "a", Name: name}
	}
	for _, tc := range []struct {
		a    Attributes
		want bool
	}{
		{res("list", "", "pods", "", ""), true},
		{res("delete", "", "pods", "", "p"), false},
		{res("get", "", "pods", "log", "p"), true},
		{res("get", "", "pods", "exec", "p"), false},
		{res("deletecollection", "batch.tensorstack.dev", "mpijobs", "", ""), true},
		{res("get", "tensorstack.dev", "notebooks", "", "n"), false},
		{res("get", "", "configmaps", "", "settings"), true},
		{res("get", "", "configmaps", "", "other"), false},
		{res("list", "", "configmaps", "", ""), false},
		{res("create", "", "pods", "portforward", "p"), true},
		{Attributes{Path: "/version", Verb: "get"}, true},
		{Attributes{Path: "/apis/x/v1", Verb: "get"}, true},
		{Attributes{Path: "/metrics", Verb: "get"}, false},
		{Attributes{Path: "/version", Verb: "post"}, false},
	} {
		if got := Allowed(rules, tc.a); got != tc.want {
			t.Errorf("Allowed(%+v) = %v, want %v", tc.a, got, tc.want)
		}
	}
	if Allowed(nil, Read(http.MethodGet, "/version", false)) {
		t.Error("no rules allow nothing")
	}
}
