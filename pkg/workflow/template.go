package workflow

import (
	"fmt"
	"slices"

	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/controller-runtime/pkg/client"

	batchv1beta1 "github.com/accelstack/accelstack/api/batch/v1beta1"
)

// body is one of the mutually exclusive fields of a WorkflowTemplateSpec:
// its type, its JSON name and whether it is set.
type body struct {
	typ   batchv1beta1.WorkflowTemplateType
	field string
	set   bool
}

// bodies returns the fields of spec that say what it runs, the untyped
// ones (pod, seqPod, resource, dag) first, as the seed orders them when
// type is empty.
func bodies(spec *batchv1beta1.WorkflowTemplateSpec) []body {
	return []body{
		{batchv1beta1.WorkflowTemplateTypePod, "pod", spec.Pod != nil},
		{batchv1beta1.WorkflowTemplateTypeSeqPod, "seqPod", spec.SeqPod != nil},
		{batchv1beta1.WorkflowTemplateTypeResource, "resource", spec.Resource != nil},
		{batchv1beta1.WorkflowTemplateTypeDAG, "dag", spec.DAG != nil},
		{batchv1beta1.WorkflowTemplateTypeGenericJob, "genericJob", spec.GenericJob != nil},
		{batchv1beta1.WorkflowTemplateTypeTensorFlowTrainingJob, "tensorflowTrainingJob", spec.TensorFlowTrainingJob != nil},
		{batchv1beta1.WorkflowTemplateTypePyTorchTrainingJob, "pytorchTrainingJob", spec.PyTorchTrainingJob != nil},
		{batchv1beta1.WorkflowTemplateTypeXGBoostTrainingJob, "xgboostTrainingJob", spec.XGBoostTrainingJob != nil},
		{batchv1beta1.WorkflowTemplateTypeColossalAIJob, "colossalaiJob", spec.ColossalAIJob != nil},
		{batchv1beta1.WorkflowTemplateTypeDeepSpeedJob, "deepspeedJob", spec.DeepSpeedJob != nil},
		{batchv1beta1.WorkflowTemplateTypeMPIJob, "mpiJob", spec.MPIJob != nil},
		{batchv1beta1.WorkflowTemplateTypeBeamJob, "beamJob", spec.BeamJob != nil},
	}
}

// TemplateType returns what spec runs: its type, or, when that is empty,
// the first of pod, seqPod, resource and dag that is set. It is an error
// when no field or several are set, or when the set one is not the type's.
func TemplateType(spec *batchv1beta1.WorkflowTemplateSpec, path *field.Path) (batchv1beta1.WorkflowTemplateType, *field.Error) {
	all := bodies(spec)
	var set []body
	for _, b := range all {
		if b.set {
			set = append(set, b)
		}
	}
	typ := spec.Type
	if typ == "" {
		if len(set) == 0 {
			return "", field.Required(path.Child("type"), "set type and its field: one of pod, seqPod, resource, dag or a T9k Job field")
		}
		typ = set[0].typ
	}
	i := slices.IndexFunc(all, func(b body) bool { return b.typ == typ })
	if i < 0 {
		return "", field.NotSupported(path.Child("type"), spec.Type, typeNames())
	}
	want := all[i]
	if !want.set {
		return "", field.Required(path.Child(want.field), fmt.Sprintf("a %s template needs spec.%s", typ, want.field))
	}
	for _, b := range set {
		if b.typ != typ {
			return "", field.Forbidden(path.Child(b.field), fmt.Sprintf("a %s template runs spec.%s only; remove spec.%s", typ, want.field, b.field))
		}
	}
	return typ, nil
}

// typeNames lists the template types.
func typeNames() []string {
	var out []string
	for _, b := range bodies(&batchv1beta1.WorkflowTemplateSpec{}) {
		out = append(out, string(b.typ))
	}
	return out
}

// jobTemplate returns the T9k Job a template of a job type runs, as a new
// object with its metadata and spec, or nil for the other types.
func jobTemplate(spec *batchv1beta1.WorkflowTemplateSpec) client.Object {
	switch {
	case spec.GenericJob != nil:
		return &batchv1beta1.GenericJob{ObjectMeta: *spec.GenericJob.Metadata.DeepCopy(), Spec: *spec.GenericJob.Spec.DeepCopy()}
	case spec.TensorFlowTrainingJob != nil:
		return &batchv1beta1.TensorFlowTrainingJob{ObjectMeta: *spec.TensorFlowTrainingJob.Metadata.DeepCopy(), Spec: *spec.TensorFlowTrainingJob.Spec.DeepCopy()}
	case spec.PyTorchTrainingJob != nil:
		return &batchv1beta1.PyTorchTrainingJob{ObjectMeta: *spec.PyTorchTrainingJob.Metadata.DeepCopy(), Spec: *spec.PyTorchTrainingJob.Spec.DeepCopy()}
	case spec.XGBoostTrainingJob != nil:
		return &batchv1beta1.XGBoostTrainingJob{ObjectMeta: *spec.XGBoostTrainingJob.Metadata.DeepCopy(), Spec: *spec.XGBoostTrainingJob.Spec.DeepCopy()}
	case spec.ColossalAIJob != nil:
		return &batchv1beta1.ColossalAIJob{ObjectMeta: *spec.ColossalAIJob.Metadata.DeepCopy(), Spec: *spec.ColossalAIJob.Spec.DeepCopy()}
	case spec.DeepSpeedJob != nil:
		return &batchv1beta1.DeepSpeedJob{ObjectMeta: *spec.DeepSpeedJob.Metadata.DeepCopy(), Spec: *spec.DeepSpeedJob.Spec.DeepCopy()}
	case spec.MPIJob != nil:
		return &batchv1beta1.MPIJob{ObjectMeta: *spec.MPIJob.Metadata.DeepCopy(), Spec: *spec.MPIJob.Spec.DeepCopy()}
	case spec.BeamJob != nil:
		return &batchv1beta1.BeamJob{ObjectMeta: *spec.BeamJob.Metadata.DeepCopy(), Spec: *spec.BeamJob.Spec.DeepCopy()}
	}
	return nil
}

// jobKinds are the T9k Job objects a run may create, watched for their
// status: the kinds registered with a workflow field (jobkind.Info), as
// jobkinds_test.go checks.
func jobKinds() []client.Object {
	return []client.Object{
		&batchv1beta1.GenericJob{}, &batchv1beta1.TensorFlowTrainingJob{}, &batchv1beta1.PyTorchTrainingJob{},
		&batchv1beta1.XGBoostTrainingJob{}, &batchv1beta1.ColossalAIJob{}, &batchv1beta1.DeepSpeedJob{},
		&batchv1beta1.MPIJob{}, &batchv1beta1.BeamJob{},
	}
}

// jobField returns the WorkflowTemplateSpec field of a template type, for
// the messages that name it.
func jobField(typ batchv1beta1.WorkflowTemplateType) string {
	for _, b := range bodies(&batchv1beta1.WorkflowTemplateSpec{}) {
		if b.typ == typ {
			return b.field
		}
	}
	return ""
}
