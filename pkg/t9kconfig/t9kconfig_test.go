package t9kconfig

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestSaveLoad(t *testing.T) {
	path := filepath.Join(t.TempDir(), "sub", "t9k-config.yaml")
	c, err := Load(path)
	if err != nil || len(c.Contexts) != 0 {
		t.Fatalf("a missing file: %+v, %v", c, err)
	}
	c.Set(Context{Name: "alice-example.com", Server: "https://example.com", Auth: Auth{Token: "t9k_x"}})
	c.Set(Context{Name: "apikey-1-example.com", Server: "https://example.com", Auth: Auth{APIKey: "k"}, Extension: map[string]any{"codepack": map[string]any{"data-copy-image": "img"}}})
	if err := c.Save(path); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Stat(path); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("the file's mode: %v, %v; want 0600", fi, err)
	}
	got, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	if got.CurrentContext != "apikey-1-example.com" || len(got.Contexts) != 2 || got.Find("alice-example.com").Auth.Type() != AuthToken {
		t.Errorf("loaded %+v", got)
	}
	got.Set(Context{Name: "alice-example.com", Server: "https://other.example.com", Auth: Auth{Token: "t9k_y"}})
	if len(got.Contexts) != 2 || got.Find("alice-example.com").Server != "https://other.example.com" || got.CurrentContext != "alice-example.com" {
		t.Errorf("Set of an existing name: %+v", got)
	}
	if !got.Delete("alice-example.com") || got.CurrentContext != "" || got.Delete("alice-example.com") {
		t.Errorf("Delete of the current context: %+v", got)
	}
	if err := os.WriteFile(path, []byte("current-context: a\ncontext: []\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := Load(path); err == nil || !strings.Contains(err.Error(), path) {
		t.Errorf("an unknown field: %v, want an error naming the file", err)
	}
}

func TestParseServerAndNames(t *testing.T) {
	for _, bad := range []string{"http://example.com", "example.com", "https://", "https://example.com/t9k", "https://u:p@example.com", "https://example.com?x=1"} {
		if _, err := ParseServer(bad); err == nil {
			t.Errorf("ParseServer(%q) accepted", bad)
		}
	}
	u, err := ParseServer("https://platform.example.com:8443/")
	if err != nil || u.String() != "https://platform.example.com:8443" {
		t.Fatalf("ParseServer = %v, %v", u, err)
	}
	if got := DefaultName(u, "Alice", ""); got != "alice-platform.example.com" {
		t.Errorf("a login's default name = %q", got)
	}
	if got := DefaultName(u, "", "e4ccd2a3-3425-44b0-8b44-148bd303a0f9"); !strings.HasPrefix(got, "apikey-") || !strings.HasSuffix(got, "-platform.example.com") || ValidateName(got) != nil {
		t.Errorf("an API key's default name = %q", got)
	}
	if ValidateName("Bad_Name") == nil {
		t.Error("ValidateName accepted Bad_Name")
	}
}

func TestRESTConfig(t *testing.T) {
	c := Context{Name: "a", Server: "https://example.com", Auth: Auth{APIKey: "key", Token: "token"}, CertificateAuthorityData: []byte("pem")}
	rc, err := c.RESTConfig()
	if err != nil {
		t.Fatal(err)
	}
	if rc.Host != "https://example.com/t9k/kubernetes" || rc.BearerToken != "key" || string(rc.CAData) != "pem" {
		t.Errorf("RESTConfig = %+v: want the gateway's API path and the API key, preferred over the token", rc)
	}
	c.Prefixes = map[string]string{KubernetesPrefix: "/k8s"}
	if rc, _ := c.RESTConfig(); rc.Host != "https://example.com/k8s" {
		t.Errorf("with a prefix: %s", rc.Host)
	}
	c.Auth = Auth{}
	if _, err := c.RESTConfig(); err == nil || !strings.Contains(err.Error(), "t9k config auth") {
		t.Errorf("no credential: %v", err)
	}
}
