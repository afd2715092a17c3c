package integration

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	batchv1beta1 "github.com/accelstack/accelstack/api/batch/v1beta1"
	schedulerv1beta1 "github.com/accelstack/accelstack/api/scheduler/v1beta1"
	tensorstackv1beta2 "github.com/accelstack/accelstack/api/tensorstack/v1beta2"
	"github.com/accelstack/accelstack/test/harness"
)

// TestCRDsRoundTrip installs the CRDs into a real kube-apiserver and creates
// and reads back an object of each API group, checking the schema defaults.
func TestCRDsRoundTrip(t *testing.T) {
	t.Parallel()
	cp := harness.StartControlPlane(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()

	testCases := []struct {
		name  string
		obj   client.Object
		fresh client.Object
		// want extracts what the round trip must preserve or default.
		want func(client.Object) any
		// wantValue is what want must return for the object read back.
		wantValue any
	}{
		{
			name: "tensorstack.dev StorageShim",
			obj: &tensorstackv1beta2.StorageShim{
				ObjectMeta: metav1.ObjectMeta{Name: "shim", Namespace: "default"},
				Spec: tensorstackv1beta2.StorageShimSpec{
					Type: tensorstackv1beta2.StorageShimTypeS3,
					S3: &tensorstackv1beta2.S3{
						URI:       "s3://bucket/data/train",
						SecretRef: corev1.LocalObjectReference{Name: "s3cfg"},
					},
				},
			},
			fresh:     &tensorstackv1beta2.StorageShim{},
			want:      func(o client.Object) any { return o.(*tensorstackv1beta2.StorageShim).Spec },
			wantValue: tensorstackv1beta2.StorageShimSpec{Type: "s3", S3: &tensorstackv1beta2.S3{URI: "s3://bucket/data/train", SecretRef: corev1.LocalObjectReference{Name: "s3cfg"}}},
		},
		{
			name: "batch.tensorstack.dev GenericJob",
			obj: &batchv1beta1.GenericJob{
				ObjectMeta: metav1.ObjectMeta{Name: "job", Namespace: "default"},
				Spec: batchv1beta1.GenericJobSpec{
					ReplicaSpecs: []batchv1beta1.ReplicaSpec{{
						Type:          "worker",
						RestartPolicy: &batchv1beta1.RestartPolicy{},
						Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{
							Containers: []corev1.Container{{Name: "main", Image: "busybox"}},
						}},
					}},
					SuccessRules: []batchv1beta1.FinishRule{{"worker": {0}}},
				},
			},
			fresh: &batchv1beta1.GenericJob{},
			want: func(o client.Object) any {
				s := o.(*batchv1beta1.GenericJob).Spec
				return []any{*s.ReplicaSpecs[0].Replicas, *s.ReplicaSpecs[0].RestartPolicy, s.CleanUpPolicy, s.SuccessRules}
			},
			wantValue: []any{int32(1), batchv1beta1.RestartPolicy{Policy: "OnFailure", Limit: 0}, batchv1beta1.CleanUpPolicyNone, []batchv1beta1.FinishRule{{"worker": {0}}}},
		},
		{
			name: "scheduler.tensorstack.dev Queue",
			obj: &schedulerv1beta1.Queue{
				ObjectMeta: metav1.ObjectMeta{Name: "research"},
				Spec: schedulerv1beta1.QueueSpec{
					Priority:    10,
					MaxDuration: ptr.To("2h45m"),
					Quota:       &schedulerv1beta1.Quota{Requests: corev1.ResourceList{"nvidia.com/gpu": resource.MustParse("8")}},
				},
			},
			fresh: &schedulerv1beta1.Queue{},
			want: func(o client.Object) any {
				s := o.(*schedulerv1beta1.Queue).Spec
				return []any{s.Priority, *s.MaxDuration, s.Quota.Requests.Name("nvidia.com/gpu", resource.DecimalSI).String()}
			},
			wantValue: []any{int32(10), "2h45m", "8"},
		},
		{
			name:  "scheduler.tensorstack.dev PodGroup",
			obj:   &schedulerv1beta1.PodGroup{ObjectMeta: metav1.ObjectMeta{Name: "pg", Namespace: "default"}, Spec: schedulerv1beta1.PodGroupSpec{MinMember: 4}},
			fresh: &schedulerv1beta1.PodGroup{},
			want: func(o client.Object) any {
				s := o.(*schedulerv1beta1.PodGroup).Spec
				return []any{s.MinMember, s.Queue, s.Priority}
			},
			wantValue: []any{int32(4), "default", int32(0)},
		},
	}
	for _, tc := range testCases {
		t.Run(tc.name, func(t *testing.T) {
			if err := cp.Client.Create(ctx, tc.obj); err != nil {
				t.Fatalf("create: %v", err)
			}
			got := tc.fresh
			if err := cp.Client.Get(ctx, client.ObjectKeyFromObject(tc.obj), got); err != nil {
				t.Fatalf("get: %v", err)
			}
			if got.GetUID() == "" {
				t.Error("object read back has no UID")
			}
			if diff := cmp.Diff(tc.wantValue, tc.want(got)); diff != "" {
				t.Errorf("read back (-want +got):\n%s", diff)
			}
		})
	}
}

