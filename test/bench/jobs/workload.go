package main

import (
	"fmt"
	"strings"

	"sigs.k8s.io/controller-runtime/pkg/client"
)

// workload is one kind of job the bench gives both controllers, as each of
// them spells it.
type workload struct {
	// title names the workload on standard error.
	title string
	// reconciler is accelstack's controller of the kind, as its metrics
	// name it.
	reconciler string
	// scheme is the training operator's name of the kind (its
	// --enable-scheme value); its controller is <scheme>-controller and its
	// CRD manifests/base/crds/kubeflow.org_<scheme>s.yaml.
	scheme string
	// ours and theirs return a job of the workload, not yet created, for
	// accelstack and for the training operator.
	ours, theirs func(namespace, name string) client.Object
}

// kubeflowReconciler is the training operator's controller of w, as its
// metrics name it.
func (w workload) kubeflowReconciler() string { return w.scheme + "-controller" }

// kubeflowCRD is the file name of the training operator's CRD of w.
func (w workload) kubeflowCRD() string { return "kubeflow.org_" + strings.ToLower(w.scheme) + "s.yaml" }

// podName is the name of the pod of replica i of type typ of job, as both
// controllers name their ranked pods: <job>-<typ>-<i>.
func podName(job, typ string, i int) string { return fmt.Sprintf("%s-%s-%d", job, typ, i) }
