package eventlistener

import (
	"testing"

	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/accelstack/accelstack/pkg/eventlistener/serverconfig"
)

func TestTriggerNetworkPolicy(t *testing.T) {
	el := newListener("event-listener-sample")
	wt := newTrigger("workflow-trigger-sample", "event-listener-sample", "missing")
	lonely := newTrigger("lonely", "missing")
	f := newFixture(t, el, wt, lonely)
	f.reconcileTrigger(t, wt.Name)
	f.reconcileTrigger(t, lonely.Name)

	np := &networkingv1.NetworkPolicy{}
	name := TriggerObjectName(wt.Name, wt.UID)
	f.get(t, name, np)
	if !metav1.IsControlledBy(np, wt) {
		t.Errorf("owners %+v", np.OwnerReferences)
	}
	if got := np.Spec.PodSelector.MatchLabels; len(got) != 1 || got[WorkflowEventsLabelKey] != name {
		t.Errorf("pod selector %v, want the trigger's pods", got)
	}
	if len(np.Spec.PolicyTypes) != 1 || np.Spec.PolicyTypes[0] != networkingv1.PolicyTypeIngress {
		t.Errorf("policy types %v", np.Spec.PolicyTypes)
	}
	if len(np.Spec.Ingress) != 1 {
		t.Fatalf("ingress %+v, want one rule", np.Spec.Ingress)
	}
	rule := np.Spec.Ingress[0]
	if len(rule.From) != 1 || rule.From[0].NamespaceSelector != nil || rule.From[0].IPBlock != nil || rule.From[0].PodSelector == nil ||
		rule.From[0].PodSelector.MatchLabels[WorkflowEventsLabelKey] != ListenerObjectName(el.Name, el.UID) {
		t.Errorf("from %+v, want the listener's pods of the namespace only", rule.From)
	}
	if len(rule.Ports) != 1 || rule.Ports[0].Port == nil || rule.Ports[0].Port.IntVal != serverconfig.Port {
		t.Errorf("ports %+v, want %d", rule.Ports, serverconfig.Port)
	}

	// A trigger whose listener does not exist admits nothing: no rule,
	// not a rule without peers (which would admit everyone).
	f.get(t, TriggerObjectName(lonely.Name, lonely.UID), np)
	if len(np.Spec.Ingress) != 0 || len(np.Spec.PolicyTypes) != 1 {
		t.Errorf("ingress %+v types %v, want none, Ingress", np.Spec.Ingress, np.Spec.PolicyTypes)
	}
}
