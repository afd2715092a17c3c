package tensorboard

import (
	"path"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/utils/ptr"

	tensorstackv1beta1 "github.com/accelstack/accelstack/api/tensorstack/v1beta1"
	"github.com/accelstack/accelstack/pkg/csis3/s3volume"
	"github.com/accelstack/accelstack/pkg/interactive"
	"github.com/accelstack/accelstack/pkg/tensorboard/logdir"
)

// s3Layout is how a Secret holds S3 credentials.
type s3Layout int

const (
	// s3None: the TensorBoard reads no S3.
	s3None s3Layout = iota
	// s3Env: the S3-env layout, one key each for the endpoint, the access
	// key ID and the secret key (and optionally the region), passed as
	// secretKeyRef environment variables.
	s3Env
	// s3Cfg: the S3-cfg layout, an s3cmd configuration in the key .s3cfg,
	// mounted as a file that a shell prelude reads into the environment.
	s3Cfg
)

// S3CfgDir is where the .s3cfg of an S3-cfg Secret is mounted.
const S3CfgDir = "/var/run/secrets/tensorstack.dev/s3"

// s3Prelude runs before TensorBoard when it reads S3: it sets the
// variables TensorFlow's S3 file system (S3_ENDPOINT, S3_USE_HTTPS,
// AWS_REGION, AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY) and boto3
// (AWS_ENDPOINT_URL) read, from the mounted .s3cfg when there is one,
// then runs its arguments. Values never appear in the pod's spec.
const s3Prelude = `f=` + S3CfgDir + `/` + s3volume.SecretS3cfg + `
if [ -f "$f" ]; then
  get() { sed -n "s/^[[:space:]]*$1[[:space:]]*=[[:space:]]*//p" "$f" | tail -n 1 | sed 's/[[:space:]]*$//'; }
  AWS_ACCESS_KEY_ID=$(get access_key)
  AWS_SECRET_ACCESS_KEY=$(get secret_key)
  S3_ENDPOINT=$(get host_base)
  case "$S3_ENDPOINT" in
  *://*) ;;
  *) case "$(get use_https | tr A-Z a-z)" in false|no|off|0) S3_ENDPOINT="http://$S3_ENDPOINT" ;; *) S3_ENDPOINT="https://$S3_ENDPOINT" ;; esac ;;
  esac
  AWS_REGION=$(get bucket_location)
  case "$AWS_REGION" in US) AWS_REGION= ;; EU) AWS_REGION=eu-west-1 ;; esac
fi
: "${AWS_REGION:=us-east-1}"
case "$S3_ENDPOINT" in http://*) S3_USE_HTTPS=0 ;; *) S3_USE_HTTPS=1 ;; esac
export AWS_ACCESS_KEY_ID AWS_SECRET_ACCESS_KEY AWS_REGION S3_ENDPOINT S3_USE_HTTPS AWS_ENDPOINT_URL="$S3_ENDPOINT"
exec "$@"
`

// downloadScript saves each (directory, URL, file name) triple of its
// arguments, in Python as the TensorBoard image has it.
const downloadScript = `import os, shutil, sys, urllib.request
a = sys.argv[1:]
for d, u, f in zip(a[0::3], a[1::3], a[2::3]):
    os.makedirs(d, exist_ok=True)
    with urllib.request.urlopen(u, timeout=60) as r, open(os.path.join(d, f), "wb") as o:
        shutil.copyfileobj(r, o)
    print("downloaded", u, flush=True)
`

// Volume names.
const (
	httpVolume  = "http-logs"
	s3CfgVolume = "s3cfg"
	tmpVolume   = "tmp"
)

// DefaultResources are the resources of a TensorBoard that names none.
func DefaultResources() corev1.ResourceRequirements {
	return corev1.ResourceRequirements{
		Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("100m"), corev1.ResourceMemory: resource.MustParse("256Mi")},
		Limits:   corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1"), corev1.ResourceMemory: resource.MustParse("2Gi")},
	}
}

