package csis3

import (
	"encoding/json"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/accelstack/accelstack/pkg/csis3/s3volume"
)

// parseRcloneConf reads rclone.conf as rclone's config parser
// (the goconfig package) does: lines trimmed; '#' and ';' start
// comments; "[name]" starts a section; a key ends at the first '=' or ':';
// a value that starts with a backquote, or with three double quotes and is
// at least 6 long, is the text between the opening quote and the last
// closing one; a repeated key overwrites the earlier value.
func parseRcloneConf(text string) (map[string]map[string]string, error) {
	out := map[string]map[string]string{}
	section := ""
	for _, line := range strings.Split(text, "\n") {
		line = strings.TrimSpace(line)
		switch {
		case line == "":
			continue
		case line[0] == '#' || line[0] == ';':
			continue
		case line[0] == '[' && line[len(line)-1] == ']':
			section = strings.TrimSpace(line[1 : len(line)-1])
			if out[section] == nil {
				out[section] = map[string]string{}
			}
			continue
		case section == "":
			return nil, fmt.Errorf("key outside a section: %q", line)
		}
		if line[0] == '"' || line[0] == '`' {
			return nil, fmt.Errorf("quoted key: %q", line)
		}
		i := strings.IndexAny(line, "=:")
		if i <= 0 {
			return nil, fmt.Errorf("could not parse line: %q", line)
		}
		key := strings.TrimSpace(line[:i])
		right := strings.TrimSpace(line[i+1:])
		quote := ""
		switch {
		case len(right) >= 2 && right[0] == '`':
			quote = "`"
		case len(right) >= 6 && right[:3] == `"""`:
			quote = `"""`
		}
		value := right
		if quote != "" {
			pos := strings.LastIndex(right[len(quote):], quote)
			if pos == -1 {
				return nil, fmt.Errorf("unterminated quote: %q", line)
			}
			value = right[len(quote) : len(quote)+pos]
		}
		out[section][key] = value
	}
	return out, nil
}

// wantRcloneConf is the config rcloneConfig must render for c: these keys
// and values, and nothing else.
func wantRcloneConf(c s3volume.Credentials) map[string]map[string]string {
	return map[string]map[string]string{"s3": {
		"type": "s3", "provider": "Other", "env_auth": "false",
		"access_key_id": c.AccessKeyID, "secret_access_key": c.SecretAccessKey,
		"endpoint": c.Endpoint.String(), "region": c.Region,
		"force_path_style": fmt.Sprint(!c.VirtualHost), "no_check_bucket": "true",
	}}
}

// TestRcloneConfigCannotBeOverridden renders keys that look like INI syntax
// but that the credential checks accept (no control characters): each
// parses back as the one value it is, and adds or replaces no key.
func TestRcloneConfigCannotBeOverridden(t *testing.T) {
	for _, secret := range []string{
		"plain/Secret+Key=", "type = alias", "x = y : z", "[other]", "#not a comment", ";nor this",
		"`quoted`", "`", "``", "```", `"""abcdef"""`, `"""`, `"x"`, "a`b`", "ends with `",
	} {
		t.Run(secret, func(t *testing.T) {
			c, err := s3volume.CredentialsFromSecrets(map[string]string{"accessKeyID": "[s3]", "secretAccessKey": secret, "endpoint": "http://s3.local:7070", "region": "eu-1"})
			if err != nil {
				t.Fatalf("CredentialsFromSecrets: %v", err)
			}
			got, err := parseRcloneConf(rcloneConfig(c))
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(wantRcloneConf(c), got); diff != "" {
				t.Errorf("rclone.conf as rclone reads it (-want +got):\n%s", diff)
			}
		})
	}
}

// TestRcloneRemotePinned checks that the remote rclone mounts pins its type
// and env_auth in the connection string, which rclone reads before
// rclone.conf, so no line of the file can turn the remote into a local,
// alias or instance-credential remote.
func TestRcloneRemotePinned(t *testing.T) {
	creds := s3volume.Credentials{AccessKeyID: "AK", SecretAccessKey: "SK", Endpoint: &url.URL{Scheme: "http", Host: "s3:7070"}, Region: "r1"}
	cmd, err := rcloneMounter{bin: "rclone"}.Command(Volume{Bucket: "data", Prefix: "a/b", UID: -1, GID: -1, VFSCacheMode: "writes"}, creds, "/t", filepath.Join(t.TempDir(), "v"))
	if err != nil {
		t.Fatal(err)
	}
	remote := cmd.Args[1]
	name, path, ok := strings.Cut(remote, ":")
	if !ok || path != "data/a/b" {
		t.Fatalf("remote %q is not name:data/a/b", remote)
	}
	params := map[string]string{}
	for _, p := range strings.Split(name, ",")[1:] {
		k, v, _ := strings.Cut(p, "=")
		params[k] = v
	}
	if diff := cmp.Diff(map[string]string{"type": "s3", "env_auth": "false"}, params); diff != "" {
		t.Errorf("connection-string parameters of %q (-want +got):\n%s", remote, diff)
	}
}

