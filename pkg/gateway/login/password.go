package login

import (
	"context"
	"errors"
	"net/http"
	"time"

	"github.com/accelstack/accelstack/pkg/directory"
)

// errThrottled: a user with too many recent failed logins.
var errThrottled = errors.New("too many failed logins for this user; wait a few minutes")

// checkPassword checks a user's password with the directory, under the
// failed-login throttle. It returns the user's identity, or the status to
// answer with and an error: errThrottled (429), directory.ErrBadLogin
// (401) or, with 503, the directory's own failure, which is not for the
// client.
func (l *Login) checkPassword(ctx context.Context, name, password string) (directory.Identity, int, error) {
	now := time.Now()
	if !l.throttle.allowed(name, now) {
		return directory.Identity{}, http.StatusTooManyRequests, errThrottled
	}
	id, err := l.cfg.Directory.Authenticate(ctx, name, password)
	if errors.Is(err, directory.ErrBadLogin) || (err == nil && validName(id.Name) != nil) {
		l.throttle.failed(name, now)
		l.cfg.Log.Info("Login refused", "user", name)
		return directory.Identity{}, http.StatusUnauthorized, directory.ErrBadLogin
	}
	if err != nil {
		return directory.Identity{}, http.StatusServiceUnavailable, err
	}
	l.throttle.succeeded(name)
	return id, http.StatusOK, nil
}
