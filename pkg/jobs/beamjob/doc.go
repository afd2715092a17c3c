// Package beamjob runs the T9k BeamJob: a FlinkCluster of flink-operator
// (flinkoperator.k8s.io/v1beta1, handled as unstructured) from the job's
// template, then, once the cluster runs, a batch/v1 Job submitting the Beam
// pipeline; the BeamJob's status follows both. It is a controller of its
// own rather than a jobs.Kind, as a BeamJob has no replica pods of its own.
package beamjob
