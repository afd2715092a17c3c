package ociimage

import (
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
)

// AddTree adds the directory tree at hostDir at imageDir: each directory
// with its mode, each regular file (read when the image is written, with
// its mode) and each symlink as it is, its target unchanged. A hard link
// becomes a copy; any other file type is refused.
func (img *Image) AddTree(hostDir, imageDir string) error {
	return filepath.WalkDir(hostDir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(hostDir, p)
		if err != nil {
			return err
		}
		ip := path.Join(imageDir, filepath.ToSlash(rel))
		switch t := d.Type(); {
		case t&fs.ModeSymlink != 0:
			target, err := os.Readlink(p)
			if err != nil {
				return err
			}
			img.AddSymlink(ip, target)
		case t.IsDir():
			fi, err := d.Info()
			if err != nil {
				return err
			}
			img.AddDir(ip, fi.Mode()&(fs.ModePerm|fs.ModeSetuid|fs.ModeSetgid|fs.ModeSticky))
		case t.IsRegular():
			img.AddFile(p, ip)
		default:
			return fmt.Errorf("adding %s: %s is a %v, not a regular file, directory or symlink", hostDir, p, t)
		}
		return nil
	})
}
