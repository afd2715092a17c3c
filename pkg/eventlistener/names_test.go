package eventlistener

import (
	"regexp"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/validation"
)

func TestObjectNames(t *testing.T) {
	const uid = types.UID("7d3c1c1e-1111-2222-3333-444455556666")
	tests := []struct {
		name string
		got  string
		want *regexp.Regexp
	}{
		{name: "listener", got: ListenerObjectName("event-listener-sample", uid), want: regexp.MustCompile(`^event-listener-sample-eventlistener-[0-9a-f]{5}$`)},
		{name: "trigger", got: TriggerObjectName("workflow-trigger-sample", uid), want: regexp.MustCompile(`^workflow-trigger-sample-workflowtrigger-[0-9a-f]{5}$`)},
		{name: "dots", got: ListenerObjectName("a.b.c", uid), want: regexp.MustCompile(`^a-b-c-eventlistener-[0-9a-f]{5}$`)},
		{name: "leading digit", got: ListenerObjectName("1st", uid), want: regexp.MustCompile(`^x1st-eventlistener-[0-9a-f]{5}$`)},
		{name: "long", got: TriggerObjectName(strings.Repeat("a", 40)+"-"+strings.Repeat("b", 200), uid), want: regexp.MustCompile(`^a{40}-workflowtrigger-[0-9a-f]{5}$`)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if !tt.want.MatchString(tt.got) {
				t.Errorf("name %q, want %s", tt.got, tt.want)
			}
			if errs := validation.IsDNS1035Label(tt.got); len(errs) > 0 {
				t.Errorf("name %q is no Service name: %v", tt.got, errs)
			}
		})
	}
	if first, again := ListenerObjectName("x", uid), ListenerObjectName("x", types.UID(string(uid))); first != again {
		t.Error("the name is not stable")
	}
	if ListenerObjectName("x", uid) == ListenerObjectName("x", "another-uid") {
		t.Error("the name does not depend on the UID")
	}
}

func TestURLs(t *testing.T) {
	if got := InClusterURL("default", "event-listener-sample-eventlistener-2dbfe"); got != "http://event-listener-sample-eventlistener-2dbfe.default.svc.cluster.local" {
		t.Errorf("InClusterURL = %q", got)
	}
	if got := ExternalURL("t9k.example.com", "default", "event-listener-sample"); got != "https://t9k.example.com/t9k/workflow/triggers/default/event-listener-sample" {
		t.Errorf("ExternalURL = %q", got)
	}
	if got := ExternalURL("", "default", "event-listener-sample"); got != "" {
		t.Errorf("ExternalURL without a host = %q", got)
	}
}
