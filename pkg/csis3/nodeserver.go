package csis3

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	csipb "github.com/container-storage-interface/spec/lib/go/csi"
	"github.com/prometheus/client_golang/prometheus"
	"golang.org/x/sys/unix"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"k8s.io/klog/v2"
	"k8s.io/mount-utils"
)

// nodeServer implements the CSI Node service: a FUSE mount per volume at
// the staging path, bind mounts into pods.
type nodeServer struct {
	csipb.UnimplementedNodeServer
	cfg Config
	// mounter does bind mounts, unmounts and mount point checks.
	mounter mount.Interface
	// lazyUnmount detaches a mount even if it is busy or dead.
	lazyUnmount func(path string) error
	launcher    Launcher
	state       stateStore
	locks       *keyedMutex
	// mountInfo reads the mount table; nil reads /proc/self/mountinfo.
	mountInfo func() ([]mount.MountInfo, error)
	// pending, if set, reports the uploads unstaging waits for.
	pending *prometheus.GaugeVec
}

var _ csipb.NodeServer = (*nodeServer)(nil)

// NodeGetInfo returns the node ID.
func (s *nodeServer) NodeGetInfo(context.Context, *csipb.NodeGetInfoRequest) (*csipb.NodeGetInfoResponse, error) {
	return &csipb.NodeGetInfoResponse{NodeId: s.cfg.NodeID}, nil
}

// NodeGetCapabilities offers staging, volume stats and volume health.
func (s *nodeServer) NodeGetCapabilities(context.Context, *csipb.NodeGetCapabilitiesRequest) (*csipb.NodeGetCapabilitiesResponse, error) {
	var caps []*csipb.NodeServiceCapability
	for _, t := range []csipb.NodeServiceCapability_RPC_Type{
		csipb.NodeServiceCapability_RPC_STAGE_UNSTAGE_VOLUME,
		csipb.NodeServiceCapability_RPC_GET_VOLUME_STATS,
		csipb.NodeServiceCapability_RPC_GET_VOLUME_HEALTH,
	} {
		caps = append(caps, &csipb.NodeServiceCapability{Type: &csipb.NodeServiceCapability_Rpc{Rpc: &csipb.NodeServiceCapability_RPC{Type: t}}})
	}
	return &csipb.NodeGetCapabilitiesResponse{Capabilities: caps}, nil
}