// realRclone returns the rclone binary the integration tests use
// ($ACCELSTACK_RCLONE, else rclone on PATH). Without one the test fails in
// CI and is skipped, saying so, elsewhere.
func realRclone(t *testing.T) string {
	t.Helper()
	bin := os.Getenv("ACCELSTACK_RCLONE")
	if bin == "" {
		var err error
		if bin, err = exec.LookPath("rclone"); err != nil {
			if os.Getenv("CI") != "" {
				t.Fatalf("rclone not found: set ACCELSTACK_RCLONE (make tools builds it)")
			}
			t.Skipf("skipping: rclone not found; set ACCELSTACK_RCLONE (make tools builds it)")
		}
	}
	return bin
}

// TestRcloneConfigRealParser has rclone itself read back the rendered
// config (rclone config dump) for values that look like INI syntax.
func TestRcloneConfigRealParser(t *testing.T) {
	bin := realRclone(t)
	for _, secret := range []string{"plain/Secret+Key=", "type = alias", "[other]", "#x", "`quoted`", "`", "```", `"""abcdef"""`, `"x"`, "a`b`"} {
		t.Run(secret, func(t *testing.T) {
			c := s3volume.Credentials{AccessKeyID: "AK", SecretAccessKey: secret, Endpoint: &url.URL{Scheme: "http", Host: "s3.local:7070"}, Region: "eu-1"}
			conf := filepath.Join(t.TempDir(), "rclone.conf")
			if err := os.WriteFile(conf, []byte(rcloneConfig(c)), 0o600); err != nil {
				t.Fatal(err)
			}
			out, err := exec.Command(bin, "config", "dump", "--config", conf).Output()
			if err != nil {
				t.Fatalf("rclone config dump: %v", err)
			}
			var got map[string]map[string]string
			if err := json.Unmarshal(out, &got); err != nil {
				t.Fatalf("rclone config dump output: %v", err)
			}
			if diff := cmp.Diff(wantRcloneConf(c), got); diff != "" {
				t.Errorf("rclone.conf as rclone reads it (-want +got):\n%s", diff)
			}
		})
	}
}

// TestRclonePinnedRealRemote gives the real rclone a config whose [s3]
// section is an alias of a local directory, as an injected config would
// be: through a plain "s3:" remote rclone lists the local file (the
// attack), through the pinned remote the driver mounts it talks S3 and
// never sees the file.
func TestRclonePinnedRealRemote(t *testing.T) {
	bin := realRclone(t)
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "local", "data"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "local", "data", "node-secret.txt"), []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	conf := filepath.Join(dir, "rclone.conf")
	hostile := "[s3]\ntype = alias\nremote = " + filepath.Join(dir, "local") + "\nenv_auth = true\nprovider = Other\n" +
		"access_key_id = AK\nsecret_access_key = SK\nendpoint = http://127.0.0.1:1\nregion = us-east-1\n"
	if err := os.WriteFile(conf, []byte(hostile), 0o600); err != nil {
		t.Fatal(err)
	}
	lsf := func(remote string) (string, error) {
		out, err := exec.Command(bin, "lsf", "--config", conf, "--contimeout", "1s", "--timeout", "2s",
			"--low-level-retries", "1", "--retries", "1", remote+"data").CombinedOutput()
		return string(out), err
	}
	if out, err := lsf("s3:"); err != nil || !strings.Contains(out, "node-secret.txt") {
		t.Fatalf("control: plain remote did not follow the alias (err %v): %s", err, out)
	}
	out, err := lsf(rcloneRemote)
	if strings.Contains(out, "node-secret.txt") {
		t.Fatalf("pinned remote listed the local directory: %s", out)
	}
	if err == nil || !strings.Contains(out, "127.0.0.1:1") {
		t.Errorf("pinned remote did not talk S3 to the configured endpoint (err %v): %s", err, out)
	}
}
