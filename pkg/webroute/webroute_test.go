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
