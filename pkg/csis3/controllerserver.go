package csis3

import (
	"bytes"
	"context"
	"encoding/json"
	"io"

	csipb "github.com/container-storage-interface/spec/lib/go/csi"
	"github.com/minio/minio-go/v7"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"k8s.io/klog/v2"

	"github.com/accelstack/accelstack/pkg/csis3/s3volume"
)

// controllerServer implements the CSI Controller service: buckets or
// prefixes as volumes.
type controllerServer struct {
	csipb.UnimplementedControllerServer
	cfg   Config
	locks *keyedMutex
}

var _ csipb.ControllerServer = (*controllerServer)(nil)

// volumeMarker is the content of markerObject.
type volumeMarker struct {
	// Name is the CSI volume name the volume was created for.
	Name string `json:"name"`
	// CapacityBytes is the size requested; S3 has no quota, so it is only
	// recorded to answer repeated CreateVolume calls consistently.
	CapacityBytes int64 `json:"capacityBytes"`
}

// ControllerGetCapabilities offers CreateVolume/DeleteVolume.
func (s *controllerServer) ControllerGetCapabilities(context.Context, *csipb.ControllerGetCapabilitiesRequest) (*csipb.ControllerGetCapabilitiesResponse, error) {
	return &csipb.ControllerGetCapabilitiesResponse{Capabilities: []*csipb.ControllerServiceCapability{{
		Type: &csipb.ControllerServiceCapability_Rpc{Rpc: &csipb.ControllerServiceCapability_RPC{
			Type: csipb.ControllerServiceCapability_RPC_CREATE_DELETE_VOLUME,
		}},
	}}}, nil
}

// CreateVolume creates a bucket named after the volume, or with the
// StorageClass parameter bucket a prefix named after the volume in that
// bucket, and marks it as created by the driver. Repeating the call returns
// the same volume; the same name with a different capacity is AlreadyExists.
func (s *controllerServer) CreateVolume(ctx context.Context, req *csipb.CreateVolumeRequest) (*csipb.CreateVolumeResponse, error) {
	if req.GetName() == "" {
		return nil, status.Error(codes.InvalidArgument, "volume name is missing")
	}
	if len(req.GetVolumeCapabilities()) == 0 {
		return nil, status.Error(codes.InvalidArgument, "volume capabilities are missing")
	}
	if why := checkCapabilities(req.GetVolumeCapabilities()); why != "" {
		return nil, status.Error(codes.InvalidArgument, why)
	}
	if req.GetVolumeContentSource() != nil {
		return nil, status.Error(codes.InvalidArgument, "volume content sources are not supported")
	}
	params := req.GetParameters()
	name := sanitizeName(req.GetName())
	bucket, prefix := name, ""
	if b := params[s3volume.AttrBucket]; b != "" {
		if err := validateBucket(b); err != nil {
			return nil, status.Errorf(codes.InvalidArgument, "parameter %s: %v", s3volume.AttrBucket, err)
		}
		bucket, prefix = b, name
	}
	volCtx := map[string]string{}
	for _, k := range attrKeys {
		if v, ok := params[k]; ok {
			volCtx[k] = v
		}
	}
	// Validate the parameters now rather than at the first mount.
	vol, err := VolumeFromContext(VolumeID(bucket, prefix), volCtx, s.cfg.DefaultMounter)
	if err != nil {
		return nil, err
	}
	if _, err := mounterFor(s.cfg, vol); err != nil {
		return nil, err
	}
	cl, creds, err := s3ClientFrom(req.GetSecrets())
	if err != nil {
		return nil, err
	}
	capacity := req.GetCapacityRange().GetRequiredBytes()
	if capacity == 0 {
		capacity = req.GetCapacityRange().GetLimitBytes()
	}

	unlock := s.locks.lock(vol.ID)
	defer unlock()
	log := klog.FromContext(ctx).WithValues("volume", vol.ID)
	ctx, cancel := context.WithTimeout(ctx, s3Timeout)
	defer cancel()

	marker, err := readMarker(ctx, cl, bucket, prefix)
	if status.Code(err) == codes.NotFound && prefix != "" {
		return nil, status.Errorf(codes.InvalidArgument, "parameter %s: bucket %s does not exist", s3volume.AttrBucket, bucket)
	}
	if err != nil && status.Code(err) != codes.NotFound {
		return nil, err
	}
	switch {
	case marker != nil && marker.Name != req.GetName():
		return nil, status.Errorf(codes.AlreadyExists, "S3 location %s belongs to volume %q", vol.ID, marker.Name)
	case marker != nil && marker.CapacityBytes != capacity:
		return nil, status.Errorf(codes.AlreadyExists, "volume %q exists with capacity %d", req.GetName(), marker.CapacityBytes)
	case marker == nil:
		if prefix == "" {
			if err := cl.MakeBucket(ctx, bucket, minio.MakeBucketOptions{Region: creds.Region}); err != nil {
				code := minio.ToErrorResponse(err).Code
				if code != "BucketAlreadyOwnedByYou" && code != "BucketAlreadyExists" {
					return nil, s3Status(err, "creating bucket %s", bucket)
				}
				if code == "BucketAlreadyExists" {
					return nil, status.Errorf(codes.AlreadyExists, "bucket %s exists and belongs to someone else", bucket)
				}
			}
		} else if err := checkAccess(ctx, cl, bucket, prefix); err != nil {
			return nil, err
		}
		if err := writeMarker(ctx, cl, bucket, prefix, volumeMarker{Name: req.GetName(), CapacityBytes: capacity}); err != nil {
			return nil, err
		}
		log.V(2).Info("Created volume", "bucket", bucket, "prefix", prefix)
	}
	volCtx[s3volume.AttrBucket] = bucket
	if prefix != "" {
		volCtx[s3volume.AttrPrefix] = prefix
	}
	return &csipb.CreateVolumeResponse{Volume: &csipb.Volume{
		VolumeId:      vol.ID,
		CapacityBytes: capacity,
		VolumeContext: volCtx,
	}}, nil
}

