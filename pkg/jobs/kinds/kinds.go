// Package kinds lists the job kinds: those the controllers run on the jobs
// engine (All), and the registration of every job kind, the engine's and
// those with a controller of their own (Registered). It is apart from
// package jobs so that the engine imports no kind. Adding a kind is adding
// it here; docs/development.md lists the rest.
package kinds

import (
	"github.com/accelstack/accelstack/pkg/elasticjob"
	"github.com/accelstack/accelstack/pkg/jobkind"
	"github.com/accelstack/accelstack/pkg/jobs"
	"github.com/accelstack/accelstack/pkg/jobs/ascendjob"
	"github.com/accelstack/accelstack/pkg/jobs/beamjob"
	"github.com/accelstack/accelstack/pkg/jobs/colossalai"
	"github.com/accelstack/accelstack/pkg/jobs/deepspeed"
	"github.com/accelstack/accelstack/pkg/jobs/genericjob"
	"github.com/accelstack/accelstack/pkg/jobs/mpijob"
	"github.com/accelstack/accelstack/pkg/jobs/pytorch"
	"github.com/accelstack/accelstack/pkg/jobs/tensorflow"
	"github.com/accelstack/accelstack/pkg/jobs/xgboost"
)

// All returns every job kind, each reconciled by its own controller.
func All() []jobs.Kind {
	return []jobs.Kind{
		genericjob.Kind{},
		pytorch.Kind{},
		tensorflow.Kind{},
		xgboost.Kind{},
		ascendjob.Kind{},
		mpijob.Kind{},
		deepspeed.Kind{},
		colossalai.Kind{},
	}
}

// Registered returns the registration of every job kind: the engine's
// kinds, in the order of All, then the BeamJob and the ElasticJob, which
// have controllers of their own. The webhook configurations, project
// roles, RBAC, workload metrics, alert rules and workflow tables are built
// from it or checked against it (kinds_test.go).
func Registered() []jobkind.Info {
	var infos []jobkind.Info
	for _, k := range All() {
		infos = append(infos, k.Info())
	}
	return append(infos, beamjob.Info, elasticjob.Info)
}
