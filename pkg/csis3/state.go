package csis3

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
)

// stageRecord is what the node remembers about a staged volume, so that a
// restarted plugin can re-adopt, heal and clean up its mounts. It holds no
// credentials; those are in files beside it that only the daemon reads.
type stageRecord struct {
	// VolumeID is the CSI volume ID.
	VolumeID string `json:"volumeID"`
	// StagingPath is where the FUSE daemon mounts the volume.
	StagingPath string `json:"stagingPath"`
	// CreatedStagingPath says the driver made the staging directory.
	CreatedStagingPath bool `json:"createdStagingPath,omitempty"`
	// Volume is the volume as staged.
	Volume Volume `json:"volume"`
	// Command is the daemon's command line, kept to remount when healing.
	Command Command `json:"command"`
	// Daemon is the running daemon.
	Daemon Daemon `json:"daemon"`
	// Targets are the publish targets, each true when read-only.
	Targets map[string]bool `json:"targets,omitempty"`
}

// stateStore keeps one directory per staged volume under its root:
// record.json, the mounter's credential files, the VFS cache and the
// daemon's log. Callers serialise access per volume.
type stateStore struct {
	root string
}

// volumeDir is the directory of a volume ID.
func (s stateStore) volumeDir(volumeID string) string {
	sum := sha256.Sum256([]byte(volumeID))
	return filepath.Join(s.root, "volumes", hex.EncodeToString(sum[:])[:24])
}

// unitSuffix names the volume's daemon (systemd unit) uniquely per node.
func (s stateStore) unitSuffix(volumeID string) string { return filepath.Base(s.volumeDir(volumeID)) }

// get returns the record of volumeID, or nil if there is none.
func (s stateStore) get(volumeID string) (*stageRecord, error) {
	b, err := os.ReadFile(filepath.Join(s.volumeDir(volumeID), "record.json"))
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("reading state of volume %s: %w", volumeID, err)
	}
	var r stageRecord
	if err := json.Unmarshal(b, &r); err != nil {
		return nil, fmt.Errorf("decoding state of volume %s: %w", volumeID, err)
	}
	return &r, nil
}

// put writes r atomically.
func (s stateStore) put(r *stageRecord) error {
	dir := s.volumeDir(r.VolumeID)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("creating state dir: %w", err)
	}
	b, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return fmt.Errorf("encoding state of volume %s: %w", r.VolumeID, err)
	}
	tmp := filepath.Join(dir, "record.json.tmp")
	if err := os.WriteFile(tmp, b, 0o600); err != nil {
		return fmt.Errorf("writing state of volume %s: %w", r.VolumeID, err)
	}
	if err := os.Rename(tmp, filepath.Join(dir, "record.json")); err != nil {
		return fmt.Errorf("writing state of volume %s: %w", r.VolumeID, err)
	}
	return nil
}

// remove deletes the volume's directory: record, credentials, cache, log.
func (s stateStore) remove(volumeID string) error {
	if err := os.RemoveAll(s.volumeDir(volumeID)); err != nil {
		return fmt.Errorf("removing state of volume %s: %w", volumeID, err)
	}
	return nil
}

// list returns every record.
func (s stateStore) list() ([]*stageRecord, error) {
	entries, err := os.ReadDir(filepath.Join(s.root, "volumes"))
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("listing state: %w", err)
	}
	var out []*stageRecord
	for _, e := range entries {
		b, err := os.ReadFile(filepath.Join(s.root, "volumes", e.Name(), "record.json"))
		if err != nil {
			continue
		}
		var r stageRecord
		if json.Unmarshal(b, &r) == nil {
			out = append(out, &r)
		}
	}
	return out, nil
}
