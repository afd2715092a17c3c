package serverconfig

import "testing"

func TestSource(t *testing.T) {
	s := Source("demo", "event-listener-sample")
	if s != "/t9k/workflow/triggers/demo/event-listener-sample" {
		t.Errorf("Source = %q", s)
	}
	ns, name, ok := ParseSource(s)
	if !ok || ns != "demo" || name != "event-listener-sample" {
		t.Errorf("ParseSource(%q) = %q, %q, %v", s, ns, name, ok)
	}
	for _, bad := range []string{"", "/t9k/workflow/triggers/", "/t9k/workflow/triggers/demo", "/t9k/workflow/triggers/demo/", "/t9k/workflow/triggers//x", "/t9k/workflow/triggers/a/b/c", "/other/demo/x"} {
		if _, _, ok := ParseSource(bad); ok {
			t.Errorf("ParseSource(%q) succeeded", bad)
		}
	}
}

func TestParseTriggerConfig(t *testing.T) {
	cfg, err := ParseTriggerConfig(`{"namespace": "demo", "name": "t", "eventSources": [{"eventListenerName": "l"}], "workflowRunSpec": {"workflowTemplateRef": "w"}}`)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Namespace != "demo" || cfg.EventSources[0].EventListenerName != "l" || cfg.WorkflowRunSpec.WorkflowTemplateRef != "w" {
		t.Errorf("config %+v", cfg)
	}
	for _, bad := range []string{
		``,
		`{"namespace": "demo"`,
		`{"namespace": "demo", "name": "t", "eventSources": []}`,
		`{"name": "t", "eventSources": [{"eventListenerName": "l"}]}`,
		`{"namespace": "demo", "name": "t", "eventSources": [{"eventListenerName": "l"}], "extra": 1}`,
	} {
		if _, err := ParseTriggerConfig(bad); err == nil {
			t.Errorf("ParseTriggerConfig(%q) succeeded", bad)
		}
	}
}
