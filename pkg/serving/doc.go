// Package serving holds what the SimpleMLService and MLService controllers
// share: the storage initializer that mounts or downloads a model, the
// reasons of the services' conditions and their ModelDownloaded condition,
// and the reading of their pods' state. The condition helpers and the
// writer of the services' objects are pkg/interactive's.
//
// The storage initializer is the DataCube executor (cmd/datacube-executor)
// run as an init container: it downloads an s3:// model into an emptyDir
// at the model's mount path, with the S3 endpoint and keys taken from the
// named Secret through secretKeyRef, so that they never appear in the pod
// spec, the command line or the status.
package serving