// DeleteVolume deletes a volume CreateVolume made: every object under its
// prefix, or the whole bucket. A volume without the marker (a static one,
// or one already deleted) is left alone and the call succeeds.
func (s *controllerServer) DeleteVolume(ctx context.Context, req *csipb.DeleteVolumeRequest) (*csipb.DeleteVolumeResponse, error) {
	if req.GetVolumeId() == "" {
		return nil, status.Error(codes.InvalidArgument, "volume ID is missing")
	}
	bucket, prefix, err := ParseVolumeID(req.GetVolumeId())
	if err != nil {
		if status.Code(err) == codes.NotFound {
			return &csipb.DeleteVolumeResponse{}, nil
		}
		return nil, err
	}
	cl, _, err := s3ClientFrom(req.GetSecrets())
	if err != nil {
		return nil, err
	}
	unlock := s.locks.lock(req.GetVolumeId())
	defer unlock()
	log := klog.FromContext(ctx).WithValues("volume", req.GetVolumeId())
	ctx, cancel := context.WithTimeout(ctx, 10*s3Timeout)
	defer cancel()

	marker, err := readMarker(ctx, cl, bucket, prefix)
	if status.Code(err) == codes.NotFound {
		return &csipb.DeleteVolumeResponse{}, nil
	}
	if err != nil {
		return nil, err
	}
	if marker == nil {
		log.V(2).Info("Not deleting a volume the driver did not create", "bucket", bucket, "prefix", prefix)
		return &csipb.DeleteVolumeResponse{}, nil
	}
	listPrefix := ""
	if prefix != "" {
		listPrefix = prefix + "/"
	}
	// The marker goes last, so an interrupted delete is retried.
	objects := make(chan minio.ObjectInfo)
	go func() {
		defer close(objects)
		for o := range cl.ListObjects(ctx, bucket, minio.ListObjectsOptions{Prefix: listPrefix, Recursive: true}) {
			if o.Err == nil && o.Key == markerKey(prefix) {
				continue
			}
			select {
			case objects <- o:
			case <-ctx.Done():
				return
			}
		}
	}()
	for r := range cl.RemoveObjects(ctx, bucket, objects, minio.RemoveObjectsOptions{}) {
		if r.Err != nil {
			return nil, s3Status(r.Err, "deleting %s from bucket %s", r.ObjectName, bucket)
		}
	}
	if err := cl.RemoveObject(ctx, bucket, markerKey(prefix), minio.RemoveObjectOptions{}); err != nil {
		return nil, s3Status(err, "deleting the volume marker")
	}
	if prefix == "" {
		if err := cl.RemoveBucket(ctx, bucket); err != nil && minio.ToErrorResponse(err).Code != "NoSuchBucket" {
			return nil, s3Status(err, "deleting bucket %s", bucket)
		}
	}
	log.V(2).Info("Deleted volume", "bucket", bucket, "prefix", prefix)
	return &csipb.DeleteVolumeResponse{}, nil
}