// NodeStageVolume mounts the volume with its FUSE mounter at the staging
// path. Refused or missing credentials leave nothing behind. Staging a
// volume that is already staged there succeeds; a dead mount is remounted.
func (s *nodeServer) NodeStageVolume(ctx context.Context, req *csipb.NodeStageVolumeRequest) (*csipb.NodeStageVolumeResponse, error) {
	if req.GetVolumeId() == "" {
		return nil, status.Error(codes.InvalidArgument, "volume ID is missing")
	}
	if req.GetStagingTargetPath() == "" {
		return nil, status.Error(codes.InvalidArgument, "staging target path is missing")
	}
	if req.GetVolumeCapability() == nil {
		return nil, status.Error(codes.InvalidArgument, "volume capability is missing")
	}
	if why := checkCapabilities([]*csipb.VolumeCapability{req.GetVolumeCapability()}); why != "" {
		return nil, status.Error(codes.InvalidArgument, why)
	}
	staging, err := absPath(req.GetStagingTargetPath(), "staging target path")
	if err != nil {
		return nil, err
	}
	vol, err := VolumeFromContext(req.GetVolumeId(), req.GetVolumeContext(), s.cfg.DefaultMounter)
	if err != nil {
		return nil, err
	}
	m, err := mounterFor(s.cfg, vol)
	if err != nil {
		return nil, err
	}
	creds, err := credentialsFrom(req.GetSecrets())
	if err != nil {
		return nil, err
	}
	unlock := s.locks.lock(vol.ID)
	defer unlock()
	log := klog.FromContext(ctx).WithValues("volume", vol.ID, "stagingPath", staging)

	rec, err := s.state.get(vol.ID)
	if err != nil {
		return nil, status.Error(codes.Internal, err.Error())
	}
	targets := map[string]bool{}
	created, restage := false, rec != nil
	if rec != nil {
		if rec.StagingPath != staging {
			return nil, status.Errorf(codes.FailedPrecondition, "volume %s is staged at %s", vol.ID, rec.StagingPath)
		}
		if s.stagedHealthy(rec) {
			return &csipb.NodeStageVolumeResponse{}, nil
		}
		log.Info("Remounting a dead staging mount")
		s.stopMount(ctx, rec)
		targets, created = rec.Targets, rec.CreatedStagingPath
	}

	cl, err := newS3Client(creds)
	if err != nil {
		return nil, err
	}
	if err := checkAccess(ctx, cl, vol.Bucket, vol.Prefix); err != nil {
		return nil, err
	}
	if _, err := os.Stat(staging); errors.Is(err, fs.ErrNotExist) {
		if err := os.MkdirAll(staging, 0o750); err != nil {
			return nil, status.Errorf(codes.Internal, "creating staging path: %v", err)
		}
		created = true
	}
	// A failed restage keeps the earlier record and its cache, which may
	// hold files not uploaded yet; the next call tries again.
	abandon := func() {
		if !restage {
			s.abandonStage(vol.ID, staging, created)
		}
	}
	cmd, err := m.Command(vol, creds, staging, s.state.volumeDir(vol.ID))
	if err != nil {
		abandon()
		if status.Code(err) != codes.Unknown {
			return nil, err
		}
		return nil, status.Errorf(codes.Internal, "preparing %s: %v", m.Name(), err)
	}
	// The whole command line: the defaults, the volume's options and what
	// its attributes set, as the daemon gets them. Credentials live in
	// files under the state dir, never in the command line.
	log.Info("Mounting volume", "mounter", m.Name(), "command", cmd.Path, "args", cmd.Args)
	rec = &stageRecord{VolumeID: vol.ID, StagingPath: staging, CreatedStagingPath: created, Volume: vol, Command: cmd, Targets: targets}
	if rec.Daemon, err = s.startAndWait(ctx, rec, creds); err != nil {
		abandon()
		return nil, err
	}
	if err := s.state.put(rec); err != nil {
		s.stopMount(ctx, rec)
		abandon()
		return nil, status.Error(codes.Internal, err.Error())
	}
	log.V(2).Info("Staged volume", "mounter", vol.Mounter, "daemon", rec.Daemon)
	return &csipb.NodeStageVolumeResponse{}, nil
}

