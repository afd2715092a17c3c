package reclaim

import (
	"context"
	"errors"
	"net/http"

	tensorstackv1beta1 "github.com/accelstack/accelstack/api/tensorstack/v1beta1"
	"github.com/accelstack/accelstack/pkg/activity"
	"github.com/accelstack/accelstack/pkg/interactive"
	notebookpkg "github.com/accelstack/accelstack/pkg/notebook"
)

// accessToken returns the token of the Notebook nb's access Secret, which
// the activity sidecar requires of the Keeper's calls to Jupyter through
// it; "" when nb has no such Secret (a sidecar from before access tokens
// checks none). The Secret is read from the API server at each probe, as
// Secrets are not cached; the token is never logged nor put in evidence.
func (k *Keeper) accessToken(ctx context.Context, nb *tensorstackv1beta1.Notebook) (string, error) {
	token, err := interactive.AccessToken(ctx, k.reader, nb, notebookpkg.ObjectName(nb.UID))
	if errors.Is(err, interactive.ErrNoAccessSecret) {
		return "", nil
	}
	return token, err
}

// accessHeader returns the header that carries an access token to the
// sidecar: the cookie activity.AccessCookie, which the sidecar removes, so
// that Authorization stays free for Jupyter's own token. None when token
// is "".
func accessHeader(token string) http.Header {
	if token == "" {
		return nil
	}
	return http.Header{"Cookie": {activity.AccessCookie + "=" + token}}
}
