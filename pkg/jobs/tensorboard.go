package jobs

import (
	"context"
	"fmt"

	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/controller-runtime/pkg/client"

	batchv1beta1 "github.com/accelstack/accelstack/api/batch/v1beta1"
	tensorstackv1beta1 "github.com/accelstack/accelstack/api/tensorstack/v1beta1"
	"github.com/accelstack/accelstack/pkg/tensorboard/logdir"
)

// Dependent status words.
const (
	actionNOP         = "NOP"
	actionCreate      = "Create"
	actionUpdate      = "Update"
	reasonDepReady    = "DependentReady"
	reasonDepNotReady = "DependentNotReady"
	reasonDepConflict = "DependentConflict"
	typeNormal        = "Normal"
	typeWarning       = "Warning"
)

// +kubebuilder:rbac:groups=tensorstack.dev,resources=tensorboards,verbs=get;list;watch;create;update

// ValidateTensorBoard checks a training job's spec.tensorboardSpec as the
// TensorBoard webhook checks a TensorBoard's locations of logs. old is the
// job's spec.tensorboardSpec before an update, nil on create: locations left
// unchanged are admitted, so that a job admitted before this check can
// still be paused or resumed.
func ValidateTensorBoard(spec, old *tensorstackv1beta1.TensorBoardSpec) field.ErrorList {
	switch {
	case spec == nil:
		return nil
	case old != nil && equality.Semantic.DeepEqual(spec.LogDir, old.LogDir) &&
		equality.Semantic.DeepEqual(spec.TrainingLogFilesets, old.TrainingLogFilesets):
		return nil
	}
	return logdir.Validate(spec, specPath.Child("tensorboardSpec"))
}

// EnsureTensorBoard makes the TensorBoard named after job follow spec,
// creating it if needed, and returns its state for the job's status. The
// TensorBoard carries the job's labels (component names the kind) and is
// owned by the job.
func EnsureTensorBoard(ctx context.Context, env *Env, job *Job, component string, spec *tensorstackv1beta1.TensorBoardSpec) (*batchv1beta1.DependentStatus, error) {
	obj := job.Object
	ref := &batchv1beta1.DependentReference{
		APIVersion: tensorstackv1beta1.GroupVersion.String(), Kind: "TensorBoard",
		Name: obj.GetName(), Namespace: obj.GetNamespace(),
	}
	st := &batchv1beta1.DependentStatus{Action: actionNOP, Dependent: ref, Type: typeNormal}
	tb := &tensorstackv1beta1.TensorBoard{}
	err := env.Cache.Get(ctx, client.ObjectKeyFromObject(obj), tb)
	switch {
	case apierrors.IsNotFound(err):
		tb = &tensorstackv1beta1.TensorBoard{
			ObjectMeta: metav1.ObjectMeta{Name: obj.GetName(), Namespace: obj.GetNamespace(), Labels: Labels(component, obj.GetName())},
			Spec:       *spec.DeepCopy(),
		}
		if err := SetOwner(obj, tb, env.Scheme); err != nil {
			return nil, err
		}
		if err := env.Client.Create(ctx, tb); err != nil && !apierrors.IsAlreadyExists(err) {
			return nil, fmt.Errorf("creating TensorBoard %s: %w", tb.Name, err)
		}
		st.Action = actionCreate
	case err != nil:
		return nil, fmt.Errorf("getting TensorBoard %s: %w", obj.GetName(), err)
	case !OwnedBy(tb, obj):
		st.Type, st.Reason = typeWarning, reasonDepConflict
		st.Note = fmt.Sprintf("TensorBoard [%s] belongs to another object", tb.Name)
		return st, nil
	case !equality.Semantic.DeepEqual(tb.Spec, withSuspend(spec, tb.Spec.Suspend)):
		tb = tb.DeepCopy()
		tb.Spec = withSuspend(spec, tb.Spec.Suspend)
		if err := env.Client.Update(ctx, tb); err != nil {
			return nil, fmt.Errorf("updating TensorBoard %s: %w", tb.Name, err)
		}
		st.Action = actionUpdate
	}
	ref.UID = tb.UID
	st.Ready = tb.Status.Phase == tensorstackv1beta1.TensorBoardRunning
	if st.Ready {
		st.Reason, st.Note = reasonDepReady, fmt.Sprintf("TensorBoard [%s] is ready", tb.Name)
	} else {
		st.Reason, st.Note = reasonDepNotReady, fmt.Sprintf("TensorBoard [%s] is not ready", tb.Name)
	}
	return st, nil
}

// withSuspend returns a copy of spec with suspend set as the TensorBoard
// has it: the Resource Keeper suspends an idle TensorBoard and a user
// resumes it, and the job's spec does not undo either.
func withSuspend(spec *tensorstackv1beta1.TensorBoardSpec, suspend bool) tensorstackv1beta1.TensorBoardSpec {
	out := *spec.DeepCopy()
	out.Suspend = suspend
	return out
}
