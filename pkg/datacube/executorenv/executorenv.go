// Package executorenv is the contract between the DataCube controller and
// the transfer executor it runs in a batch/v1 Job (cmd/datacube-executor):
// the executor's default image, the environment the controller gives the
// executor's container, and the Progress the executor writes back as its
// termination message. It is a
// package of its own, importing no Kubernetes code, so that the executor
// binary links none of the controller's.
package executorenv

import "strings"

// DefaultImage is the image of the transfer executor, the controllers'
// default for --datacube-executor-image; serving's storage initializer runs
// it too.
const DefaultImage = "ghcr.io/accelstack/datacube-executor:latest"

// The environment of the executor container.
const (
	// EnvSourceType and EnvSinkType are the DataCube's source and sink
	// types: pvc, s3, git or huggingface.
	EnvSourceType = "DATACUBE_SOURCE_TYPE"
	EnvSinkType   = "DATACUBE_SINK_TYPE"

	// EnvSourcePVCPath and EnvSinkPVCPath are the directory inside the
	// container that stands for the PVC side (the PVC mounted at
	// PVCMountPath, plus its subPath). The executor refuses a path outside
	// PVCMountPath.
	EnvSourcePVCPath = "DATACUBE_SOURCE_PVC_PATH"
	EnvSinkPVCPath   = "DATACUBE_SINK_PVC_PATH"

	// EnvSync ("true") makes an S3 to PVC transfer delete files under the
	// destination that the source does not have.
	EnvSync = "DATACUBE_SYNC"

	// SourceOptionPrefix and SinkOptionPrefix prefix each option of
	// spec.source.options and spec.sink.options; see OptionEnv.
	SourceOptionPrefix = "DATACUBE_SOURCE_OPT_"
	SinkOptionPrefix   = "DATACUBE_SINK_OPT_"

	// EnvSecretOptions lists, comma-separated and sorted, the variables
	// (options, see OptionEnv, and spec.executor.env) whose values come from
	// a Secret (valueFrom.secretKeyRef), whatever the option. The executor treats their values as secrets: it
	// never prints them, in logs or in the termination message.
	EnvSecretOptions = "DATACUBE_SECRET_OPTIONS"

	// PVCMountPath is where the controller mounts the DataCube's PVC.
	PVCMountPath = "/datacube/pvc"

	// TerminationMessagePath is where the executor writes its Progress
	// (JSON) when it ends; the controller copies it into the status.
	TerminationMessagePath = "/dev/termination-log"
)

// The data types of a DataCube side.
const (
	TypePVC         = "pvc"
	TypeS3          = "s3"
	TypeGit         = "git"
	TypeHuggingFace = "huggingface"
)

// OptionEnv returns the environment variable of a DataCube option: the
// prefix, then the option name upper-cased with '-' and '.' as '_', e.g.
// OptionEnv(SourceOptionPrefix, "s3-access-key-id") is
// DATACUBE_SOURCE_OPT_S3_ACCESS_KEY_ID. Options keep their valueFrom, so
// secrets reach the executor as secret references, never as literals.
func OptionEnv(prefix, option string) string {
	return prefix + strings.NewReplacer("-", "_", ".", "_").Replace(strings.ToUpper(option))
}

// Progress is what the executor reports when it ends.
type Progress struct {
	// Bytes and Files count what was transferred (skipped files excluded).
	Bytes int64 `json:"bytes"`
	Files int64 `json:"files"`
	// Skipped counts files left alone because they were already up to date.
	Skipped int64 `json:"skipped,omitempty"`
	// Deleted counts files removed by sync.
	Deleted int64 `json:"deleted,omitempty"`
	// DurationSeconds is the transfer's wall time.
	DurationSeconds float64 `json:"durationSeconds"`
	// Error is the reason of a failed attempt, without secrets.
	Error string `json:"error,omitempty"`
}
