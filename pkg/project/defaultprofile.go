package project

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	tensorstackv1beta1 "github.com/accelstack/accelstack/api/tensorstack/v1beta1"
)

// defaultProfileRetry is how often creating the default QuotaProfile is
// tried until it succeeds.
const defaultProfileRetry = 10 * time.Second

// DefaultQuotaProfileName is the QuotaProfile the controllers create when
// none of that name exists, for Projects to name in spec.quotaProfile.
const DefaultQuotaProfileName = "default"

// defaultObjectCounts are the object counts of DefaultQuotaProfile, per
// namespace. Every object of the cluster is kept in etcd, and those the
// controllers follow in the memory of the one controllers process: a
// namespace creating objects without end would stop the platform for
// every tenant. The limits are well above what a research team runs (a
// 512-worker job, dozens of notebooks, thousands of workflow runs kept in
// history).
var defaultObjectCounts = map[corev1.ResourceName]string{
	"pods":                   "2000",
	"count/configmaps":       "1000",
	"count/secrets":          "1000",
	"count/services":         "1000",
	"persistentvolumeclaims": "500",
	"count/jobs.batch":       "500",
	"count/deployments.apps": "200",
	// The platform's workloads.
	"count/genericjobs.batch.tensorstack.dev":            "500",
	"count/pytorchtrainingjobs.batch.tensorstack.dev":    "500",
	"count/tensorflowtrainingjobs.batch.tensorstack.dev": "500",
	"count/xgboosttrainingjobs.batch.tensorstack.dev":    "500",
	"count/mpijobs.batch.tensorstack.dev":                "500",
	"count/deepspeedjobs.batch.tensorstack.dev":          "500",
	"count/colossalaijobs.batch.tensorstack.dev":         "500",
	"count/beamjobs.batch.tensorstack.dev":               "500",
	"count/elasticjobs.elastic.iml.github.io":            "500",
	"count/ascendjobs.mindxdl.gitee.com":                 "500",
	"count/workflowtemplates.batch.tensorstack.dev":      "1000",
	"count/workflowruns.batch.tensorstack.dev":           "5000",
	"count/cronworkflowruns.batch.tensorstack.dev":       "100",
	"count/notebooks.tensorstack.dev":                    "100",
	"count/tensorboards.tensorstack.dev":                 "100",
	"count/explorers.tensorstack.dev":                    "100",
	"count/datacubes.tensorstack.dev":                    "500",
	"count/storageshims.tensorstack.dev":                 "200",
	"count/mlservices.tensorstack.dev":                   "100",
	"count/simplemlservices.tensorstack.dev":             "100",
	"count/mlserviceruntimes.tensorstack.dev":            "100",
	"count/eventlisteners.tensorstack.dev":               "50",
	"count/workflowtriggers.tensorstack.dev":             "200",
	"count/serviceaccounttokens.tensorstack.dev":         "100",
}

// DefaultQuotaProfile returns the QuotaProfile DefaultQuotaProfileName:
// object counts only, no compute, so that naming it never requires pods
// to declare requests; Pod Security baseline.
func DefaultQuotaProfile() *tensorstackv1beta1.QuotaProfile {
	hard := make(corev1.ResourceList, len(defaultObjectCounts))
	for k, v := range defaultObjectCounts {
		hard[k] = resource.MustParse(v)
	}
	return &tensorstackv1beta1.QuotaProfile{
		ObjectMeta:  metav1.ObjectMeta{Name: DefaultQuotaProfileName},
		Spec:        corev1.ResourceQuotaSpec{Hard: hard},
		PodSecurity: tensorstackv1beta1.PodSecurityBaseline,
	}
}

// +kubebuilder:rbac:groups=tensorstack.dev,resources=quotaprofiles,verbs=create

// ensureDefaultProfile creates DefaultQuotaProfile unless a QuotaProfile
// of its name exists, which it leaves as it is: an administrator's edits
// stay.
func ensureDefaultProfile(ctx context.Context, c client.Client) error {
	err := c.Create(ctx, DefaultQuotaProfile())
	switch {
	case apierrors.IsAlreadyExists(err):
		return nil
	case err != nil:
		return fmt.Errorf("creating QuotaProfile %s: %w", DefaultQuotaProfileName, err)
	}
	ctrl.LoggerFrom(ctx).Info("Created the default QuotaProfile", "quotaProfile", DefaultQuotaProfileName)
	return nil
}
