// Package images defines accelstack's container images: for each binary of
// cmd/, the programs, files and links its image holds besides the binary,
// the user it runs as, and the name deploy/ pulls it by.
//
// One definition serves every way the images are built: `make images`
// (hack/images) and the local cluster (test/cluster) assemble them from this
// machine with package ociimage, and each cmd/<binary>/Dockerfile lays out
// the same files with hack/images --layer after installing the same Debian
// packages and Go tools; a test keeps the Dockerfiles and the definitions
// in step.
package images