// NodeUnstageVolume waits until the FUSE daemon has uploaded what the pods
// wrote (bringing a dead daemon back to do so), unmounts the staging path,
// waits for the daemon to exit, and removes the state and what staging
// created. Until the uploads are done it is Unavailable, and the CO
// retries; a cache whose state cannot be read is never deleted.
func (s *nodeServer) NodeUnstageVolume(ctx context.Context, req *csipb.NodeUnstageVolumeRequest) (*csipb.NodeUnstageVolumeResponse, error) {
	if req.GetVolumeId() == "" {
		return nil, status.Error(codes.InvalidArgument, "volume ID is missing")
	}
	if req.GetStagingTargetPath() == "" {
		return nil, status.Error(codes.InvalidArgument, "staging target path is missing")
	}
	staging, err := absPath(req.GetStagingTargetPath(), "staging target path")
	if err != nil {
		return nil, err
	}
	unlock := s.locks.lock(req.GetVolumeId())
	defer unlock()
	rec, err := s.state.get(req.GetVolumeId())
	if err != nil {
		return nil, status.Error(codes.Internal, err.Error())
	}
	if rec == nil {
		// Nothing of ours; still make sure no mount is left at the path.
		if err := s.unmount(staging); err != nil {
			return nil, err
		}
		return &csipb.NodeUnstageVolumeResponse{}, nil
	}
	if err := s.drainUploads(ctx, rec); err != nil {
		return nil, err
	}
	if err := s.unmount(staging); err != nil {
		return nil, err
	}
	// The daemon exits once its mount is gone; wait for it, then insist.
	gone, err := waitGone(ctx, rec.Daemon, s.cfg.UnstageTimeout, s.launcher.Alive)
	if err != nil {
		return nil, status.Errorf(codes.Unavailable, "the FUSE daemon of volume %s is still exiting: %v", rec.VolumeID, err)
	}
	if !gone {
		if err := s.launcher.Stop(rec.Daemon, stopGrace); err != nil {
			return nil, status.Errorf(codes.Internal, "stopping the FUSE daemon: %v", err)
		}
	}
	// Only an empty upload queue may be deleted. Should the daemon have
	// left files behind, the record stays and the next call brings the
	// daemon back to upload them.
	if n, err := s.pendingUploads(rec); err != nil || n > 0 {
		if err != nil {
			return nil, err
		}
		return nil, status.Errorf(codes.Unavailable, "%d files of volume %s are not uploaded yet", n, rec.VolumeID)
	}
	if rec.CreatedStagingPath {
		if err := os.Remove(staging); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return nil, status.Errorf(codes.Internal, "removing staging path: %v", err)
		}
	}
	if err := s.state.remove(rec.VolumeID); err != nil {
		return nil, status.Error(codes.Internal, err.Error())
	}
	klog.FromContext(ctx).V(2).Info("Unstaged volume", "volume", rec.VolumeID)
	return &csipb.NodeUnstageVolumeResponse{}, nil
}

// NodePublishVolume bind-mounts the staged volume at the target path,
// read-only when the request, the access mode or the volume says so. A dead
// staging mount is remounted first, and a dead target mount replaced.
func (s *nodeServer) NodePublishVolume(ctx context.Context, req *csipb.NodePublishVolumeRequest) (*csipb.NodePublishVolumeResponse, error) {
	if req.GetVolumeId() == "" {
		return nil, status.Error(codes.InvalidArgument, "volume ID is missing")
	}
	if req.GetTargetPath() == "" {
		return nil, status.Error(codes.InvalidArgument, "target path is missing")
	}
	if req.GetVolumeCapability() == nil {
		return nil, status.Error(codes.InvalidArgument, "volume capability is missing")
	}
	if req.GetStagingTargetPath() == "" {
		return nil, status.Error(codes.InvalidArgument, "staging target path is missing: the volume must be staged first")
	}
	if why := checkCapabilities([]*csipb.VolumeCapability{req.GetVolumeCapability()}); why != "" {
		return nil, status.Error(codes.InvalidArgument, why)
	}
	target, err := absPath(req.GetTargetPath(), "target path")
	if err != nil {
		return nil, err
	}
	staging, err := absPath(req.GetStagingTargetPath(), "staging target path")
	if err != nil {
		return nil, err
	}
	unlock := s.locks.lock(req.GetVolumeId())
	defer unlock()
	log := klog.FromContext(ctx).WithValues("volume", req.GetVolumeId(), "targetPath", target)

	rec, err := s.state.get(req.GetVolumeId())
	if err != nil {
		return nil, status.Error(codes.Internal, err.Error())
	}
	if rec == nil {
		return nil, status.Errorf(codes.FailedPrecondition, "volume %s is not staged on this node", req.GetVolumeId())
	}
	if rec.StagingPath != staging {
		return nil, status.Errorf(codes.FailedPrecondition, "volume %s is staged at %s, not %s", rec.VolumeID, rec.StagingPath, staging)
	}
	if err := s.ensureStaged(ctx, rec); err != nil {
		return nil, err
	}
	mode := req.GetVolumeCapability().GetAccessMode().GetMode()
	readOnly := req.GetReadonly() || rec.Volume.ReadOnly ||
		mode == csipb.VolumeCapability_AccessMode_SINGLE_NODE_READER_ONLY ||
		mode == csipb.VolumeCapability_AccessMode_MULTI_NODE_READER_ONLY

	mounted, corrupted, err := s.mountState(target)
	if err != nil {
		return nil, status.Errorf(codes.Internal, "checking target path: %v", err)
	}
	if mounted && !corrupted {
		ro, ours := rec.Targets[target]
		if ours && ro == readOnly {
			return &csipb.NodePublishVolumeResponse{}, nil
		}
		// A bind mount made just before the plugin stopped, and never
		// recorded, is adopted; any other mount there is a conflict.
		bound, err := s.isBindOf(target, staging, readOnly)
		if err != nil {
			return nil, status.Errorf(codes.Internal, "checking target path: %v", err)
		}
		if ours || !bound {
			return nil, status.Errorf(codes.AlreadyExists, "target path %s is already mounted differently", target)
		}
		log.Info("Adopting an unrecorded bind mount of the staging path", "readOnly", readOnly)
	} else {
		if corrupted {
			log.Info("Replacing a dead bind mount")
			if err := s.lazyUnmount(target); err != nil {
				return nil, status.Errorf(codes.Internal, "unmounting dead target: %v", err)
			}
		}
		if err := s.bind(staging, target, readOnly); err != nil {
			return nil, err
		}
	}
	if rec.Targets == nil {
		rec.Targets = map[string]bool{}
	}
	rec.Targets[target] = readOnly
	if err := s.state.put(rec); err != nil {
		return nil, status.Error(codes.Internal, err.Error())
	}
	log.V(2).Info("Published volume", "readOnly", readOnly)
	return &csipb.NodePublishVolumeResponse{}, nil
}

