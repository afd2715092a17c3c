// Package serving tests the SimpleMLService and MLService controllers
// against a real kube-apiserver and etcd with the project's CRDs and the
// controllers in-process. No kube-controller-manager runs: the tests play
// the Deployment controller and the kubelet by writing the Deployments'
// status and creating pods. The MLService tests run twice, once on the
// raw backend and once with a minimal Knative Service CRD installed, whose
// status the tests write as Knative would. It is a package of its own so
// that its control planes serve only these tests.
package serving
