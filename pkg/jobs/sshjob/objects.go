package sshjob

import (
	"context"
	"fmt"
	"maps"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/accelstack/accelstack/pkg/jobs"
)

// The keys of the Secret (those of the kubernetes.io/ssh-auth type) and of
// the ConfigMap.
const (
	PrivateKeyKey = corev1.SSHAuthPrivateKey
	PublicKeyKey  = "ssh-publickey"
	HostfileKey   = "hostfile"
	SSHConfigKey  = "ssh_config"
)

// +kubebuilder:rbac:groups="",resources=secrets,verbs=get;create
// +kubebuilder:rbac:groups="",resources=configmaps,verbs=get;list;watch;create;update

// SecretName is the name of job's SSH key Secret.
func SecretName(job string) string { return job + "-ssh" }

// ConfigMapName is the name of job's hostfile ConfigMap.
func ConfigMapName(job string) string { return job + "-config" }

// Owns are the types of the dependents the engine watches for the kinds of
// this family: the ConfigMap. Secrets are not watched (that would take
// listing every Secret of the cluster); the key Secret is created before
// the ConfigMap, so a job with its ConfigMap has its Secret.
func Owns() []client.Object { return []client.Object{&corev1.ConfigMap{}} }

// ensureSecret creates job's SSH key Secret, with a new key pair, unless
// it exists; it reads the Secret from the API server, not a cache. A
// Secret of that name that the job does not own is an error: its key is
// never used. That holds as well for one created by someone else between
// the read and the create: the Secret is read again and its owner checked.
func ensureSecret(ctx context.Context, env *jobs.Env, job *jobs.Job, component string) error {
	// client-go traces requests and responses, bodies included from -v=8,
	// through the context's logger: these carry the private key.
	ctx = logr.NewContext(ctx, logr.Discard())
	obj := job.Object
	key := client.ObjectKey{Namespace: obj.GetNamespace(), Name: SecretName(obj.GetName())}
	err := checkSecret(ctx, env, obj, key)
	if !apierrors.IsNotFound(err) {
		return err
	}
	private, public, err := keyPair()
	if err != nil {
		return err
	}
	s := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: key.Name, Namespace: key.Namespace, Labels: jobs.Labels(component, obj.GetName())},
		Type:       corev1.SecretTypeSSHAuth,
		Data:       map[string][]byte{PrivateKeyKey: private, PublicKeyKey: public},
	}
	if err := jobs.SetOwner(obj, s, env.Scheme); err != nil {
		return err
	}
	switch err := env.Client.Create(ctx, s); {
	case apierrors.IsAlreadyExists(err):
		// Created meanwhile: by this controller, or by someone else, whose
		// key the job must not trust.
		if err := checkSecret(ctx, env, obj, key); err != nil {
			return fmt.Errorf("checking secret %s, created meanwhile: %w", key.Name, err)
		}
		return nil
	case err != nil:
		return fmt.Errorf("creating secret %s: %w", key.Name, err)
	}
	return nil
}

// checkSecret reads the key Secret at key: nil if obj owns it, the API
// server's NotFound error if there is none, else an error.
func checkSecret(ctx context.Context, env *jobs.Env, obj client.Object, key client.ObjectKey) error {
	s := &corev1.Secret{}
	err := env.Client.Get(ctx, key, s)
	switch {
	case err == nil && jobs.OwnedBy(s, obj):
		return nil
	case err == nil:
		return fmt.Errorf("secret %s belongs to another object", key.Name)
	case apierrors.IsNotFound(err):
		return err
	}
	return fmt.Errorf("getting secret %s: %w", key.Name, err)
}

// Ensure makes job's ConfigMap hold data; when the ConfigMap does not exist
// yet, it creates the key Secret first.
func Ensure(ctx context.Context, env *jobs.Env, job *jobs.Job, component string, data map[string]string) error {
	obj := job.Object
	key := client.ObjectKey{Namespace: obj.GetNamespace(), Name: ConfigMapName(obj.GetName())}
	cm := &corev1.ConfigMap{}
	err := env.Cache.Get(ctx, key, cm)
	switch {
	case apierrors.IsNotFound(err):
		if err := ensureSecret(ctx, env, job, component); err != nil {
			return err
		}
		cm = &corev1.ConfigMap{
			ObjectMeta: metav1.ObjectMeta{Name: key.Name, Namespace: key.Namespace, Labels: jobs.Labels(component, obj.GetName())},
			Data:       data,
		}
		if err := jobs.SetOwner(obj, cm, env.Scheme); err != nil {
			return err
		}
		if err := env.Client.Create(ctx, cm); err != nil && !apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("creating ConfigMap %s: %w", key.Name, err)
		}
		return nil
	case err != nil:
		return fmt.Errorf("getting ConfigMap %s: %w", key.Name, err)
	case !jobs.OwnedBy(cm, obj):
		return fmt.Errorf("ConfigMap %s belongs to another object", key.Name)
	case maps.Equal(cm.Data, data):
		return nil
	}
	cm = cm.DeepCopy()
	cm.Data = data
	if err := env.Client.Update(ctx, cm); err != nil {
		return fmt.Errorf("updating ConfigMap %s: %w", key.Name, err)
	}
	return nil
}
