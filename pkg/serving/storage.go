package serving

import (
	"path"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"

	tensorstackv1beta1 "github.com/accelstack/accelstack/api/tensorstack/v1beta1"
	"github.com/accelstack/accelstack/pkg/datacube/executorenv"
)

// StorageInitializerName is the name of the init container that downloads
// an S3 model.
const StorageInitializerName = "storage-initializer"

// ModelVolumeName is the name of the volume holding the model.
const ModelVolumeName = "model"

// The keys of an S3 model's Secret (an s3-env Secret).
const (
	SecretKeyEndpoint        = "endpoint"
	SecretKeyAccessKeyID     = "accessKeyID"
	SecretKeySecretAccessKey = "secretAccessKey"
)

// The DataCube options of an S3 source, as the executor names them.
const (
	optS3Endpoint        = "s3-endpoint"
	optS3AccessKeyID     = "s3-access-key-id"
	optS3SecretAccessKey = "s3-secret-access-key"
	optS3URI             = "s3-uri"
)

// ApplyStorage adds storage to spec: the model volume, mounted read-only at
// the model's mount path in every container (read-write in the
// initializer), and for S3 the storage initializer run from image. A nil
// storage leaves spec alone.
func ApplyStorage(spec *corev1.PodSpec, storage *tensorstackv1beta1.ModelStorage, image string) {
	if storage == nil {
		return
	}
	mountPath := storage.MountPath()
	mount := corev1.VolumeMount{Name: ModelVolumeName, MountPath: mountPath, ReadOnly: true}
	switch {
	case storage.PVC != nil:
		spec.Volumes = append(spec.Volumes, corev1.Volume{Name: ModelVolumeName, VolumeSource: corev1.VolumeSource{
			PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: storage.PVC.Name, ReadOnly: true},
		}})
		mount.SubPath = storage.PVC.SubPath
	case storage.S3 != nil:
		spec.Volumes = append(spec.Volumes, corev1.Volume{Name: ModelVolumeName, VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}})
		spec.InitContainers = append(spec.InitContainers, storageInitializer(storage.S3, mountPath, image))
	default:
		return
	}
	for i := range spec.Containers {
		spec.Containers[i].VolumeMounts = append(spec.Containers[i].VolumeMounts, mount)
	}
}

// storageInitializer returns the init container that downloads s3 into
// mountPath: the DataCube executor with an S3 source and a PVC sink rooted
// at the mount path. The Secret's keys reach it as secretKeyRefs, and
// EnvSecretOptions makes it keep them out of its logs and report.
func storageInitializer(s3 *tensorstackv1beta1.S3ModelStorage, mountPath, image string) corev1.Container {
	secretEnv := func(option, key string) corev1.EnvVar {
		return corev1.EnvVar{
			Name: executorenv.OptionEnv(executorenv.SourceOptionPrefix, option),
			ValueFrom: &corev1.EnvVarSource{SecretKeyRef: &corev1.SecretKeySelector{
				LocalObjectReference: corev1.LocalObjectReference{Name: s3.SecretRef.Name}, Key: key,
			}},
		}
	}
	endpoint := secretEnv(optS3Endpoint, SecretKeyEndpoint)
	keyID := secretEnv(optS3AccessKeyID, SecretKeyAccessKeyID)
	secret := secretEnv(optS3SecretAccessKey, SecretKeySecretAccessKey)
	root := path.Clean(mountPath)
	return corev1.Container{
		Name:  StorageInitializerName,
		Image: image,
		// The flag's value is a validated absolute path (CRD validation).
		Args: []string{"--pvc-root=" + root},
		Env: []corev1.EnvVar{
			{Name: executorenv.EnvSourceType, Value: executorenv.TypeS3},
			{Name: executorenv.EnvSinkType, Value: executorenv.TypePVC},
			{Name: executorenv.EnvSinkPVCPath, Value: root},
			{Name: executorenv.OptionEnv(executorenv.SourceOptionPrefix, optS3URI), Value: s3.URI},
			keyID, endpoint, secret,
			// Sorted, as the executor expects.
			{Name: executorenv.EnvSecretOptions, Value: keyID.Name + "," + endpoint.Name + "," + secret.Name},
		},
		TerminationMessagePath:   executorenv.TerminationMessagePath,
		TerminationMessagePolicy: corev1.TerminationMessageReadFile,
		VolumeMounts:             []corev1.VolumeMount{{Name: ModelVolumeName, MountPath: root}},
		SecurityContext: &corev1.SecurityContext{
			AllowPrivilegeEscalation: ptr.To(false),
			Capabilities:             &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}},
		},
	}
}
