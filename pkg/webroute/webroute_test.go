package webroute

import (
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/util/validation"
)

func TestObjectName(t *testing.T) {
	long := strings.Repeat("a", 60)
	for _, tc := range []struct {
		name, kind, want string
	}{
		{"tb", "tensorboard", "tb-tensorboard"},
		{"my.tb", "tensorboard", "my-tb-tensorboard-"},
		{"1tb", "tensorboard", "x1tb-tensorboard-"},
		{long, "tensorboard", strings.Repeat("a", 63-len("-tensorboard-12345")) + "-tensorboard-"},
	} {
		got := ObjectName(tc.name, tc.kind)
		if !strings.HasPrefix(got, tc.want) || (strings.HasSuffix(tc.want, "-") && len(got) != len(tc.want)+5) {
			t.Errorf("ObjectName(%q, %q) = %q, want %q followed by 5 hex digits when it ends in '-'", tc.name, tc.kind, got, tc.want)
		}
		if msgs := validation.IsDNS1035Label(got); len(msgs) > 0 {
			t.Errorf("ObjectName(%q, %q) = %q: %v", tc.name, tc.kind, got, msgs)
		}
	}
	if ObjectName("my.tb", "x") == ObjectName("my-tb", "x") {
		t.Error("names differing in a dot meet")
	}
}

func TestURLPrefix(t *testing.T) {
	if got := URLPrefix("explorer", "ns", "ex", "code-server"); got != "/explorer/ns/ex/code-server/" {
		t.Errorf("got %s", got)
	}
	if got := URLPrefix("tensorboard", "ns", "tb"); got != "/tensorboard/ns/tb/" {
		t.Errorf("got %s", got)
	}
}

func TestStatusURL(t *testing.T) {
	in := InClusterURL("ns", ExplorerObjectName("ex", CodeServer), "/")
	if got := StatusURL("", in, ExplorerPrefix("ns", "ex", CodeServer)); got != "http://ex-explorer-code-server.ns.svc.cluster.local/" {
		t.Errorf("without a gateway: %s", got)
	}
	// On the gateway, code-server is reached at its prefix, which the
	// gateway strips.
	if got := StatusURL("ai.example.com", in, ExplorerPrefix("ns", "ex", CodeServer)); got != "https://ai.example.com/explorer/ns/ex/code-server/" {
		t.Errorf("on the gateway: %s", got)
	}
}

func TestServingURL(t *testing.T) {
	if got := ServingURL("", "ns", "mnist", "http://mnist.ns.svc.cluster.local"); got != "http://mnist.ns.svc.cluster.local" {
		t.Errorf("without a serving domain: %s", got)
	}
	if got := ServingURL("serving.example.com", "ns", "mnist-predict-v1", "http://x"); got != "https://mnist-predict-v1.ns.serving.example.com" {
		t.Errorf("on the gateway: %s", got)
	}
}

func TestUIDObjectName(t *testing.T) {
	a, b := EventListenerObjectName("el", "uid-1"), EventListenerObjectName("el", "uid-2")
	if a == b || !strings.HasPrefix(a, "el-eventlistener-") || len(a) != len("el-eventlistener-")+5 {
		t.Errorf("got %s and %s", a, b)
	}
	long := UIDObjectName(strings.Repeat("a.", 40), "eventlistener", "u")
	if msgs := validation.IsDNS1035Label(long); len(msgs) > 0 {
		t.Errorf("%s: %v", long, msgs)
	}
}
