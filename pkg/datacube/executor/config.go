package executor

import (
	"fmt"
	"net/url"
	"strings"
	"time"

	"github.com/accelstack/accelstack/pkg/datacube/executorenv"
)

// The DataCube option names, exactly as in the seed API.
const (
	OptS3Endpoint        = "s3-endpoint"
	OptS3AccessKeyID     = "s3-access-key-id"
	OptS3SecretAccessKey = "s3-secret-access-key"
	OptS3URI             = "s3-uri"
	OptS3NoCheckBucket   = "s3-no-check-bucket"
	OptURL               = "url"
	OptToken             = "token"
	OptRef               = "ref"
	OptRepo              = "repo"
	OptFiles             = "files"
	OptPathInRepo        = "path-in-repo"
	OptCommitMessage     = "commit-message"
)

// optionNames lists every option the executor reads.
var optionNames = []string{
	OptS3Endpoint, OptS3AccessKeyID, OptS3SecretAccessKey, OptS3URI, OptS3NoCheckBucket,
	OptURL, OptToken, OptRef, OptRepo, OptFiles, OptPathInRepo, OptCommitMessage,
}

// Side is one end of a transfer: its type, its PVC directory when the type
// is pvc, and its options by name.
type Side struct {
	Type    string
	PVCPath string
	Options map[string]string
}

// Option returns the option's value, or def when it is unset or empty.
func (s Side) Option(name, def string) string {
	if v := s.Options[name]; v != "" {
		return v
	}
	return def
}

// Config is everything one executor run needs.
type Config struct {
	Source, Sink Side
	// Sync deletes files on the destination that the source does not have.
	Sync bool
	// SyncAllowEmpty lets Sync run from a source that holds no file, which
	// deletes everything on the destination. Without it such a sync fails,
	// since an empty source is more often a typo in a key or path.
	SyncAllowEmpty bool
	// PVCRoot is the directory every PVC path must lie in
	// (executorenv.PVCMountPath in a pod).
	PVCRoot string
	// Concurrency is the number of files, or parts of one large file,
	// transferred at once.
	Concurrency int
	// PartSize is the multipart part size; files larger than it are
	// transferred one at a time in Concurrency parallel parts.
	PartSize int64
	// ConnectTimeout bounds the reachability check of a remote endpoint.
	ConnectTimeout time.Duration
	// SecretValues are values to redact besides the secret options: those
	// of the variables executorenv.EnvSecretOptions names.
	SecretValues []string
	// NoFsync skips fsync of downloaded files before their rename (for
	// benchmarks; a crash may then leave an empty file under its name).
	NoFsync bool
}

// SideFromEnv reads one side of the transfer through getenv; prefix is
// executorenv.SourceOptionPrefix or executorenv.SinkOptionPrefix.
func SideFromEnv(getenv func(string) string, typeVar, pvcVar, prefix string) Side {
	s := Side{
		Type:    strings.TrimSpace(getenv(typeVar)),
		PVCPath: getenv(pvcVar),
		Options: map[string]string{},
	}
	for _, name := range optionNames {
		if v := getenv(executorenv.OptionEnv(prefix, name)); v != "" {
			s.Options[name] = v
		}
	}
	return s
}

// FromEnv fills the source, the sink and Sync of cfg from the environment
// contract of package executorenv.
func (cfg *Config) FromEnv(getenv func(string) string) error {
	cfg.Source = SideFromEnv(getenv, executorenv.EnvSourceType, executorenv.EnvSourcePVCPath, executorenv.SourceOptionPrefix)
	cfg.Sink = SideFromEnv(getenv, executorenv.EnvSinkType, executorenv.EnvSinkPVCPath, executorenv.SinkOptionPrefix)
	cfg.SecretValues = nil
	for _, name := range strings.Split(getenv(executorenv.EnvSecretOptions), ",") {
		if name = strings.TrimSpace(name); name != "" {
			if v := getenv(name); v != "" {
				cfg.SecretValues = append(cfg.SecretValues, v)
			}
		}
	}
	switch v := strings.ToLower(strings.TrimSpace(getenv(executorenv.EnvSync))); v {
	case "", "false", "0":
		cfg.Sync = false
	case "true", "1":
		cfg.Sync = true
	default:
		return fmt.Errorf("invalid value %q for $%s: must be true or false", v, executorenv.EnvSync)
	}
	return nil
}

// secretOptions are the options whose values are always redacted.
var secretOptions = []string{OptS3AccessKeyID, OptS3SecretAccessKey, OptToken}

// secrets returns the values to redact: those of the secret options of
// both sides, and those of every variable the controller lists in
// executorenv.EnvSecretOptions (any option, or spec.executor.env entry, that
// came from a Secret), with the forms in which messages show a url.
func (cfg *Config) secrets() []string {
	var out []string
	for _, s := range []Side{cfg.Source, cfg.Sink} {
		for _, name := range secretOptions {
			if v := s.Options[name]; v != "" {
				out = append(out, v)
			}
		}
	}
	for _, v := range cfg.SecretValues {
		out = append(out, v)
		out = append(out, urlForms(v)...)
	}
	return out
}

// urlForms returns the forms in which messages show a secret that is a
// url: without user info (or $(TOKEN)), as host and path, and as the path
// of a file url. It returns nothing for a value that is not a url.
func urlForms(v string) []string {
	u, err := url.Parse(strings.ReplaceAll(v, tokenPlaceholder, "x"))
	if err != nil || u.Scheme == "" {
		return nil
	}
	u.User = nil
	out := []string{u.String()}
	if u.Host != "" {
		out = append(out, u.Host+u.Path)
	}
	if u.Scheme == "file" && u.Path != "" {
		out = append(out, u.Path)
	}
	return out
}
