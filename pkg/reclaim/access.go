package reclaim

import (
	"context"
	"errors"
	"fmt"
	"net/http"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	tensorstackv1beta1 "github.com/accelstack/accelstack/api/tensorstack/v1beta1"
	"github.com/accelstack/accelstack/pkg/activity"
	"github.com/accelstack/accelstack/pkg/interactive"
	notebookpkg "github.com/accelstack/accelstack/pkg/notebook"
)

// +kubebuilder:rbac:groups="",resources=secrets,verbs=get

// accessToken returns the token of the Notebook nb's access Secret, which
// the activity sidecar requires of the Keeper's calls to Jupyter through
// it; "" when nb has no such Secret (a sidecar from before access tokens
// checks none). The Secret is read from the API server at each probe, as
// Secrets are not cached; the token is never logged nor put in evidence.
func (k *Keeper) accessToken(ctx context.Context, nb *tensorstackv1beta1.Notebook) (string, error) {
	name := interactive.AccessSecretName(notebookpkg.ObjectName(nb.UID))
	secret := &corev1.Secret{}
	if err := k.reader.Get(ctx, client.ObjectKey{Namespace: nb.Namespace, Name: name}, secret); apierrors.IsNotFound(err) {
		return "", nil
	} else if err != nil {
		return "", fmt.Errorf("reading the access Secret %s: %w", name, err)
	}
	if !metav1.IsControlledBy(secret, nb) {
		return "", fmt.Errorf("the access Secret %s is not the Notebook's", name)
	}
	token := string(secret.Data[activity.AccessTokenKey])
	if token == "" {
		return "", errors.New("the access Secret " + name + " holds no token")
	}
	return token, nil
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