// NodeUnpublishVolume unmounts the target path and removes it.
func (s *nodeServer) NodeUnpublishVolume(ctx context.Context, req *csipb.NodeUnpublishVolumeRequest) (*csipb.NodeUnpublishVolumeResponse, error) {
	if req.GetVolumeId() == "" {
		return nil, status.Error(codes.InvalidArgument, "volume ID is missing")
	}
	if req.GetTargetPath() == "" {
		return nil, status.Error(codes.InvalidArgument, "target path is missing")
	}
	target, err := absPath(req.GetTargetPath(), "target path")
	if err != nil {
		return nil, err
	}
	unlock := s.locks.lock(req.GetVolumeId())
	defer unlock()
	if err := s.unmount(target); err != nil {
		return nil, err
	}
	if err := os.Remove(target); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, status.Errorf(codes.Internal, "removing target path: %v", err)
	}
	rec, err := s.state.get(req.GetVolumeId())
	if err != nil {
		return nil, status.Error(codes.Internal, err.Error())
	}
	if rec != nil {
		if _, ok := rec.Targets[target]; ok {
			delete(rec.Targets, target)
			if err := s.state.put(rec); err != nil {
				return nil, status.Error(codes.Internal, err.Error())
			}
		}
	}
	klog.FromContext(ctx).V(2).Info("Unpublished volume", "volume", req.GetVolumeId(), "targetPath", target)
	return &csipb.NodeUnpublishVolumeResponse{}, nil
}

