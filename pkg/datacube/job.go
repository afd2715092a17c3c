package datacube

import (
	"fmt"
	"path"
	"sort"
	"strconv"
	"strings"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	tensorstackv1beta1 "github.com/accelstack/accelstack/api/tensorstack/v1beta1"
	"github.com/accelstack/accelstack/pkg/datacube/executorenv"
)

// NameLabelKey labels a DataCube's Job and pods with the DataCube's name.
const NameLabelKey = "tensorstack.dev/datacube"

// executorCommand is the executor's binary in its image.
const executorCommand = "datacube-executor"

// JobName is the name of a DataCube's Job; its pods are <name>-batchjob-xxxxx.
func JobName(dc *tensorstackv1beta1.DataCube) string {
	return dc.Name + "-batchjob"
}

// pvcSide returns the side of the DataCube that is a PVC, and its env var.
func pvcSide(dc *tensorstackv1beta1.DataCube) (*tensorstackv1beta1.PVCReference, string, error) {
	switch {
	case dc.Spec.Sink.Type == tensorstackv1beta1.DataTypePVC && dc.Spec.Sink.PVC != nil:
		return dc.Spec.Sink.PVC, executorenv.EnvSinkPVCPath, nil
	case dc.Spec.Source.Type == tensorstackv1beta1.DataTypePVC && dc.Spec.Source.PVC != nil:
		return dc.Spec.Source.PVC, executorenv.EnvSourcePVCPath, nil
	}
	return nil, "", fmt.Errorf("one of spec.source and spec.sink must be of type pvc with spec.<side>.pvc set")
}

// containerPath is where subPath of the PVC appears in the executor's
// container. It refuses absolute paths and ".." segments.
func containerPath(subPath string) (string, error) {
	if strings.HasPrefix(subPath, "/") {
		return "", fmt.Errorf("pvc.subPath %q must be relative", subPath)
	}
	for _, seg := range strings.Split(subPath, "/") {
		if seg == ".." {
			return "", fmt.Errorf("pvc.subPath %q must not contain .. segments", subPath)
		}
	}
	return path.Join(executorenv.PVCMountPath, subPath), nil
}

// optionEnv turns a side's options into the executor's environment, keeping
// secret references as references.
func optionEnv(prefix string, options []corev1.EnvVar) []corev1.EnvVar {
	env := make([]corev1.EnvVar, 0, len(options))
	for _, o := range options {
		e := *o.DeepCopy()
		e.Name = executorenv.OptionEnv(prefix, o.Name)
		env = append(env, e)
	}
	return env
}

// secretOptions returns executorenv.EnvSecretOptions's value for env: the names of the
// variables whose value is a Secret key, sorted.
func secretOptions(env []corev1.EnvVar) string {
	var names []string
	for _, e := range env {
		if e.ValueFrom != nil && e.ValueFrom.SecretKeyRef != nil {
			names = append(names, e.Name)
		}
	}
	sort.Strings(names)
	return strings.Join(names, ",")
}

// newJob returns the Job that runs a DataCube's transfer with image. The
// pod gets no service account token: the executor needs no API access.
func newJob(dc *tensorstackv1beta1.DataCube, image string) (*batchv1.Job, error) {
	if err := validate(dc); err != nil {
		return nil, err
	}
	pvc, pvcEnv, err := pvcSide(dc)
	if err != nil {
		return nil, err
	}
	dir, err := containerPath(pvc.SubPath)
	if err != nil {
		return nil, err
	}
	opts := dc.Spec.Executor.Options
	env := []corev1.EnvVar{
		{Name: executorenv.EnvSourceType, Value: string(dc.Spec.Source.Type)},
		{Name: executorenv.EnvSinkType, Value: string(dc.Spec.Sink.Type)},
		{Name: pvcEnv, Value: dir},
		{Name: executorenv.EnvSync, Value: strconv.FormatBool(opts.Sync)},
	}
	env = append(env, optionEnv(executorenv.SourceOptionPrefix, dc.Spec.Source.Options)...)
	env = append(env, optionEnv(executorenv.SinkOptionPrefix, dc.Spec.Sink.Options)...)
	env = append(env, dc.Spec.Executor.Env...)
	// Last, so that spec.executor.env cannot override it.
	if names := secretOptions(env); names != "" {
		env = append(env, corev1.EnvVar{Name: executorenv.EnvSecretOptions, Value: names})
	}

	labels := map[string]string{NameLabelKey: dc.Name}
	return &batchv1.Job{
		ObjectMeta: metav1.ObjectMeta{Name: JobName(dc), Namespace: dc.Namespace, Labels: labels},
		Spec: batchv1.JobSpec{
			BackoffLimit: ptr.To(ptr.Deref(opts.BackoffLimit, 0)),
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec: corev1.PodSpec{
					RestartPolicy:                corev1.RestartPolicyNever,
					AutomountServiceAccountToken: ptr.To(false),
					// A per-attempt deadline: the pod fails and the Job retries.
					ActiveDeadlineSeconds: opts.ActiveDeadlineSeconds,
					SecurityContext:       dc.Spec.Executor.SecurityContext,
					Containers: []corev1.Container{{
						Name:                     "executor",
						Image:                    image,
						Command:                  []string{executorCommand},
						Args:                     opts.ExtraArgs,
						Env:                      env,
						TerminationMessagePath:   executorenv.TerminationMessagePath,
						TerminationMessagePolicy: corev1.TerminationMessageReadFile,
						// An upload only reads the PVC.
						VolumeMounts: []corev1.VolumeMount{{Name: "data", MountPath: executorenv.PVCMountPath, ReadOnly: pvcEnv == executorenv.EnvSourcePVCPath}},
					}},
					Volumes: []corev1.Volume{{
						Name: "data",
						VolumeSource: corev1.VolumeSource{PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{
							ClaimName: pvc.Name,
						}},
					}},
				},
			},
		},
	}, nil
}
