// Package datacube moves data between a PVC and S3, Git or Hugging Face for
// the DataCube API: the controller runs each transfer as a batch/v1 Job whose
// pod runs the executor (cmd/datacube-executor). What the controller gives
// the executor, and what the executor reports back, is package executorenv.
package datacube
