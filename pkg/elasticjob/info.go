package elasticjob

import (
	elasticv1alpha1 "github.com/accelstack/accelstack/api/elastic/v1alpha1"
	"github.com/accelstack/accelstack/pkg/jobkind"
)

// Info registers the ElasticJob kind (jobkind.Info). A controller of its
// own runs it; it names no queue of the T9k Scheduler, and no workflow step
// runs it.
var Info = jobkind.Info{
	GVK:       elasticv1alpha1.GroupVersion.WithKind("ElasticJob"),
	Resource:  "elasticjobs",
	PhasePath: []string{"status", "phase"},
}
