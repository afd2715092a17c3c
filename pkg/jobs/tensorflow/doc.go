// Package tensorflow is the TensorFlowTrainingJob kind of the jobs engine:
// chief, worker, ps and evaluator replicas given a TF_CONFIG as the Kubeflow
// training operator writes it (or its sparse form for dynamic workers), and
// the job's TensorBoard.
package tensorflow
