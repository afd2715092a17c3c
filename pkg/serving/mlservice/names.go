package mlservice

import (
	"strconv"

	tensorstackv1beta1 "github.com/accelstack/accelstack/api/tensorstack/v1beta1"
	"github.com/accelstack/accelstack/pkg/webroute"
)

// Labels of the objects of an MLService.
const (
	// LabelKey holds the MLService's name on every object it owns.
	LabelKey = "tensorstack.dev/mlservice"
	// ComponentLabelKey is predict, transformer or router.
	ComponentLabelKey = "tensorstack.dev/mlservice-component"
	// ReleaseLabelKey is the release of a predictor.
	ReleaseLabelKey = "tensorstack.dev/mlservice-release"
)

// The components.
const (
	componentPredict     = "predict"
	componentTransformer = "transformer"
	componentRouter      = "router"
)

// ServingPort is the port the runtimes' containers and the router serve.
const ServingPort = 8080

// Domain is the DNS domain of the raw backend's URLs.
const Domain = "svc.cluster.local"

// The names of an MLService's objects are <mlservice>-<kind> when that
// fits a Service's 63 characters, and otherwise the MLService's name cut
// and followed by the kind and a hash of the name
// (webroute.ObjectName), so that MLServices of any valid name, such as
// llama2-7b-chat-triton-tensorrtllm, get Services and URLs.

// predictorName is the name of a release's predictor objects and the host
// label of its URL: <mlservice>-predict-<release>.
func predictorName(m *tensorstackv1beta1.MLService, release string) string {
	return webroute.ObjectName(m.Name, componentPredict+"-"+release)
}

// predictHost is the name of the Service that splits between the
// releases: <mlservice>-predict.
func predictHost(m *tensorstackv1beta1.MLService) string {
	return webroute.ObjectName(m.Name, componentPredict)
}

// transformerName is the name of the transformer's objects:
// <mlservice>-transformer.
func transformerName(m *tensorstackv1beta1.MLService) string {
	return webroute.ObjectName(m.Name, componentTransformer)
}

// routerName is the name of the router's Deployment: <mlservice>-router.
func routerName(m *tensorstackv1beta1.MLService) string {
	return webroute.ObjectName(m.Name, componentRouter)
}

// privateName is the name of the headless Service of a raw component:
// <component>-private, shortened as above when that is too long.
func privateName(component string) string { return webroute.ObjectName(component, "private") }

// privateURL is the URL the router reaches a raw component at: its
// headless Service's name, which resolves to the addresses of the ready
// pods, at the pods' own port.
func privateURL(component, ns string) string {
	return serviceURL(privateName(component), ns) + ":" + strconv.Itoa(ServingPort)
}

// serviceURL is the in-cluster URL of the Service name in ns.
func serviceURL(name, ns string) string { return "http://" + name + "." + ns + "." + Domain }

// labels returns the labels of a component of m.
func labels(m *tensorstackv1beta1.MLService, component, release string) map[string]string {
	l := map[string]string{LabelKey: m.Name, ComponentLabelKey: component}
	if release != "" {
		l[ReleaseLabelKey] = release
	}
	return l
}
