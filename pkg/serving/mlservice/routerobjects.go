package mlservice

import (
	"encoding/json"
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"

	tensorstackv1beta1 "github.com/accelstack/accelstack/api/tensorstack/v1beta1"
	"github.com/accelstack/accelstack/pkg/interactive"
	"github.com/accelstack/accelstack/pkg/serving/routerconfig"
)

// routerConfig returns the router's config: every release with its
// target, host and weight, and the transformer's target.
func routerConfig(m *tensorstackv1beta1.MLService, states map[string]ComponentState, rawURLs bool) *routerconfig.Config {
	cfg := &routerconfig.Config{Name: m.Name, Namespace: m.Namespace, PredictHost: predictHost(m)}
	for _, r := range m.Spec.Releases {
		name := predictorName(m, r.Name)
		t := routerconfig.Target{Name: r.Name, URL: states[name].Target, Weight: int(weight(m, r.Name))}
		if t.URL == "" {
			t.URL = privateURL(name, m.Namespace)
		}
		if rawURLs {
			t.Host = name
		}
		if l := r.Predictor.Logger; l != nil {
			t.Logger = &routerconfig.Logger{URLs: l.URLs, Mode: string(l.Mode)}
		}
		cfg.Releases = append(cfg.Releases, t)
	}
	if tr := m.Spec.Transformer; tr != nil {
		t := routerconfig.Target{URL: states[transformerName(m)].Target}
		if t.URL == "" {
			t.URL = privateURL(transformerName(m), m.Namespace)
		}
		if l := tr.Logger; l != nil {
			t.Logger = &routerconfig.Logger{URLs: l.URLs, Mode: string(l.Mode)}
		}
		cfg.Transformer = &t
	}
	return cfg
}

// weight is the percent of the global URL's requests release r serves.
func weight(m *tensorstackv1beta1.MLService, r string) int32 {
	canary := ptr.Deref(m.Spec.CanaryTrafficPercent, 0)
	switch {
	case m.Spec.Canary != "" && r == m.Spec.Canary:
		return canary
	case r == m.Spec.Default:
		if m.Spec.Canary == "" {
			return 100
		}
		return 100 - canary
	}
	return 0
}

// routerDeployment returns the router's Deployment, run from image.
func routerDeployment(m *tensorstackv1beta1.MLService, cfg *routerconfig.Config, image string, paused bool) (*appsv1.Deployment, error) {
	b, err := json.Marshal(cfg)
	if err != nil {
		return nil, fmt.Errorf("encoding the router config: %w", err)
	}
	l := labels(m, componentRouter, "")
	c := corev1.Container{
		Name:  componentRouter,
		Image: image,
		Env:   []corev1.EnvVar{{Name: routerconfig.EnvConfig, Value: string(b)}},
		Ports: []corev1.ContainerPort{{Name: "http", ContainerPort: ServingPort, Protocol: corev1.ProtocolTCP}},
		ReadinessProbe: &corev1.Probe{ProbeHandler: corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{
			Path: routerconfig.HealthPath, Port: intstr.FromInt32(ServingPort),
		}}},
		SecurityContext: interactive.ServerSecurityContext(),
	}
	for _, r := range m.Spec.Releases {
		if r.Name == m.Spec.Default && r.Predictor.Logger != nil && r.Predictor.Logger.Resources != nil {
			c.Resources = *r.Predictor.Logger.Resources.DeepCopy()
		}
	}
	replicas := int32(1)
	if paused {
		replicas = 0
	}
	return &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Namespace: m.Namespace, Name: routerName(m), Labels: l},
		Spec: appsv1.DeploymentSpec{
			Replicas: &replicas,
			Selector: &metav1.LabelSelector{MatchLabels: l},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: l},
				Spec: corev1.PodSpec{
					Containers:                   []corev1.Container{c},
					AutomountServiceAccountToken: ptr.To(false),
					EnableServiceLinks:           ptr.To(false),
					SecurityContext: &corev1.PodSecurityContext{
						RunAsNonRoot:   ptr.To(true),
						SeccompProfile: &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault},
					},
				},
			},
		},
	}, nil
}

// routerServices returns the Services in front of the router: the global
// one, the split one and, when rawURLs, one per release.
func routerServices(m *tensorstackv1beta1.MLService, rawURLs bool) []*corev1.Service {
	names := []string{m.Name, predictHost(m)}
	if rawURLs {
		for _, r := range m.Spec.Releases {
			names = append(names, predictorName(m, r.Name))
		}
	}
	sel := labels(m, componentRouter, "")
	out := make([]*corev1.Service, 0, len(names))
	for _, n := range names {
		out = append(out, &corev1.Service{
			ObjectMeta: metav1.ObjectMeta{Namespace: m.Namespace, Name: n, Labels: sel},
			Spec: corev1.ServiceSpec{
				Selector: sel,
				Ports:    []corev1.ServicePort{{Name: "http", Port: 80, TargetPort: intstr.FromInt32(ServingPort), Protocol: corev1.ProtocolTCP}},
			},
		})
	}
	return out
}
