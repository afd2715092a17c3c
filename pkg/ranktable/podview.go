package ranktable

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/accelstack/accelstack/pkg/ascend/annotation"
	"github.com/accelstack/accelstack/pkg/cacheselector"
)

// podAnnotations are the annotations a rank table is built from.
var podAnnotations = []string{annotation.ConfigurationKey, RankIndexAnnotation, VolcanoTaskIndexKey}

// podView is the transform of the rank-table cache's pods. The pods of a
// job are the controller's input whoever made them, a Volcano Job or the
// jobs engine, and the job's submitter may label any pod into the cache,
// so of each pod it keeps only what Build and JobName read: the stub
// metadata (cacheselector.StubMeta) with the job's labels, the controlling
// owner reference and the annotations of podAnnotations; no spec, no
// status, no other annotation.
func podView(in any) (any, error) {
	p, ok := in.(*corev1.Pod)
	if !ok {
		return in, nil
	}
	meta := cacheselector.StubMeta(p, RingControllerLabel, VolcanoJobNameLabel, VolcanoTaskIndexKey, VolcanoTaskSpecLabel)
	if ref := metav1.GetControllerOfNoCopy(p); ref != nil {
		meta.OwnerReferences = []metav1.OwnerReference{*ref}
	}
	for _, k := range podAnnotations {
		if v, ok := p.Annotations[k]; ok {
			if meta.Annotations == nil {
				meta.Annotations = map[string]string{}
			}
			meta.Annotations[k] = v
		}
	}
	return &corev1.Pod{TypeMeta: p.TypeMeta, ObjectMeta: meta}, nil
}
