package server

import (
	"bytes"
	"crypto/hmac"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"
	"os"
	"strings"
	"sync"
	"time"
)

// The headers a listener with a shared secret verifies a request by.
const (
	// GitHubSignatureHeader holds "sha256=" and the hex HMAC-SHA256 of the
	// body keyed with the secret, as GitHub signs its webhooks.
	GitHubSignatureHeader = "X-Hub-Signature-256"
	// GitLabTokenHeader holds the secret itself, as GitLab sends it.
	GitLabTokenHeader = "X-Gitlab-Token"
)

// secretReloadInterval is how often a listener looks at its secret file
// again, so that a rotated Secret is taken without a restart.
const secretReloadInterval = 10 * time.Second

// errNoSignature is a request that carries neither header.
var errNoSignature = errors.New("neither " + GitHubSignatureHeader + " nor " + GitLabTokenHeader + " is set")

// Verifier checks that a request comes from whoever holds the listener's
// shared secret, read from a file (the listener's Secret, mounted). The
// secret never leaves it: errors say what failed, never what was expected.
type Verifier struct {
	path string
	// now is the clock of the reloads.
	now func() time.Time

	mu       sync.Mutex
	secret   []byte
	loadedAt time.Time
}

// NewVerifier returns a verifier of the secret in the file at path, which
// it reads now: a missing, unreadable or empty file is an error.
func NewVerifier(path string) (*Verifier, error) {
	v := &Verifier{path: path, now: time.Now}
	if _, err := v.load(); err != nil {
		return nil, err
	}
	return v, nil
}

// load returns the secret, reading the file again when the last read is
// older than secretReloadInterval. A failed reload keeps the secret read
// before.
func (v *Verifier) load() ([]byte, error) {
	v.mu.Lock()
	defer v.mu.Unlock()
	if v.secret != nil && v.now().Sub(v.loadedAt) < secretReloadInterval {
		return v.secret, nil
	}
	b, err := os.ReadFile(v.path)
	if err == nil {
		// A secret written from a file often ends with a newline that is
		// no part of it.
		b = bytes.TrimRight(b, "\r\n")
		if len(b) == 0 {
			err = fmt.Errorf("the secret file %s is empty", v.path)
		}
	} else {
		err = fmt.Errorf("reading the secret file: %w", err)
	}
	if err != nil {
		if v.secret != nil {
			return v.secret, nil
		}
		return nil, err
	}
	v.secret, v.loadedAt = b, v.now()
	return v.secret, nil
}

// Verify checks the request's header against its body: GitHub's signature
// when the request has one, otherwise GitLab's token. A request with
// neither fails.
func (v *Verifier) Verify(header http.Header, body []byte) error {
	secret, err := v.load()
	if err != nil {
		return err
	}
	if sig := header.Get(GitHubSignatureHeader); sig != "" {
		hexSum, ok := strings.CutPrefix(sig, "sha256=")
		got, derr := hex.DecodeString(hexSum)
		if !ok || derr != nil {
			return fmt.Errorf("%s is not sha256=<hex>", GitHubSignatureHeader)
		}
		mac := hmac.New(sha256.New, secret)
		mac.Write(body)
		if !hmac.Equal(got, mac.Sum(nil)) {
			return fmt.Errorf("%s does not match the body", GitHubSignatureHeader)
		}
		return nil
	}
	if tok := header.Get(GitLabTokenHeader); tok != "" {
		if subtle.ConstantTimeCompare([]byte(tok), secret) != 1 {
			return fmt.Errorf("%s is not the secret", GitLabTokenHeader)
		}
		return nil
	}
	return errNoSignature
}

// Sign returns the X-Hub-Signature-256 value of body under secret, as
// GitHub computes it.
func Sign(secret, body []byte) string {
	mac := hmac.New(sha256.New, secret)
	mac.Write(body)
	return "sha256=" + hex.EncodeToString(mac.Sum(nil))
}
