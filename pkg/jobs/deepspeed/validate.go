package deepspeed

import (
	"strings"

	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	batchv1beta1 "github.com/accelstack/accelstack/api/batch/v1beta1"
	"github.com/accelstack/accelstack/pkg/jobs"
)

var specPath = field.NewPath("spec")

// Validate checks a DeepSpeedJob: exactly one of config.run's entries
// unless customCommand is set, at least one slot per worker, the pdsh
// launcher only, variables the env file can carry, sane elastic bounds,
// and what the engine checks of every kind.
func (Kind) Validate(obj, old client.Object) field.ErrorList {
	dj := obj.(*batchv1beta1.DeepSpeedJob)
	errs := jobs.ValidateShape(shape(dj))
	errs = append(errs, jobs.ValidateRunPolicy(&dj.Spec.RunPolicy)...)
	cfg := specPath.Child("config")
	n := 0
	if r := dj.Spec.Config.Run; r != nil {
		for _, set := range [][]string{r.Python, r.Module, r.Exec} {
			if len(set) > 0 {
				n++
			}
		}
	}
	switch {
	case n > 1:
		errs = append(errs, field.Invalid(cfg.Child("run"), n, "set exactly one of python, module and exec"))
	case n == 0 && dj.Spec.Config.CustomCommand == "":
		errs = append(errs, field.Required(cfg.Child("run"), "set one of python, module and exec, or config.customCommand"))
	}
	for _, s := range []struct {
		name string
		v    *int32
	}{{"slotsPerWorker", dj.Spec.Config.SlotsPerWorker}, {"slotPerWorker", dj.Spec.Config.SlotPerWorker}} {
		if s.v != nil && *s.v < 1 {
			errs = append(errs, field.Invalid(cfg.Child(s.name), *s.v, "must be at least 1"))
		}
	}
	for i, a := range dj.Spec.Config.OtherArgs {
		l, ok := strings.CutPrefix(a, "--launcher")
		switch {
		case !ok:
		case l == "" && i+1 < len(dj.Spec.Config.OtherArgs) && !strings.EqualFold(dj.Spec.Config.OtherArgs[i+1], "pdsh"),
			strings.HasPrefix(l, "=") && !strings.EqualFold(l[1:], "pdsh"):
			errs = append(errs, field.Invalid(cfg.Child("otherArgs").Index(i), a, "only the pdsh launcher is supported"))
		}
	}
	if !dj.Spec.DisableCustomEnv {
		p := specPath.Child("worker", "template", "spec", "containers")
		for i, c := range dj.Spec.Worker.Template.Spec.Containers {
			if c.Name != Container && i > 0 {
				continue
			}
			for j, e := range c.Env {
				if e.ValueFrom == nil && strings.ContainsAny(e.Value, "\n\r") {
					errs = append(errs, field.Invalid(p.Index(i).Child("env").Index(j).Child("value"), e.Value,
						"the env file (one variable per line) cannot carry a line break; set spec.disableCustomEnv"))
				}
			}
		}
	}
	if e := dj.Spec.Elastic; e != nil && e.Enabled {
		lo, hi := ptr.Deref(e.MinReplicas, 1), ptr.Deref(e.MaxReplicas, jobs.ReplicaCount(dj.Spec.Worker.Replicas))
		if lo < 1 || hi < lo {
			errs = append(errs, field.Invalid(specPath.Child("elastic"), e, "need 1 <= minReplicas <= maxReplicas"))
		}
	}
	if old != nil {
		errs = append(errs, jobs.ValidateShapeUpdate(shape(old.(*batchv1beta1.DeepSpeedJob)), shape(dj))...)
	}
	return errs
}

// shape is what the engine checks: the one type, the run mode and the
// scheduler.
func shape(dj *batchv1beta1.DeepSpeedJob) jobs.Shape {
	n := jobs.ReplicaCount(dj.Spec.Worker.Replicas)
	if e := dj.Spec.Elastic; e != nil && e.Enabled && e.MaxReplicas != nil {
		n = max(n, *e.MaxReplicas)
	}
	return jobs.Shape{Name: dj.Name, RunMode: dj.Spec.RunMode, Scheduler: dj.Spec.Scheduler,
		Types: []string{Worker}, MaxReplicas: []int32{n}, CountPath: specPath.Child("worker", "replicas")}
}