// workload returns the Deployment and Service of tb, reading the logs of
// p with the S3 Secret in layout, running image (tb's own when it names
// one) and the sidecar activityImage.
func workload(tb *tensorstackv1beta1.TensorBoard, p *logdir.Plan, layout s3Layout, image, activityImage string) interactive.Workload {
	if tb.Spec.Image != "" {
		image = tb.Spec.Image
	}
	name := ObjectName(tb.Name)
	selector := map[string]string{LabelKey: name}
	labels := interactive.AppLabels(appName, tb.Name, appName)
	labels[LabelKey] = name
	resources := DefaultResources()
	if tb.Spec.Resources != nil {
		resources = *tb.Spec.Resources.DeepCopy()
	}

	prefix := strings.TrimSuffix(URLPrefix(tb.Namespace, tb.Name), "/")
	args := []string{
		"tensorboard",
		"--logdir_spec=" + p.LogdirSpec(),
		"--host=127.0.0.1",
		"--port=" + strconv.Itoa(Port),
		"--path_prefix=" + prefix,
	}
	ctr := corev1.Container{
		Name:            ContainerName,
		Image:           image,
		Command:         args[:1],
		Args:            args[1:],
		Env:             []corev1.EnvVar{{Name: "HOME", Value: "/tmp"}},
		Resources:       resources,
		SecurityContext: interactive.ServerSecurityContext(),
		VolumeMounts:    []corev1.VolumeMount{{Name: tmpVolume, MountPath: "/tmp"}},
	}
	pod := corev1.PodSpec{Volumes: []corev1.Volume{{Name: tmpVolume, VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}}}}

	for i, claim := range p.PVCs {
		vol := "pvc-" + strconv.Itoa(i)
		pod.Volumes = append(pod.Volumes, corev1.Volume{Name: vol, VolumeSource: corev1.VolumeSource{
			PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: claim, ReadOnly: true},
		}})
		ctr.VolumeMounts = append(ctr.VolumeMounts, corev1.VolumeMount{Name: vol, MountPath: path.Join(logdir.PVCMountRoot, claim), ReadOnly: true})
	}

	if len(p.Downloads) > 0 {
		pod.Volumes = append(pod.Volumes, corev1.Volume{Name: httpVolume, VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}})
		ctr.VolumeMounts = append(ctr.VolumeMounts, corev1.VolumeMount{Name: httpVolume, MountPath: logdir.HTTPDownloadRoot, ReadOnly: true})
		dl := []string{"python3", "-c", downloadScript}
		for _, d := range p.Downloads {
			dl = append(dl, d.Dir, d.URL, d.File)
		}
		pod.InitContainers = []corev1.Container{{
			Name:            DownloaderName,
			Image:           image,
			Command:         dl,
			Resources:       corev1.ResourceRequirements{Requests: resources.Requests, Limits: resources.Limits},
			SecurityContext: interactive.ServerSecurityContext(),
			VolumeMounts:    []corev1.VolumeMount{{Name: httpVolume, MountPath: logdir.HTTPDownloadRoot}},
		}}
	}

	switch layout {
	case s3Env:
		ref := func(env, key string, optional bool) corev1.EnvVar {
			return corev1.EnvVar{Name: env, ValueFrom: &corev1.EnvVarSource{SecretKeyRef: &corev1.SecretKeySelector{
				LocalObjectReference: corev1.LocalObjectReference{Name: p.S3Secret}, Key: key, Optional: ptr.To(optional),
			}}}
		}
		ctr.Env = append(ctr.Env,
			ref("AWS_ACCESS_KEY_ID", s3volume.SecretAccessKeyID, false),
			ref("AWS_SECRET_ACCESS_KEY", s3volume.SecretSecretAccessKey, false),
			ref("S3_ENDPOINT", s3volume.SecretEndpoint, false),
			ref("AWS_REGION", s3volume.SecretRegion, true),
		)
	case s3Cfg:
		pod.Volumes = append(pod.Volumes, corev1.Volume{Name: s3CfgVolume, VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{
			SecretName: p.S3Secret, DefaultMode: ptr.To[int32](0o444),
			Items: []corev1.KeyToPath{{Key: s3volume.SecretS3cfg, Path: s3volume.SecretS3cfg}},
		}}})
		ctr.VolumeMounts = append(ctr.VolumeMounts, corev1.VolumeMount{Name: s3CfgVolume, MountPath: S3CfgDir, ReadOnly: true})
	}
	if layout != s3None {
		ctr.Command = []string{"sh", "-c", s3Prelude, "s3-env"}
		ctr.Args = args
	}
	pod.Containers = []corev1.Container{ctr}

	return interactive.Workload{
		Namespace:     tb.Namespace,
		Name:          name,
		Labels:        labels,
		Selector:      selector,
		Suspend:       tb.Spec.Suspend,
		Pod:           pod,
		UpstreamPort:  Port,
		ActivityImage: activityImage,
		Scheduler:     tb.Spec.Scheduler,
		Owner:         tb,
	}
}
