package executor

import (
	"encoding/base64"
	"errors"
	"fmt"
	"net/url"
	"path"
	"strings"
)

// tokenPlaceholder is replaced by the token option in a git url.
const tokenPlaceholder = "$(TOKEN)"

// gitRemote is a git url split into the url git sees (without credentials)
// and the HTTP Authorization header that carries them.
type gitRemote struct {
	URL string
	// AuthHeader is "Authorization: Basic ..." or empty.
	AuthHeader string
	// Name is the repository name: the url's last element without ".git".
	Name string
}

// parseGitRemote takes the credentials out of an http(s) url: the user and
// password of its user info, with $(TOKEN) replaced by token, become a Basic
// Authorization header passed to git through its environment, so the token
// is in no command line, no .git/config and no git message. A token with no
// user info in the url is sent as the password of user "oauth2". Other
// schemes (file, ssh, git) take the url as is.
func parseGitRemote(raw, token string) (gitRemote, error) {
	if raw == "" {
		return gitRemote{}, fmt.Errorf("option %s is required", OptURL)
	}
	if strings.Contains(raw, tokenPlaceholder) && token == "" {
		return gitRemote{}, fmt.Errorf("option %s contains %s but option %s is empty", OptURL, tokenPlaceholder, OptToken)
	}
	var r gitRemote
	u, err := url.Parse(strings.ReplaceAll(raw, tokenPlaceholder, "TOKEN-PLACEHOLDER"))
	switch {
	case err == nil && (u.Scheme == "http" || u.Scheme == "https"):
		user, pass := "", ""
		if u.User != nil {
			user = u.User.Username()
			pass, _ = u.User.Password()
		}
		user = strings.ReplaceAll(user, "TOKEN-PLACEHOLDER", token)
		pass = strings.ReplaceAll(pass, "TOKEN-PLACEHOLDER", token)
		if user == "" && pass == "" && token != "" {
			user, pass = "oauth2", token
		}
		if user != "" || pass != "" {
			r.AuthHeader = "Authorization: Basic " + base64.StdEncoding.EncodeToString([]byte(user+":"+pass))
		}
		u.User = nil
		r.URL = u.String()
		r.Name = path.Base(strings.TrimSuffix(u.Path, "/"))
	case strings.Contains(raw, tokenPlaceholder):
		return gitRemote{}, errors.New("a url with " + tokenPlaceholder + " must be http or https")
	default:
		r.URL = raw
		p := raw
		if err == nil && u.Path != "" {
			p = u.Path
		} else if i := strings.LastIndexAny(raw, ":/"); i >= 0 {
			p = raw[i+1:] // scp-like user@host:dir/repo.git
		}
		r.Name = path.Base(strings.TrimSuffix(p, "/"))
	}
	r.Name = strings.TrimSuffix(r.Name, ".git")
	if r.Name == "" || r.Name == "/" || r.Name == "." || CheckRelPath(r.Name) != nil {
		return gitRemote{}, fmt.Errorf("option %s: no repository name in the url", OptURL)
	}
	return r, nil
}
