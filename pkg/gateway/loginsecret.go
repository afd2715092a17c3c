package gateway

import (
	"context"
	"crypto/rand"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Keys of the login Secret (LoginOptions.SecretName) that the gateway
// creates in its namespace when it is missing: the gateway's OAuth 2.0
// client secret, the key its session cookies are sealed with, and the
// system secret that Ory Hydra encrypts its database with (its Deployment
// reads it from there). An existing Secret is never changed, so a site
// may create it with its own values.
const (
	ClientSecretKey = "oidc-client-secret"
	SessionKeyKey   = "session-key"
	HydraSystemKey  = "hydra-system-secret"
)

// loginSecrets returns the client secret and session key of the Secret
// ns/name, creating it with new random values if it does not exist. Every
// replica thus uses the same values, whichever created them.
func loginSecrets(ctx context.Context, c client.Client, ns, name string) (clientSecret, sessionKey string, err error) {
	key := client.ObjectKey{Namespace: ns, Name: name}
	var s corev1.Secret
	err = c.Get(ctx, key, &s)
	if apierrors.IsNotFound(err) {
		s = corev1.Secret{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Labels: map[string]string{"app.kubernetes.io/part-of": "accelstack"}},
			Data: map[string][]byte{
				ClientSecretKey: []byte(rand.Text()),
				SessionKeyKey:   []byte(rand.Text() + rand.Text()),
				HydraSystemKey:  []byte(rand.Text() + rand.Text()),
			},
		}
		err = c.Create(ctx, &s)
		if apierrors.IsAlreadyExists(err) {
			err = c.Get(ctx, key, &s)
		}
	}
	if err != nil {
		return "", "", fmt.Errorf("the login Secret %s: %w", key, err)
	}
	clientSecret, sessionKey = string(s.Data[ClientSecretKey]), string(s.Data[SessionKeyKey])
	if clientSecret == "" || sessionKey == "" {
		return "", "", fmt.Errorf("the login Secret %s lacks %s or %s", key, ClientSecretKey, SessionKeyKey)
	}
	return clientSecret, sessionKey, nil
}