// NodeGetVolumeStats reports usage from statfs. A dead mount, or one whose
// FUSE daemon has exited, is FailedPrecondition with the reason; CSI v1.13
// carries the abnormal condition itself in NodeGetVolumeHealth.
func (s *nodeServer) NodeGetVolumeStats(_ context.Context, req *csipb.NodeGetVolumeStatsRequest) (*csipb.NodeGetVolumeStatsResponse, error) {
	if req.GetVolumeId() == "" {
		return nil, status.Error(codes.InvalidArgument, "volume ID is missing")
	}
	if req.GetVolumePath() == "" {
		return nil, status.Error(codes.InvalidArgument, "volume path is missing")
	}
	rec, err := s.state.get(req.GetVolumeId())
	if err != nil {
		return nil, status.Error(codes.Internal, err.Error())
	}
	if rec == nil {
		return nil, status.Errorf(codes.NotFound, "volume %s is not staged on this node", req.GetVolumeId())
	}
	st, problem, err := s.probe(rec, req.GetVolumePath())
	if err != nil {
		return nil, err
	}
	if problem != nil {
		return nil, status.Errorf(codes.FailedPrecondition, "volume %s is abnormal: %s", rec.VolumeID, problem.GetMessage())
	}
	bsize := st.Bsize
	return &csipb.NodeGetVolumeStatsResponse{Usage: []*csipb.VolumeUsage{
		{Unit: csipb.VolumeUsage_BYTES, Total: int64(st.Blocks) * bsize, Available: int64(st.Bavail) * bsize, Used: int64(st.Blocks-st.Bfree) * bsize},
		{Unit: csipb.VolumeUsage_INODES, Total: int64(st.Files), Available: int64(st.Ffree), Used: int64(st.Files - st.Ffree)},
	}}, nil
}

// NodeGetVolumeHealth reports an INACCESSIBLE entry when the volume's mount
// (the publish path, else the staging path) is dead or its daemon exited.
func (s *nodeServer) NodeGetVolumeHealth(_ context.Context, req *csipb.NodeGetVolumeHealthRequest) (*csipb.NodeGetVolumeHealthResponse, error) {
	if req.GetVolumeId() == "" {
		return nil, status.Error(codes.InvalidArgument, "volume ID is missing")
	}
	rec, err := s.state.get(req.GetVolumeId())
	if err != nil {
		return nil, status.Error(codes.Internal, err.Error())
	}
	if rec == nil {
		return nil, status.Errorf(codes.NotFound, "volume %s is not staged on this node", req.GetVolumeId())
	}
	p := req.GetVolumePublishPath()
	if p == "" {
		p = rec.StagingPath
	}
	health := &csipb.VolumeHealth{VolumeId: rec.VolumeID}
	_, problem, err := s.probe(rec, p)
	if err != nil {
		return nil, err
	}
	if problem != nil {
		health.HealthStatuses = append(health.HealthStatuses, problem)
	}
	return &csipb.NodeGetVolumeHealthResponse{VolumeHealth: health}, nil
}

// probe statfs's path of rec's volume. A dead mount or daemon is a health
// entry; a missing path NotFound.
func (s *nodeServer) probe(rec *stageRecord, path string) (*unix.Statfs_t, *csipb.VolumeHealth_VolumeHealthEntry, error) {
	var st unix.Statfs_t
	if err := unix.Statfs(path, &st); err != nil {
		if errors.Is(err, unix.ENOENT) {
			return nil, nil, status.Errorf(codes.NotFound, "volume path %s does not exist", path)
		}
		if isCorrupted(&os.PathError{Op: "statfs", Path: path, Err: err}) {
			return nil, &csipb.VolumeHealth_VolumeHealthEntry{
				Status: csipb.VolumeHealthErrorType_INACCESSIBLE, Reason: "MountDead",
				Message: "the FUSE mount is dead: " + err.Error(),
			}, nil
		}
		return nil, nil, status.Errorf(codes.Internal, "statfs %s: %v", path, err)
	}
	if !s.launcher.Alive(rec.Daemon) {
		return nil, &csipb.VolumeHealth_VolumeHealthEntry{
			Status: csipb.VolumeHealthErrorType_INACCESSIBLE, Reason: "DaemonNotRunning",
			Message: "the FUSE daemon of the volume is not running",
		}, nil
	}
	return &st, nil, nil
}

// absPath checks that a request path is absolute and cleans it.
func absPath(p, what string) (string, error) {
	if !filepath.IsAbs(p) || strings.ContainsRune(p, 0) {
		return "", status.Errorf(codes.InvalidArgument, "%s %q must be absolute", what, p)
	}
	return filepath.Clean(p), nil
}
