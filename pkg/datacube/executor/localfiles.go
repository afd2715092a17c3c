package executor

import (
	"context"
	"fmt"
	"io/fs"
	"path/filepath"
	"time"

	"k8s.io/klog/v2"
)

// localFile is a regular file below a PVC directory.
type localFile struct {
	// Rel is the slash-separated path below the directory.
	Rel     string
	Path    string
	Size    int64
	ModTime time.Time
}

// listLocal returns the regular files below dir. Symbolic links are not
// followed (they could lead outside the PVC) and temporary files of an
// earlier attempt are left out; skipDirs names directories not to enter.
func listLocal(ctx context.Context, dir string, skipDirs ...string) ([]localFile, error) {
	var out []localFile
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			for _, s := range skipDirs {
				if d.Name() == s && p != dir {
					return filepath.SkipDir
				}
			}
			return nil
		}
		if !d.Type().IsRegular() {
			klog.FromContext(ctx).V(2).Info("Skipping a file that is not regular", "path", p, "mode", d.Type().String())
			return nil
		}
		if isPartial(d.Name()) {
			return nil
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(dir, p)
		if err != nil {
			return err
		}
		out = append(out, localFile{Rel: filepath.ToSlash(rel), Path: p, Size: fi.Size(), ModTime: fi.ModTime()})
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("listing %s: %w", dir, err)
	}
	return out, nil
}
