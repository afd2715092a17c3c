package plugins

import (
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	corelisters "k8s.io/client-go/listers/core/v1"

	schedv1beta1 "github.com/accelstack/accelstack/api/scheduler/v1beta1"
	"github.com/accelstack/accelstack/pkg/scheduler/queue"
)

// shapesFactory watches the one ConfigMap holding the resource shape
// profiles, and no other.
func shapesFactory(c kubernetes.Interface) informers.SharedInformerFactory {
	return informers.NewSharedInformerFactoryWithOptions(c, 0,
		informers.WithNamespace(schedv1beta1.ShapesNamespace),
		informers.WithTweakListOptions(func(o *metav1.ListOptions) {
			o.FieldSelector = fields.OneTermEqualSelector("metadata.name", schedv1beta1.ShapesConfigMap).String()
		}))
}

// shapeLister lists the shape ConfigMap.
type shapeLister struct {
	corelisters.ConfigMapNamespaceLister
}

// shapes resolves the shape profile named profile.
func (s *state) shapes(profile string) ([]queue.Shape, error) {
	cm, err := s.shapeCMs.Get(schedv1beta1.ShapesConfigMap)
	if err != nil {
		return nil, fmt.Errorf("ConfigMap %s/%s: %w", schedv1beta1.ShapesNamespace, schedv1beta1.ShapesConfigMap, err)
	}
	return queue.ParseShapes(cm.Data, profile)
}
