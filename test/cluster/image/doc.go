// Package image builds container images for the local single-node test
// cluster without a registry or a container engine.
//
// An [Image] lists the files of a single-layer root file system: regular
// files copied from the host, inline data, directories, symlinks, and host
// executables together with their shared-library closure
// ([Image.AddExecutable]). [Write] turns it into an OCI image-layout tarball
// that containerd imports with
//
//	ctr -n k8s.io images import <tar>
//
// after which pods run it with imagePullPolicy: Never. The layer is
// deterministic (sorted entries, owner 0:0, mtime 0), so the same content
// always gives the same manifest digest, and Write skips rewriting a tarball
// whose recorded digest already matches.
//
// [BuildPause], [Pause] and [Busybox] make the two images every cluster
// needs: the pod sandbox and a shell for test pods.
package image
