// Package mlservice is the MLService controller. Each release's predictor
// pod comes from its MLServiceRuntime's template, the release's template
// strategic-merge-patched onto it, the model's parameters substituted for
// {{.NAME}} and {{if .NAME}}…{{else}}…{{end}} in the args (a bounded
// substitution, never a Go template: see renderArgs), and the model
// storage applied. A Backend runs the releases and the transformer:
//
//   - raw (the default, KServe's RawDeployment model): per component a
//     Deployment, a Service <name>-private and, when maxReplicas exceeds
//     minReplicas, an autoscaling/v2 HorizontalPodAutoscaler;
//   - knative (when the serving.knative.dev Service CRD is installed): per
//     component a Knative Service with min-scale and max-scale, which may
//     scale to zero.
//
// In front of them the router (cmd/serving-router, package router) runs
// as the Deployment <mlservice>-router behind the Service <mlservice>
// (the global URL), <mlservice>-predict (the split, which the transformer
// calls) and, on the raw backend, <mlservice>-predict-<release> (the
// release URLs; on Knative those are the Knative Services' own).
package mlservice