// TestCRDValidation checks that invalid objects are refused by the schema
// with a message that names the field.
func TestCRDValidation(t *testing.T) {
	t.Parallel()
	cp := harness.StartControlPlane(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()

	shim := func(spec tensorstackv1beta2.StorageShimSpec) client.Object {
		return &tensorstackv1beta2.StorageShim{ObjectMeta: metav1.ObjectMeta{GenerateName: "shim-", Namespace: "default"}, Spec: spec}
	}
	testCases := []struct {
		name    string
		obj     client.Object
		wantErr string
	}{
		{
			name:    "shim type s3 without s3",
			obj:     shim(tensorstackv1beta2.StorageShimSpec{Type: "s3"}),
			wantErr: "spec.s3 is required when spec.type is s3",
		},
		{
			name:    "shim unknown type",
			obj:     shim(tensorstackv1beta2.StorageShimSpec{Type: "nfs"}),
			wantErr: "spec.type",
		},
		{
			name:    "shim uri without s3 scheme",
			obj:     shim(tensorstackv1beta2.StorageShimSpec{Type: "s3", S3: &tensorstackv1beta2.S3{URI: "http://bucket", SecretRef: corev1.LocalObjectReference{Name: "s"}}}),
			wantErr: "spec.s3.uri",
		},
		{
			name:    "queue priority above 100",
			obj:     &schedulerv1beta1.Queue{ObjectMeta: metav1.ObjectMeta{Name: "q1"}, Spec: schedulerv1beta1.QueueSpec{Priority: 101}},
			wantErr: "spec.priority",
		},
		{
			name:    "queue bad maxDuration",
			obj:     &schedulerv1beta1.Queue{ObjectMeta: metav1.ObjectMeta{Name: "q2"}, Spec: schedulerv1beta1.QueueSpec{MaxDuration: ptr.To("3 weeks")}},
			wantErr: "spec.maxDuration",
		},
		{
			name:    "job without replicas",
			obj:     &batchv1beta1.GenericJob{ObjectMeta: metav1.ObjectMeta{Name: "j", Namespace: "default"}, Spec: batchv1beta1.GenericJobSpec{ReplicaSpecs: []batchv1beta1.ReplicaSpec{}}},
			wantErr: "spec.replicaSpecs",
		},
		{
			name:    "job bad cleanUpPolicy",
			obj:     &batchv1beta1.GenericJob{ObjectMeta: metav1.ObjectMeta{Name: "j2", Namespace: "default"}, Spec: batchv1beta1.GenericJobSpec{CleanUpPolicy: "Some", ReplicaSpecs: []batchv1beta1.ReplicaSpec{{Type: "w"}}}},
			wantErr: "spec.cleanUpPolicy",
		},
	}
	for _, tc := range testCases {
		t.Run(tc.name, func(t *testing.T) {
			err := cp.Client.Create(ctx, tc.obj)
			if err == nil {
				t.Fatalf("create succeeded, want an error naming %q", tc.wantErr)
			}
			if !strings.Contains(err.Error(), tc.wantErr) {
				t.Fatalf("create error = %v, want it to contain %q", err, tc.wantErr)
			}
		})
	}
}
