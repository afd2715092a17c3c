package project

import (
	"context"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	"github.com/accelstack/accelstack/api"
	tensorstackv1beta1 "github.com/accelstack/accelstack/api/tensorstack/v1beta1"
)

// newWebhook returns the webhook over a fake API server holding objs,
// whose dry runs refuse what refuse returns an error for.
func newWebhook(t *testing.T, refuse func(client.Object) error, objs ...client.Object) *webhook {
	t.Helper()
	scheme := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	api.MustAddToScheme(scheme)
	c := fake.NewClientBuilder().WithScheme(scheme).WithObjects(objs...).WithInterceptorFuncs(interceptor.Funcs{
		Create: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.CreateOption) error {
			if refuse != nil {
				if err := refuse(obj); err != nil {
					return err
				}
			}
			return c.Create(ctx, obj, opts...)
		},
	}).Build()
	return &webhook{reader: c, writer: c, validationNamespace: "default"}
}

// fields returns "type field" of each error.
func fields(errs field.ErrorList) []string {
	out := []string{}
	for _, e := range errs {
		out = append(out, string(e.Type)+" "+e.Field)
	}
	return out
}

func TestValidateProjectNames(t *testing.T) {
	unowned := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "taken"}}
	other := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "others", Labels: map[string]string{ProjectLabelKey: "someone"}}}
	mine := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "mine", Labels: map[string]string{ProjectLabelKey: "mine"}}}
	w := newWebhook(t, nil, unowned, other, mine)
	for _, tc := range []struct {
		name    string
		project string
		created bool
		want    []string
	}{
		{name: "free", project: "fresh", created: true, want: []string{}},
		{name: "dot", project: "bad.name", created: true, want: []string{"FieldValueInvalid metadata.name"}},
		{name: "upper case", project: "Demo", created: true, want: []string{"FieldValueInvalid metadata.name"}},
		{name: "too long", project: strings.Repeat("a", 64), created: true, want: []string{"FieldValueInvalid metadata.name"}},
		{name: "longest", project: strings.Repeat("a", 63), created: true, want: []string{}},
		{name: "unowned namespace", project: "taken", created: true, want: []string{"FieldValueForbidden metadata.name"}},
		{name: "another project's namespace", project: "others", created: true, want: []string{"FieldValueForbidden metadata.name"}},
		{name: "its own namespace", project: "mine", created: true, want: []string{}},
		{name: "update keeps the namespace", project: "taken", created: false, want: []string{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			errs := w.validateProject(context.Background(), makeProject(tc.project), tc.created)
			if diff := cmp.Diff(tc.want, fields(errs)); diff != "" {
				t.Errorf("validateProject(%q) (-want +got):\n%s\n%v", tc.project, diff, errs)
			}
		})
	}
}

func TestValidateProjectSpec(t *testing.T) {
	// The API server refuses a negative quantity and an IP block of a bad
	// CIDR, as its validation would, with the causes it would give.
	refuse := func(obj client.Object) error {
		var causes []metav1.StatusCause
		switch o := obj.(type) {
		case *corev1.ResourceQuota:
			for name, q := range o.Spec.Hard {
				if q.Sign() < 0 {
					causes = append(causes, metav1.StatusCause{Type: metav1.CauseTypeFieldValueInvalid, Field: "spec.hard[" + string(name) + "]", Message: "must be greater than or equal to 0"})
				}
			}
		case *networkingv1.NetworkPolicy:
			for i, in := range o.Spec.Ingress {
				for j, from := range in.From {
					if from.IPBlock != nil && strings.HasPrefix(from.IPBlock.CIDR, "300.") {
						causes = append(causes, metav1.StatusCause{Type: metav1.CauseTypeFieldValueInvalid,
							Field: field.NewPath("spec", "ingress").Index(i).Child("from").Index(j).Child("ipBlock", "cidr").String(), Message: "must be a valid CIDR"})
					}
				}
			}
		}
		if len(causes) == 0 {
			return nil
		}
		err := apierrors.NewInvalid(schema.GroupKind{Kind: "X"}, obj.GetName(), nil)
		err.ErrStatus.Details.Causes = causes
		return err
	}
	w := newWebhook(t, refuse)
	badPolicy := &tensorstackv1beta1.ProjectNetworkPolicy{Template: &tensorstackv1beta1.ProjectNetworkPolicyTemplate{Spec: networkingv1.NetworkPolicySpec{
		Ingress: []networkingv1.NetworkPolicyIngressRule{{From: []networkingv1.NetworkPolicyPeer{{IPBlock: &networkingv1.IPBlock{CIDR: "300.0.0.0/8"}}}}},
	}}}
	for _, tc := range []struct {
		name string
		spec tensorstackv1beta1.ProjectSpec
		want []string
	}{
		{name: "empty", want: []string{}},
		{name: "profile", spec: tensorstackv1beta1.ProjectSpec{QuotaProfile: "small"}, want: []string{}},
		{name: "template", spec: withTemplate(makeProject("x"), quotaSpec("1")).Spec, want: []string{}},
		{name: "profile and template", spec: tensorstackv1beta1.ProjectSpec{QuotaProfile: "small", ResourceQuota: withTemplate(makeProject("x"), quotaSpec("1")).Spec.ResourceQuota},
			want: []string{"FieldValueForbidden spec.quotaProfile"}},
		{name: "bad quota", spec: withTemplate(makeProject("x"), quotaSpec("-1")).Spec,
			want: []string{"FieldValueInvalid spec.resourceQuota.template.spec.hard[requests.nvidia.com/gpu]"}},
		{name: "bad policy", spec: tensorstackv1beta1.ProjectSpec{NetworkPolicy: badPolicy},
			want: []string{"FieldValueInvalid spec.networkPolicy.template.spec.ingress[0].from[0].ipBlock.cidr"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := makeProject("demo")
			p.Spec = tc.spec
			errs := w.validateProject(context.Background(), p, true)
			if diff := cmp.Diff(tc.want, fields(errs)); diff != "" {
				t.Errorf("validateProject (-want +got):\n%s\n%v", diff, errs)
			}
		})
	}
}

// TestDryRunFailure: a dry run that fails for another reason than the
// object's validity is an internal error at the path, not an admission.
func TestDryRunFailure(t *testing.T) {
	w := newWebhook(t, func(client.Object) error { return apierrors.NewServiceUnavailable("down") })
	errs := w.dryRunQuota(context.Background(), field.NewPath("spec"), &corev1.ResourceQuotaSpec{})
	if diff := cmp.Diff([]string{"InternalError spec"}, fields(errs)); diff != "" {
		t.Errorf("dryRunQuota (-want +got):\n%s", diff)
	}
}
