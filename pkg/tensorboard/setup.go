package tensorboard

import (
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	tensorstackv1beta1 "github.com/accelstack/accelstack/api/tensorstack/v1beta1"
	"github.com/accelstack/accelstack/pkg/activity"
	"github.com/accelstack/accelstack/pkg/interactive"
)

// DefaultImage runs TensorBoard when a TensorBoard names no image.
const DefaultImage = "tensorflow/tensorflow:2.14.0"

// WebhookPath is where the TensorBoard webhook is served, as
// deploy/controllers/interactive-webhook.yaml names it.
const WebhookPath = "/validate-tensorstack-dev-v1beta1-tensorboard"

// Options configures the controller.
type Options struct {
	// Image runs TensorBoard when a TensorBoard names none; empty means
	// DefaultImage.
	Image string
	// ActivityImage runs the activity sidecar; empty means
	// activity.DefaultImage.
	ActivityImage string
	// GatewayHost is the gateway's host: status URLs are on it when set,
	// in-cluster otherwise.
	GatewayHost string
}

// Setup runs the TensorBoard controller and its webhook on mgr. The
// controller reads Deployments, Services and pods through a cache of its
// own, of the objects labelled with LabelKey.
func Setup(mgr ctrl.Manager, opts Options) error {
	c, err := interactive.NewCache(mgr, LabelKey, nil)
	if err != nil {
		return err
	}
	r := NewReconciler(mgr.GetClient(), c, mgr.GetAPIReader(), mgr.GetEventRecorder("tensorboard-controller"), opts)
	b := ctrl.NewControllerManagedBy(mgr).Named("tensorboard").For(&tensorstackv1beta1.TensorBoard{})
	if err := interactive.WatchWorkloads(b, mgr, c, &tensorstackv1beta1.TensorBoard{}, &appsv1.Deployment{}, LabelKey).Complete(r); err != nil {
		return fmt.Errorf("setting up the TensorBoard controller: %w", err)
	}
	mgr.GetWebhookServer().Register(WebhookPath, &admission.Webhook{Handler: &interactive.Validator{
		Decoder:   admission.NewDecoder(mgr.GetScheme()),
		GroupKind: schema.GroupKind{Group: tensorstackv1beta1.GroupVersion.Group, Kind: "TensorBoard"},
		New:       func() client.Object { return &tensorstackv1beta1.TensorBoard{} },
		Check:     check,
	}})
	return nil
}

// check validates a created or updated TensorBoard.
func check(obj, old client.Object) field.ErrorList {
	tb, _ := obj.(*tensorstackv1beta1.TensorBoard)
	if o, ok := old.(*tensorstackv1beta1.TensorBoard); ok {
		return ValidateUpdate(tb, o)
	}
	return Validate(tb)
}

// withDefaults fills the empty fields of opts.
func (opts Options) withDefaults() Options {
	if opts.Image == "" {
		opts.Image = DefaultImage
	}
	if opts.ActivityImage == "" {
		opts.ActivityImage = activity.DefaultImage
	}
	return opts
}
