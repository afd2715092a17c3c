// Package tensorboard is the TensorBoard controller: a Deployment of one
// pod serving TensorBoard over logs in PVCs (mounted read-only), S3 (read
// with the credentials of one Secret, never copied into the pod's spec) and
// HTTP (downloaded before TensorBoard starts), behind the activity sidecar;
// its Service; suspend and resume; the TensorBoard's status; and the
// admission webhook that refuses locations of logs that are not ones.
package tensorboard
