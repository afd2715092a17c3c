package csis3

import (
	"context"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"k8s.io/klog/v2"

	"github.com/accelstack/accelstack/pkg/csis3/s3volume"
)

// Polls of a daemon or a mount start every firstPollInterval and back off
// by a quarter each time to pollInterval: a mount that is ready within a
// few hundred milliseconds is seen within a fifth of its time, and a long
// wait does not fork systemctl (Alive) more than four times a second.
const (
	firstPollInterval = 10 * time.Millisecond
	pollInterval      = 250 * time.Millisecond
)

// poll calls cond until it returns true or an error, or timeout passes, or
// ctx ends; then it returns cond's error, or the context's.
func poll(ctx context.Context, timeout time.Duration, cond func(context.Context) (bool, error)) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	interval := firstPollInterval
	for {
		if done, err := cond(ctx); err != nil || done {
			return err
		}
		t := time.NewTimer(interval)
		select {
		case <-ctx.Done():
			t.Stop()
			return ctx.Err()
		case <-t.C:
		}
		interval = min(interval+interval/4, pollInterval)
	}
}

// pendingUploads counts the files of rec's volume that its mounter holds
// written but not uploaded. A mounter without an upload queue has none. A
// record whose mounter no longer passes the checks is asked as rclone,
// the one mounter with a queue, so an upload queue is never overlooked.
// An unreadable queue is an error, never zero.
func (s *nodeServer) pendingUploads(rec *stageRecord) (int, error) {
	var up uploader = rcloneMounter{bin: s.cfg.RcloneBinary}
	if m, err := mounterFor(s.cfg, rec.Volume); err == nil {
		u, ok := m.(uploader)
		if !ok {
			return 0, nil
		}
		up = u
	}
	n, err := up.Pending(s.state.volumeDir(rec.VolumeID))
	if err != nil {
		return 0, status.Errorf(codes.Internal, "reading the upload cache of volume %s, which is kept: %v", rec.VolumeID, err)
	}
	return n, nil
}

// drainUploads waits, up to UnstageTimeout or the end of ctx, until rec's
// daemon has uploaded every file written through the mount. A daemon that
// died with files pending is started again with its recorded command, as
// healing does, and uploads them. It is Unavailable while files are
// pending, so the CO retries rather than losing them.
func (s *nodeServer) drainUploads(ctx context.Context, rec *stageRecord) error {
	pending := 0
	// The restart has its own bound, MountTimeout, within ctx.
	err := poll(ctx, s.cfg.UnstageTimeout, func(context.Context) (bool, error) {
		n, err := s.pendingUploads(rec)
		if err != nil {
			return false, err
		}
		if pending = n; n == 0 {
			s.reportPending(rec.VolumeID, -1)
			return true, nil
		}
		s.reportPending(rec.VolumeID, n)
		if !s.launcher.Alive(rec.Daemon) {
			klog.FromContext(ctx).Info("Restarting the FUSE daemon to upload pending files", "volume", rec.VolumeID, "pending", n)
			if err := s.restartDaemon(ctx, rec); err != nil {
				return false, status.Errorf(codes.Unavailable, "%d files of volume %s are not uploaded and its FUSE daemon could not be restarted: %v", n, rec.VolumeID, err)
			}
		}
		return false, nil
	})
	if err == nil {
		return nil
	}
	if _, ok := status.FromError(err); ok {
		return err // from the condition; a timeout or cancellation is not a status
	}
	return status.Errorf(codes.Unavailable, "%d files of volume %s are still uploading", pending, rec.VolumeID)
}

// reportPending sets the pending uploads of volume to n, or forgets the
// volume for n < 0.
func (s *nodeServer) reportPending(volume string, n int) {
	switch {
	case s.pending == nil:
	case n < 0:
		s.pending.DeleteLabelValues(volume)
	default:
		s.pending.WithLabelValues(volume).Set(float64(n))
	}
}

// restartDaemon starts rec's daemon again on a fresh staging mount and
// records it.
func (s *nodeServer) restartDaemon(ctx context.Context, rec *stageRecord) error {
	s.stopMount(ctx, rec)
	d, err := s.startAndWait(ctx, rec, s3volume.Credentials{})
	if err != nil {
		return err
	}
	rec.Daemon = d
	if err := s.state.put(rec); err != nil {
		return status.Error(codes.Internal, err.Error())
	}
	return nil
}

// waitGone polls alive until the daemon is gone (true), timeout passes
// (false), or ctx ends (its error).
func waitGone(ctx context.Context, d Daemon, timeout time.Duration, alive func(Daemon) bool) (bool, error) {
	err := poll(ctx, timeout, func(context.Context) (bool, error) {
		return !alive(d), nil
	})
	switch {
	case err == nil:
		return true, nil
	case ctx.Err() != nil:
		return false, ctx.Err()
	}
	return false, nil
}
