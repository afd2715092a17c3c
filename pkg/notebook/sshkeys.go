package notebook

import (
	"context"
	"fmt"
	"strings"

	"golang.org/x/crypto/ssh"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	tensorstackv1beta1 "github.com/accelstack/accelstack/api/tensorstack/v1beta1"
)

// ResourceLabelKey is the label carrying the usage type of a Secret.
const ResourceLabelKey = "tensorstack.dev/resource"

// SSHSecretType is the usage type (ResourceLabelKey) of the Secrets that
// spec.ssh.authorized_keys names: SSH Public Key.
const SSHSecretType = "ssh"

// SSHPublicKeyKey is the key of an SSH Secret holding the public keys, in
// the authorized_keys format (an id_ed25519.pub or id_rsa.pub file).
const SSHPublicKeyKey = "ssh-publickey"

// keySecrets is what the Secrets that a Notebook names in
// spec.ssh.authorized_keys hold.
type keySecrets struct {
	// valid are the Secrets whose public keys are mounted, in the
	// Notebook's order, each once.
	valid []string
	// reason and problems explain the Secrets left out; empty when none.
	reason   string
	problems []string
}

// checkKeySecrets reads the Secrets nb names for SSH from the API server
// and sorts out those that are of the SSH type and hold public keys. A
// missing or unfit Secret is a problem, not an error; an error is a
// failure to read one. Messages name Secrets and keys, never values.
func checkKeySecrets(ctx context.Context, reader client.Reader, nb *tensorstackv1beta1.Notebook) (keySecrets, error) {
	var ks keySecrets
	if nb.Spec.SSH == nil || !nb.Spec.SSH.Enabled {
		return ks, nil
	}
	seen := map[string]bool{}
	for _, name := range nb.Spec.SSH.AuthorizedKeys {
		if seen[name] {
			continue
		}
		seen[name] = true
		secret := &corev1.Secret{}
		err := reader.Get(ctx, client.ObjectKey{Namespace: nb.Namespace, Name: name}, secret)
		switch {
		case apierrors.IsNotFound(err):
			ks.problem(ReasonSecretNotFound, fmt.Sprintf("Secret %s not found", name))
			continue
		case err != nil:
			return ks, fmt.Errorf("getting Secret %s: %w", name, err)
		}
		if msg := checkKeySecret(secret); msg != "" {
			ks.problem(ReasonSecretInvalid, msg)
			continue
		}
		ks.valid = append(ks.valid, name)
	}
	return ks, nil
}

// problem adds a problem; the reason is the first problem's.
func (ks *keySecrets) problem(reason, msg string) {
	if ks.reason == "" {
		ks.reason = reason
	}
	ks.problems = append(ks.problems, msg)
}

// message returns the problems in one sentence.
func (ks keySecrets) message() string { return strings.Join(ks.problems, "; ") }

// checkKeySecret returns why secret is no SSH Public Key Secret, or "".
func checkKeySecret(secret *corev1.Secret) string {
	if t, ok := secret.Labels[ResourceLabelKey]; !ok {
		return fmt.Sprintf("Secret %s has no label %s: %s (SSH Public Key)", secret.Name, ResourceLabelKey, SSHSecretType)
	} else if t != SSHSecretType {
		return fmt.Sprintf("Secret %s is of type %q (label %s), want %s (SSH Public Key)", secret.Name, t, ResourceLabelKey, SSHSecretType)
	}
	data, ok := secret.Data[SSHPublicKeyKey]
	if !ok {
		return fmt.Sprintf("Secret %s has no key %s", secret.Name, SSHPublicKeyKey)
	}
	if countKeys(data) == 0 {
		return fmt.Sprintf("Secret %s: key %s holds no SSH public key in the authorized_keys format", secret.Name, SSHPublicKeyKey)
	}
	return ""
}

// countKeys returns the number of public keys in an authorized_keys text;
// lines that are no key are skipped, as sshd does.
func countKeys(data []byte) int {
	n := 0
	for {
		_, _, _, rest, err := ssh.ParseAuthorizedKey(data)
		if err != nil {
			return n
		}
		n++
		data = rest
	}
}
