// Package kinds lists the job kinds the controllers run on the jobs engine;
// it is apart from package jobs so that the engine imports no kind.
package kinds

import (
	"github.com/accelstack/accelstack/pkg/jobs"
	"github.com/accelstack/accelstack/pkg/jobs/ascendjob"
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
