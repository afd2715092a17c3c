package csis3

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"k8s.io/klog/v2"

	"github.com/accelstack/accelstack/pkg/csis3/s3volume"
)

// daemonLogName is the daemon's log in the volume's state dir; each start
// moves the previous one to daemonLogName.1.
const daemonLogName = "daemon.log"

// errDaemonExited ends the wait for a mount whose daemon has exited.
var errDaemonExited = errors.New("daemon exited")

// stagedHealthy says whether rec's staging mount is live.
func (s *nodeServer) stagedHealthy(rec *stageRecord) bool {
	mounted, corrupted, err := s.mountState(rec.StagingPath)
	return err == nil && mounted && !corrupted && s.launcher.Alive(rec.Daemon)
}

// ensureStaged remounts rec's staging mount if it is dead, with the
// credentials files staging wrote.
func (s *nodeServer) ensureStaged(ctx context.Context, rec *stageRecord) error {
	if s.stagedHealthy(rec) {
		return nil
	}
	klog.FromContext(ctx).Info("Healing a dead staging mount", "volume", rec.VolumeID, "stagingPath", rec.StagingPath)
	return s.restartDaemon(ctx, rec)
}

// stopMount detaches rec's staging mount and stops its daemon.
func (s *nodeServer) stopMount(ctx context.Context, rec *stageRecord) {
	if err := s.lazyUnmount(rec.StagingPath); err != nil {
		klog.FromContext(ctx).Error(err, "Detaching staging mount", "stagingPath", rec.StagingPath)
	}
	if err := s.launcher.Stop(rec.Daemon, stopGrace); err != nil {
		klog.FromContext(ctx).Error(err, "Stopping FUSE daemon", "daemon", rec.Daemon)
	}
}

// startAndWait starts rec's daemon and waits until its mount appears, the
// daemon exits, MountTimeout passes or ctx ends. The daemon log quoted in
// errors has creds and the credentials in the state dir masked.
func (s *nodeServer) startAndWait(ctx context.Context, rec *stageRecord, creds s3volume.Credentials) (Daemon, error) {
	dir := s.state.volumeDir(rec.VolumeID)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return Daemon{}, status.Errorf(codes.Internal, "creating state dir: %v", err)
	}
	logPath := filepath.Join(dir, daemonLogName)
	if err := os.Rename(logPath, logPath+".1"); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return Daemon{}, status.Errorf(codes.Internal, "rotating the daemon log: %v", err)
	}
	d, err := s.launcher.Start(s.state.unitSuffix(rec.VolumeID), rec.Command, rec.StagingPath, logPath)
	if err != nil {
		return Daemon{}, status.Errorf(codes.Internal, "starting %s: %v", rec.Volume.Mounter, err)
	}
	err = poll(ctx, s.cfg.MountTimeout, func(context.Context) (bool, error) {
		mounted, corrupted, err := s.mountState(rec.StagingPath)
		if err == nil && mounted && !corrupted {
			return true, nil
		}
		if !s.launcher.Alive(d) {
			return false, errDaemonExited
		}
		return false, nil
	})
	if err == nil {
		return d, nil
	}
	secrets := append(storedSecrets(dir), creds.SecretAccessKey, creds.AccessKeyID)
	if errors.Is(err, errDaemonExited) {
		_ = s.lazyUnmount(rec.StagingPath)
		return Daemon{}, status.Errorf(codes.Internal, "%s exited without mounting: %s", rec.Volume.Mounter, logTail(logPath, secrets))
	}
	_ = s.launcher.Stop(d, stopGrace)
	_ = s.lazyUnmount(rec.StagingPath)
	if ctx.Err() != nil {
		return Daemon{}, status.Errorf(codes.DeadlineExceeded, "waiting for %s to mount: %v: %s", rec.Volume.Mounter, ctx.Err(), logTail(logPath, secrets))
	}
	return Daemon{}, status.Errorf(codes.DeadlineExceeded, "%s did not mount within %s: %s", rec.Volume.Mounter, s.cfg.MountTimeout, logTail(logPath, secrets))
}

// abandonStage removes what a failed first NodeStageVolume made.
func (s *nodeServer) abandonStage(volumeID, staging string, created bool) {
	_ = s.state.remove(volumeID)
	if created {
		_ = os.Remove(staging)
	}
}

// adopt runs in the background once the plugin serves: under each
// volume's lock it logs which recorded mounts are live, remounts dead
// staging mounts and their dead bind mounts, and drops the records of
// volumes whose staging path is gone, so that a plugin restart leaves
// every volume in use usable.
func (s *nodeServer) adopt(ctx context.Context) {
	recs, err := s.state.list()
	if err != nil {
		klog.FromContext(ctx).Error(err, "Reading node state")
		return
	}
	for _, rec := range recs {
		if ctx.Err() != nil {
			return
		}
		s.adoptVolume(ctx, rec.VolumeID)
	}
}

// adoptVolume is adopt for one volume. It reads the record again under
// the lock, since a CSI call may have changed it meanwhile.
func (s *nodeServer) adoptVolume(ctx context.Context, volumeID string) {
	unlock := s.locks.lock(volumeID)
	defer unlock()
	log := klog.FromContext(ctx).WithValues("volume", volumeID)
	rec, err := s.state.get(volumeID)
	if err != nil || rec == nil {
		if err != nil {
			log.Error(err, "Reading node state")
		}
		return
	}
	log = log.WithValues("stagingPath", rec.StagingPath)
	if _, err := os.Stat(rec.StagingPath); errors.Is(err, fs.ErrNotExist) {
		s.dropStale(ctx, rec)
		return
	}
	if s.stagedHealthy(rec) {
		log.Info("Re-adopted live mount", "daemon", rec.Daemon, "targets", len(rec.Targets))
	} else if err := s.ensureStaged(ctx, rec); err != nil {
		log.Error(err, "Healing mount")
	}
	for target, ro := range rec.Targets {
		if _, corrupted, _ := s.mountState(target); corrupted {
			_ = s.lazyUnmount(target)
			opts := []string{"bind"}
			if ro {
				opts = append(opts, "ro")
			}
			if err := s.mounter.Mount(rec.StagingPath, target, "", opts); err != nil {
				log.Error(err, "Re-binding target", "targetPath", target)
			}
		}
	}
}

// dropStale removes the record of a volume whose staging path is gone,
// which the CO no longer uses, unless its daemon still runs or its upload
// queue holds files or cannot be read; those stay for an operator.
func (s *nodeServer) dropStale(ctx context.Context, rec *stageRecord) {
	log := klog.FromContext(ctx).WithValues("volume", rec.VolumeID, "stagingPath", rec.StagingPath)
	if s.launcher.Alive(rec.Daemon) {
		log.Info("Staging path is gone but the FUSE daemon still runs; keeping its record", "daemon", rec.Daemon)
		return
	}
	if n, err := s.pendingUploads(rec); err != nil || n > 0 {
		log.Error(err, "Staging path is gone but files are not uploaded; keeping the record and cache", "pending", n, "stateDir", s.state.volumeDir(rec.VolumeID))
		return
	}
	if err := s.state.remove(rec.VolumeID); err != nil {
		log.Error(err, "Dropping the record of a volume whose staging path is gone")
		return
	}
	log.Info("Dropped the record of a volume whose staging path is gone")
}
