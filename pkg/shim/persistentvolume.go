package shim

import (
	"fmt"
	"net/url"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	tensorstackv1beta2 "github.com/accelstack/accelstack/api/tensorstack/v1beta2"
	"github.com/accelstack/accelstack/pkg/csis3/s3volume"
)

// Labels and names of the objects a StorageShim owns.
const (
	// S3StorageClass is the StorageClass of S3 StorageShim PVCs, as users see it.
	S3StorageClass = "csi-s3"
	// NominalCapacity is the capacity a shim's PV and PVC report; the real
	// size is whatever the storage holds.
	NominalCapacity = "1"

	// ShimNamespaceLabelKey and ShimNameLabelKey name the StorageShim a PV belongs to.
	ShimNamespaceLabelKey = "tensorstack.dev/storageshim-namespace"
	ShimNameLabelKey      = "tensorstack.dev/storageshim-name"

	// Ceph ConfigMap and Secret keys (ceph-csi static volumes).
	CephDriverKey    = "driver"
	CephClusterIDKey = "clusterID"
	CephFSNameKey    = "fsName"
	CephUserIDKey    = "userID"
	CephUserKeyKey   = "userKey"
)

// PVName is the name of the PV of a StorageShim: unique per shim, stable across reconciles.
func PVName(shim *tensorstackv1beta2.StorageShim) string {
	return "storageshim-" + string(shim.UID)
}

// ParseS3URI splits s3://bucket[/prefix] into its bucket and prefix (without
// leading or trailing slashes). It refuses ".", ".." and empty ("//")
// segments, which the csi-s3 driver refuses at mount time, and empty
// buckets; the CRD schema refuses them too, this is defence in depth.
func ParseS3URI(uri string) (bucket, prefix string, err error) {
	u, err := url.Parse(uri)
	if err != nil || u.Scheme != "s3" || u.Host == "" || u.RawQuery != "" || u.Fragment != "" || u.User != nil {
		return "", "", fmt.Errorf("spec.s3.uri %q is not of the form s3://<bucket>[/<path>]", uri)
	}
	if strings.Contains(u.Path, "//") {
		return "", "", fmt.Errorf("spec.s3.uri %q must not contain empty path segments (//)", uri)
	}
	prefix = strings.Trim(u.Path, "/")
	for _, seg := range strings.Split(prefix, "/") {
		if seg == "." || seg == ".." {
			return "", "", fmt.Errorf("spec.s3.uri %q must not contain . or .. path segments", uri)
		}
	}
	return u.Host, prefix, nil
}

// accessModes are RWX, or ROX for a read-only shim.
func accessModes(readOnly bool) []corev1.PersistentVolumeAccessMode {
	if readOnly {
		return []corev1.PersistentVolumeAccessMode{corev1.ReadOnlyMany}
	}
	return []corev1.PersistentVolumeAccessMode{corev1.ReadWriteMany}
}

// newPV returns the static PV of a shim, pre-bound to the shim's PVC, with
// reclaim policy Retain so that deleting the shim never deletes data.
func newPV(shim *tensorstackv1beta2.StorageShim, class string, readOnly bool, source *corev1.CSIPersistentVolumeSource) *corev1.PersistentVolume {
	return &corev1.PersistentVolume{
		ObjectMeta: metav1.ObjectMeta{
			Name:   PVName(shim),
			Labels: map[string]string{ShimNamespaceLabelKey: shim.Namespace, ShimNameLabelKey: shim.Name},
		},
		Spec: corev1.PersistentVolumeSpec{
			Capacity:                      corev1.ResourceList{corev1.ResourceStorage: resource.MustParse(NominalCapacity)},
			AccessModes:                   accessModes(readOnly),
			PersistentVolumeReclaimPolicy: corev1.PersistentVolumeReclaimRetain,
			StorageClassName:              class,
			ClaimRef: &corev1.ObjectReference{
				APIVersion: "v1", Kind: "PersistentVolumeClaim", Namespace: shim.Namespace, Name: shim.Name,
			},
			PersistentVolumeSource: corev1.PersistentVolumeSource{CSI: source},
		},
	}
}

// s3PV is the csi-s3 static volume of an S3 shim: the bucket and prefix in
// the volume attributes, the S3-cfg Secret as node-stage and node-publish
// secret. The volume handle is the PV name, so two shims over the same
// prefix get separate staging mounts with their own credentials.
func s3PV(shim *tensorstackv1beta2.StorageShim, driver, bucket, prefix string) *corev1.PersistentVolume {
	s3 := shim.Spec.S3
	secret := &corev1.SecretReference{Namespace: shim.Namespace, Name: s3.SecretRef.Name}
	attrs := map[string]string{s3volume.AttrBucket: bucket, s3volume.AttrReadOnly: strconv.FormatBool(s3.ReadOnly)}
	if prefix != "" {
		attrs[s3volume.AttrPrefix] = prefix
	}
	return newPV(shim, S3StorageClass, s3.ReadOnly, &corev1.CSIPersistentVolumeSource{
		Driver:               driver,
		VolumeHandle:         PVName(shim),
		ReadOnly:             s3.ReadOnly,
		VolumeAttributes:     attrs,
		NodeStageSecretRef:   secret,
		NodePublishSecretRef: secret,
	})
}

// cephfsPV is the ceph-csi static volume of a CephFS shim.
func cephfsPV(shim *tensorstackv1beta2.StorageShim, cluster map[string]string) *corev1.PersistentVolume {
	return newPV(shim, "", false, &corev1.CSIPersistentVolumeSource{
		Driver:       cluster[CephDriverKey],
		VolumeHandle: PVName(shim),
		VolumeAttributes: map[string]string{
			"staticVolume": "true",
			"rootPath":     shim.Spec.CephFS.Path,
			"clusterID":    cluster[CephClusterIDKey],
			"fsName":       cluster[CephFSNameKey],
		},
		NodeStageSecretRef: &corev1.SecretReference{Namespace: shim.Namespace, Name: shim.Spec.CephFS.Client.SecretRef.Name},
	})
}

// newPVC returns the shim's PVC, bound to pv by name and owned by the shim.
func newPVC(shim *tensorstackv1beta2.StorageShim, pv *corev1.PersistentVolume) *corev1.PersistentVolumeClaim {
	class := pv.Spec.StorageClassName
	return &corev1.PersistentVolumeClaim{
		ObjectMeta: metav1.ObjectMeta{Name: shim.Name, Namespace: shim.Namespace},
		Spec: corev1.PersistentVolumeClaimSpec{
			AccessModes:      pv.Spec.AccessModes,
			StorageClassName: &class,
			VolumeName:       pv.Name,
			Resources: corev1.VolumeResourceRequirements{
				Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse(NominalCapacity)},
			},
		},
	}
}
