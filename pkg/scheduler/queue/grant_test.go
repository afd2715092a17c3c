package queue

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	schedv1beta1 "github.com/accelstack/accelstack/api/scheduler/v1beta1"
)

func TestCarryGrant(t *testing.T) {
	granted := &metav1.ObjectMeta{Annotations: map[string]string{schedv1beta1.QueueGrantAnnotation: "gpu"}}
	plain := &metav1.ObjectMeta{}
	forged := func() map[string]string {
		return map[string]string{schedv1beta1.QueueGrantAnnotation: "gpu", "keep": "me"}
	}
	tests := []struct {
		name      string
		in        map[string]string
		owner     metav1.Object
		queue     string
		wantGrant string // "" means none
	}{
		{"the owner's grant is carried", nil, granted, "gpu", "gpu"},
		{"a template's grant is dropped when the owner has none", forged(), plain, "gpu", ""},
		{"the owner's grant of another queue is not carried", forged(), granted, "cpu", ""},
		{"a pod in no queue carries none", forged(), granted, "", ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := CarryGrant(tc.in, tc.owner, tc.queue)
			if g := got[schedv1beta1.QueueGrantAnnotation]; g != tc.wantGrant {
				t.Errorf("grant = %q, want %q", g, tc.wantGrant)
			}
			if tc.in != nil && got["keep"] != "me" {
				t.Errorf("other annotations lost: %v", got)
			}
		})
	}
}

func TestGranted(t *testing.T) {
	obj := &metav1.ObjectMeta{Annotations: map[string]string{schedv1beta1.QueueGrantAnnotation: "gpu"}}
	if !Granted(obj, "gpu") {
		t.Error("Granted(gpu) = false for an object granted gpu")
	}
	if Granted(obj, "cpu") {
		t.Error("Granted(cpu) = true for an object granted gpu")
	}
	if Granted(&metav1.ObjectMeta{Annotations: map[string]string{schedv1beta1.QueueGrantAnnotation: ""}}, "") {
		t.Error(`Granted("") = true`)
	}
}
