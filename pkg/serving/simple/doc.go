// Package simple is the SimpleMLService controller: a Deployment of a fixed
// number of model servers (TF Serving, TorchServe or a pod of the user's)
// and a Service in front of them, both named after the SimpleMLService. The
// model is mounted from a PVC or downloaded from S3 by the storage
// initializer (package serving). The status holds the Service's address and
// the ModelDownloaded and Ready conditions.
package simple
