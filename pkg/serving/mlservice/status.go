package mlservice

import (
	"fmt"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	tensorstackv1beta1 "github.com/accelstack/accelstack/api/tensorstack/v1beta1"
	"github.com/accelstack/accelstack/pkg/interactive"
	"github.com/accelstack/accelstack/pkg/webroute"
)

// fillStatus writes the addresses, releases, transformer and conditions
// of m into status. On the raw backend with a serving domain, the global
// and release URLs are the gateway's (webroute.ServingURL).
func fillStatus(m *tensorstackv1beta1.MLService, status *tensorstackv1beta1.MLServiceStatus, states, problems map[string]ComponentState, routerReady, paused, raw bool, servingDomain string, now metav1.Time) {
	url := func(name string) string {
		if !raw {
			return serviceURL(name, m.Namespace)
		}
		return webroute.ServingURL(servingDomain, m.Namespace, name, serviceURL(name, m.Namespace))
	}
	status.Address = &tensorstackv1beta1.MLServiceAddress{URL: url(m.Name)}
	status.DefaultRelease, status.CanaryRelease = m.Spec.Default, m.Spec.Canary
	status.Releases = nil
	var waiting []string
	var problemReason string
	note := func(name string, s ComponentState, problem bool) {
		if problem && problemReason == "" {
			problemReason = s.Reason
		}
		if !s.Ready && (weight(m, name) > 0 || problem) {
			waiting = append(waiting, fmt.Sprintf("release %s: %s", name, s.Message))
		}
	}
	for _, r := range m.Spec.Releases {
		name := predictorName(m, r.Name)
		s, problem := problems[r.Name]
		if !problem {
			s = states[name]
			if paused {
				s.Reason, s.Message = ReasonPaused, "The MLService is paused"
			}
		}
		rs := tensorstackv1beta1.ReleaseStatus{
			Name: r.Name, Ready: s.Ready, TrafficPercent: weight(m, r.Name),
			ReadyReplicas: s.ReadyReplicas, TotalReplicas: s.TotalReplicas,
		}
		if !s.Ready {
			rs.Reason, rs.Message = s.Reason, s.Message
		}
		rs.URL = s.URL
		if raw || rs.URL == "" {
			rs.URL = url(name)
		}
		status.Releases = append(status.Releases, rs)
		note(r.Name, s, problem)
	}
	status.Transformer = nil
	if m.Spec.Transformer != nil {
		s, problem := problems[""]
		if !problem {
			s = states[transformerName(m)]
		} else if problemReason == "" {
			problemReason = s.Reason
		}
		status.Transformer = &tensorstackv1beta1.TransformerStatus{
			Ready: s.Ready, URL: privateURL(transformerName(m), m.Namespace),
			ReadyReplicas: s.ReadyReplicas, TotalReplicas: s.TotalReplicas,
		}
		if s.URL != "" {
			status.Transformer.URL = s.URL
		}
		if !s.Ready {
			status.Transformer.Reason, status.Transformer.Message = s.Reason, s.Message
			waiting = append(waiting, "transformer: "+s.Message)
		}
	}
	if !routerReady {
		waiting = append(waiting, "the router is not ready")
	}
	ready := condition(tensorstackv1beta1.ConditionReady, true, ReasonReady, "The MLService serves")
	switch {
	case paused:
		ready = condition(tensorstackv1beta1.ConditionReady, false, ReasonPaused, "The MLService is paused")
	case problemReason != "":
		ready = condition(tensorstackv1beta1.ConditionReady, false, problemReason, strings.Join(waiting, "; "))
	case len(waiting) > 0:
		ready = condition(tensorstackv1beta1.ConditionReady, false, ReasonNotReady, strings.Join(waiting, "; "))
	}
	interactive.SetCondition(&status.Conditions, ready, now)
	interactive.SetCondition(&status.Conditions, condition(tensorstackv1beta1.ConditionPaused, paused, map[bool]string{true: "Paused", false: "Running"}[paused],
		map[bool]string{true: "runMode is Pause: every component is scaled to zero", false: "The MLService runs"}[paused]), now)
}
