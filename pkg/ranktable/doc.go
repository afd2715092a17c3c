// Package ranktable runs the rank-table controller of the Ascend flow: for a
// job whose pods carry the ring-controller.atlas label, it fills the job's
// rings-config-<job> ConfigMap (key hccl.json) from the pods'
// ascend-910-configuration annotations (pkg/ascend/annotation), written by
// the device plugin in Volcano mode, once every pod of the job has been
// allocated. It runs in cmd/controllers, on the cluster side, and links no
// node-side code: the annotation's wire type is a leaf without cgo.
package ranktable
