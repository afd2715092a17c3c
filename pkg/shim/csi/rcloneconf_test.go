package csi

import (
	"fmt"
	"net/url"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// parseRcloneConf reads rclone.conf as rclone's config parser
// (github.com/unknwon/goconfig) does: lines trimmed; '#' and ';' start
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
func wantRcloneConf(c Credentials) map[string]map[string]string {
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
			c, err := CredentialsFromSecrets(map[string]string{"accessKeyID": "[s3]", "secretAccessKey": secret, "endpoint": "http://s3.local:7070", "region": "eu-1"})
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
	creds := Credentials{AccessKeyID: "AK", SecretAccessKey: "SK", Endpoint: &url.URL{Scheme: "http", Host: "s3:7070"}, Region: "r1"}
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
