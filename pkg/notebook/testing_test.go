package notebook

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	tensorstackv1beta1 "github.com/accelstack/accelstack/api/tensorstack/v1beta1"
)

// nbWrapper builds Notebooks for tests.
type nbWrapper struct{ tensorstackv1beta1.Notebook }

// makeNotebook returns a Jupyter Notebook ns/name running image in its
// notebook container, with the seed's PVC at /t9k/mnt.
func makeNotebook(ns, name string) *nbWrapper {
	return &nbWrapper{tensorstackv1beta1.Notebook{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, UID: "6c1f0a4e-0000-4000-8000-000000000001"},
		Spec: tensorstackv1beta1.NotebookSpec{
			Type: tensorstackv1beta1.NotebookJupyter,
			Template: tensorstackv1beta1.NotebookTemplateSpec{Spec: corev1.PodSpec{
				Containers: []corev1.Container{{
					Name:         tensorstackv1beta1.NotebookContainer,
					Image:        "t9kpublic/torch-2.1.0-notebook:1.77.1",
					VolumeMounts: []corev1.VolumeMount{{Name: "workingdir", MountPath: "/t9k/mnt"}},
				}},
				Volumes: []corev1.Volume{{Name: "workingdir", VolumeSource: corev1.VolumeSource{
					PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: name},
				}}},
			}},
		},
	}}
}

func (w *nbWrapper) typ(t tensorstackv1beta1.NotebookType) *nbWrapper {
	w.Spec.Type = t
	return w
}

func (w *nbWrapper) ssh(serviceType corev1.ServiceType, keys ...string) *nbWrapper {
	w.Spec.SSH = &tensorstackv1beta1.NotebookSSHSpec{Enabled: true, ServiceType: serviceType, AuthorizedKeys: keys}
	return w
}

func (w *nbWrapper) queue(q string) *nbWrapper {
	w.Spec.Scheduler = &tensorstackv1beta1.SchedulePolicy{T9kScheduler: &tensorstackv1beta1.T9kScheduler{Queue: q}}
	return w
}

func (w *nbWrapper) suspend() *nbWrapper {
	w.Spec.Suspend = true
	return w
}

func (w *nbWrapper) runMode(m tensorstackv1beta1.NotebookRunMode) *nbWrapper {
	w.Spec.RunMode = m
	return w
}

func (w *nbWrapper) podSpec(edit func(*corev1.PodSpec)) *nbWrapper {
	edit(&w.Spec.Template.Spec)
	return w
}

func (w *nbWrapper) obj() *tensorstackv1beta1.Notebook { return &w.Notebook }
