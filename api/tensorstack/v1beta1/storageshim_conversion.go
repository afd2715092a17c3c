package v1beta1

import (
	"fmt"

	"sigs.k8s.io/controller-runtime/pkg/conversion"

	"github.com/accelstack/accelstack/api/tensorstack/v1beta2"
)

var _ conversion.Convertible = (*StorageShim)(nil)

// ConvertTo converts this StorageShim to the v1beta2 hub. Fields given in
// the typed layout win over the legacy top-level ones.
func (src *StorageShim) ConvertTo(hub conversion.Hub) error {
	dst, ok := hub.(*v1beta2.StorageShim)
	if !ok {
		return fmt.Errorf("converting StorageShim to %T: not the v1beta2 hub", hub)
	}
	dst.ObjectMeta = src.ObjectMeta
	dst.Status = src.Status
	dst.Spec = v1beta2.StorageShimSpec{Type: src.Spec.Type, CephFS: src.Spec.CephFS}
	if dst.Spec.Type == "" {
		dst.Spec.Type = v1beta2.StorageShimTypeS3
	}
	if s3 := src.Spec.S3; s3 != nil {
		out := &v1beta2.S3{URI: s3.URI, ReadOnly: s3.ReadOnly || src.Spec.ReadOnly}
		switch {
		case s3.SecretRef != nil:
			out.SecretRef = *s3.SecretRef
		case src.Spec.SecretRef != nil:
			out.SecretRef = *src.Spec.SecretRef
		}
		dst.Spec.S3 = out
	}
	return nil
}

// ConvertFrom converts the v1beta2 hub to this version. An S3 shim is
// written in both layouts, so legacy readers find readOnly and secretRef at
// the top level and typed readers under s3.
func (dst *StorageShim) ConvertFrom(hub conversion.Hub) error {
	src, ok := hub.(*v1beta2.StorageShim)
	if !ok {
		return fmt.Errorf("converting StorageShim from %T: not the v1beta2 hub", hub)
	}
	dst.ObjectMeta = src.ObjectMeta
	dst.Status = src.Status
	dst.Spec = StorageShimSpec{Type: src.Spec.Type, CephFS: src.Spec.CephFS}
	if s3 := src.Spec.S3; s3 != nil {
		ref := s3.SecretRef
		dst.Spec.S3 = &S3Config{URI: s3.URI, ReadOnly: s3.ReadOnly, SecretRef: &ref}
		dst.Spec.ReadOnly = s3.ReadOnly
		dst.Spec.SecretRef = &ref
	}
	return nil
}
