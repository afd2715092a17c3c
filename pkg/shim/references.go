package shim

import (
	"context"
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	tensorstackv1beta2 "github.com/accelstack/accelstack/api/tensorstack/v1beta2"
	"github.com/accelstack/accelstack/pkg/csis3/s3volume"
)

// ResourceLabelKey carries the usage type of a Secret or ConfigMap.
const ResourceLabelKey = "tensorstack.dev/resource"

// s3SecretTypes are the usage labels an S3 StorageShim Secret may carry.
var s3SecretTypes = map[string]bool{"s3-cfg": true, "s3": true}

// checkS3Secret checks that the Secret exists, is not labelled for another
// use, and holds .s3cfg credentials the csi-s3 driver can read. The whole
// Secret goes through the driver's own check (s3volume.CredentialsFromSecrets),
// as the kubelet hands it to the driver at every mount, so a value the
// driver would refuse fails here first. Messages name the Secret and key,
// never a value.
func (r *Reconciler) checkS3Secret(ctx context.Context, namespace, name string) error {
	secret := &corev1.Secret{}
	if err := r.secrets.Get(ctx, client.ObjectKey{Namespace: namespace, Name: name}, secret); err != nil {
		if apierrors.IsNotFound(err) {
			return failf(ReasonSecretNotFound, "Secret %s not found in namespace %s", name, namespace)
		}
		return fmt.Errorf("getting Secret %s: %w", name, err)
	}
	if t, ok := secret.Labels[ResourceLabelKey]; ok && !s3SecretTypes[t] {
		return failf(ReasonSecretInvalid, "Secret %s is of type %q (label %s), want s3-cfg", name, t, ResourceLabelKey)
	}
	if _, ok := secret.Data[s3volume.SecretS3cfg]; !ok {
		return failf(ReasonSecretInvalid, "Secret %s has no key %s", name, s3volume.SecretS3cfg)
	}
	data := make(map[string]string, len(secret.Data))
	for k, v := range secret.Data {
		data[k] = string(v)
	}
	if _, err := s3volume.CredentialsFromSecrets(data); err != nil {
		return failf(ReasonSecretInvalid, "Secret %s: %v", name, err)
	}
	return nil
}

// cephCluster checks the CephFS shim's Secret and ConfigMap and returns the
// ConfigMap's cluster data.
func (r *Reconciler) cephCluster(ctx context.Context, shim *tensorstackv1beta2.StorageShim) (map[string]string, error) {
	ref := shim.Spec.CephFS.Server.ConfigMapRef
	ns := ref.Namespace
	if ns == "" {
		ns = shim.Namespace
	}
	cm := &corev1.ConfigMap{}
	if err := r.client.Get(ctx, client.ObjectKey{Namespace: ns, Name: ref.Name}, cm); err != nil {
		if apierrors.IsNotFound(err) {
			return nil, failf(ReasonConfigMapNotFound, "ConfigMap %s not found in namespace %s", ref.Name, ns)
		}
		return nil, fmt.Errorf("getting ConfigMap %s/%s: %w", ns, ref.Name, err)
	}
	if missing := missingKeys(cm.Data, CephDriverKey, CephClusterIDKey, CephFSNameKey); len(missing) > 0 {
		return nil, failf(ReasonConfigMapInvalid, "ConfigMap %s/%s lacks key(s) %s", ns, ref.Name, strings.Join(missing, ", "))
	}

	name := shim.Spec.CephFS.Client.SecretRef.Name
	secret := &corev1.Secret{}
	if err := r.secrets.Get(ctx, client.ObjectKey{Namespace: shim.Namespace, Name: name}, secret); err != nil {
		if apierrors.IsNotFound(err) {
			return nil, failf(ReasonSecretNotFound, "Secret %s not found in namespace %s", name, shim.Namespace)
		}
		return nil, fmt.Errorf("getting Secret %s: %w", name, err)
	}
	data := map[string]string{}
	for k, v := range secret.Data {
		data[k] = string(v)
	}
	if missing := missingKeys(data, CephUserIDKey, CephUserKeyKey); len(missing) > 0 {
		return nil, failf(ReasonSecretInvalid, "Secret %s lacks key(s) %s", name, strings.Join(missing, ", "))
	}
	return cm.Data, nil
}

// missingKeys lists the keys that are absent or blank in data.
func missingKeys(data map[string]string, keys ...string) []string {
	var missing []string
	for _, k := range keys {
		if strings.TrimSpace(data[k]) == "" {
			missing = append(missing, k)
		}
	}
	return missing
}