// ValidateVolumeCapabilities confirms the capabilities every S3 volume
// supports. With secrets it also checks that the bucket exists (NotFound if
// not); without them the check is left to NodeStageVolume.
func (s *controllerServer) ValidateVolumeCapabilities(ctx context.Context, req *csipb.ValidateVolumeCapabilitiesRequest) (*csipb.ValidateVolumeCapabilitiesResponse, error) {
	if req.GetVolumeId() == "" {
		return nil, status.Error(codes.InvalidArgument, "volume ID is missing")
	}
	if len(req.GetVolumeCapabilities()) == 0 {
		return nil, status.Error(codes.InvalidArgument, "volume capabilities are missing")
	}
	vol, err := VolumeFromContext(req.GetVolumeId(), req.GetVolumeContext(), s.cfg.DefaultMounter)
	if err != nil {
		if _, _, idErr := ParseVolumeID(req.GetVolumeId()); status.Code(idErr) == codes.NotFound {
			return nil, idErr
		}
		return nil, err
	}
	if len(req.GetSecrets()) > 0 {
		cl, _, err := s3ClientFrom(req.GetSecrets())
		if err != nil {
			return nil, err
		}
		if err := checkAccess(ctx, cl, vol.Bucket, vol.Prefix); err != nil {
			return nil, err
		}
	}
	if why := checkCapabilities(req.GetVolumeCapabilities()); why != "" {
		return &csipb.ValidateVolumeCapabilitiesResponse{Message: why}, nil
	}
	return &csipb.ValidateVolumeCapabilitiesResponse{Confirmed: &csipb.ValidateVolumeCapabilitiesResponse_Confirmed{
		VolumeContext:      req.GetVolumeContext(),
		VolumeCapabilities: req.GetVolumeCapabilities(),
		Parameters:         req.GetParameters(),
	}}, nil
}

// markerKey is the marker object's key for a volume at prefix.
func markerKey(prefix string) string {
	if prefix == "" {
		return markerObject
	}
	return prefix + "/" + markerObject
}

// readMarker returns the volume's marker, nil if it has none, or NotFound
// if the bucket does not exist.
func readMarker(ctx context.Context, cl *minio.Client, bucket, prefix string) (*volumeMarker, error) {
	obj, err := cl.GetObject(ctx, bucket, markerKey(prefix), minio.GetObjectOptions{})
	if err != nil {
		return nil, s3Status(err, "reading the volume marker")
	}
	defer obj.Close()
	b, err := io.ReadAll(io.LimitReader(obj, 64<<10))
	if err != nil {
		if minio.ToErrorResponse(err).Code == "NoSuchKey" {
			return nil, nil
		}
		return nil, s3Status(err, "reading the volume marker of %s", VolumeID(bucket, prefix))
	}
	var m volumeMarker
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, status.Errorf(codes.Internal, "volume marker of %s: %v", VolumeID(bucket, prefix), err)
	}
	return &m, nil
}

// writeMarker records that the driver created the volume.
func writeMarker(ctx context.Context, cl *minio.Client, bucket, prefix string, m volumeMarker) error {
	b, err := json.Marshal(m)
	if err != nil {
		return status.Errorf(codes.Internal, "encoding the volume marker: %v", err)
	}
	_, err = cl.PutObject(ctx, bucket, markerKey(prefix), bytes.NewReader(b), int64(len(b)), minio.PutObjectOptions{ContentType: "application/json"})
	return s3Status(err, "writing the volume marker")
}
