// Package executor is the DataCube transfer executor: the body of
// cmd/datacube-executor, which the DataCube controller runs in a batch/v1
// Job. It reads the environment contract of package executorenv, moves data
// between the PVC directory and S3, Git or Hugging Face, and reports a
// executorenv.Progress.
//
// Every transfer can be retried by the Job: files already up to date on the
// destination are skipped, and a file being written lives under a temporary
// name in its final directory until it is complete and synced, so a killed
// attempt never leaves a half-written file under its final name. Secrets
// (S3 keys, tokens) never reach logs or the reported error.
package executor
