package executor

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/accelstack/accelstack/pkg/datacube/executorenv"
)

// TestRunRedactsSecretOptions fails a git clone whose url and ref come from
// a Secret (the controller lists them in $DATACUBE_SECRET_OPTIONS) and name
// a missing repository, and checks that neither the error nor the progress
// holds them, while the error still says what failed.
func TestRunRedactsSecretOptions(t *testing.T) {
	root := t.TempDir()
	secretURL := "file://" + filepath.Join(t.TempDir(), "private-SECRETNAME-repo.git")
	cfg := Config{PVCRoot: root}
	env := map[string]string{
		executorenv.EnvSourceType:                                     executorenv.TypeGit,
		executorenv.EnvSinkType:                                       executorenv.TypePVC,
		executorenv.EnvSinkPVCPath:                                    root,
		executorenv.OptionEnv(executorenv.SourceOptionPrefix, OptURL): secretURL,
		executorenv.OptionEnv(executorenv.SourceOptionPrefix, OptRef): "release-SECRETREF",
		executorenv.EnvSecretOptions:                                  executorenv.OptionEnv(executorenv.SourceOptionPrefix, OptRef) + "," + executorenv.OptionEnv(executorenv.SourceOptionPrefix, OptURL),
	}
	if err := cfg.FromEnv(func(k string) string { return env[k] }); err != nil {
		t.Fatal(err)
	}
	p, err := Run(context.Background(), cfg)
	if err == nil {
		t.Fatal("a clone of a missing repository succeeded")
	}
	for _, s := range []string{err.Error(), p.Error} {
		if strings.Contains(s, "SECRETNAME") || strings.Contains(s, "SECRETREF") {
			t.Errorf("an option value is in %q", s)
		}
		if !strings.Contains(s, redacted) || !strings.Contains(s, "git fetch") {
			t.Errorf("%q does not say what failed and where a value was redacted", s)
		}
	}
}

// TestLogFilter redacts messages and string, error and Stringer values.
func TestLogFilter(t *testing.T) {
	f := logFilter{NewRedactor("s3://bucket-SECRET/key")}
	msg, kv := f.FilterS("reading s3://bucket-SECRET/key", []any{"uri", "s3://bucket-SECRET/key/x", "err", errors.New("no s3://bucket-SECRET/key"), "n", 3})
	got := msg
	for _, v := range kv {
		if s, ok := v.(string); ok {
			got += " " + s
		}
		if e, ok := v.(error); ok {
			got += " " + e.Error()
		}
	}
	if strings.Contains(got, "SECRET") || kv[5] != 3 {
		t.Errorf("FilterS left a secret: %q, %v", got, kv)
	}
	if _, args := f.FilterF("%s", []any{"s3://bucket-SECRET/key"}); args[0] != "<redacted>" {
		t.Errorf("FilterF = %v", args)
	}
}
