// Package ociimage builds container images from files on this machine,
// without a registry, a container engine or root.
//
// An [Image] lists the files of a single-layer root file system: regular
// files copied from the host, inline data, directories, symlinks, and host
// executables together with their shared-library closure
// ([Image.AddExecutable]). [Write] turns it into an OCI image-layout archive
// (a tar of oci-layout, index.json and blobs/sha256) whose index entry
// carries the full reference in io.containerd.image.name and the tag in
// org.opencontainers.image.ref.name, so that each of
//
//	ctr -n k8s.io images import <tar>
//	podman load -i <tar>
//	skopeo copy oci-archive:<tar> docker://<registry>/<name>:<tag>
//
// loads it under its reference. The layer is deterministic (sorted entries,
// owner 0:0, mtime 0), so the same content always gives the same manifest
// digest, and Write skips rewriting an archive whose recorded digest already
// matches. [WriteLayer] writes the layer alone, and [Read] reads an archive
// back, checking every digest.
//
// It is separate from the images it builds (package images) so that the
// format lives in one place, whoever assembles the files.
package ociimage
