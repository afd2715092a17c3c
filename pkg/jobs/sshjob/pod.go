package sshjob

import (
	"fmt"
	"path"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
)

// Defaults of the ssh settings.
const (
	// DefaultAuthMountPath is where the key pair is mounted by default.
	DefaultAuthMountPath = "/root/.ssh"
	// DefaultSSHDPath is sshd's path when the job names none.
	DefaultSSHDPath = "/usr/sbin/sshd"
	// SSHPort is the port sshd listens on.
	SSHPort = 22
)

// The names of the files in the auth mount, and of the volumes.
const (
	privateKeyFile = "id_ed25519"
	publicKeyFile  = "id_ed25519.pub"
	authorizedKeys = "authorized_keys"
	clientConfig   = "config"
	authVolume     = "ssh-auth"
	configVolume   = "job-config"
)

// ClientConfigPath is the path of the SSH client configuration in a pod
// whose key pair is mounted at authDir; pass it with ssh -F.
func ClientConfigPath(authDir string) string { return path.Join(authDir, clientConfig) }

// ClientConfig is the SSH client configuration of the job's pods: the
// job's key, no host-key prompts (the workers' host key is the job's own
// key, and their names change with every run), and retries while a worker's
// sshd starts.
func ClientConfig(authDir string) string {
	return fmt.Sprintf(`Host *
  IdentityFile %s
  IdentitiesOnly yes
  StrictHostKeyChecking no
  UserKnownHostsFile /dev/null
  LogLevel ERROR
  ConnectionAttempts 10
  ConnectTimeout 10
`, path.Join(authDir, privateKeyFile))
}

// Host is one line of a hostfile.
type Host struct {
	Name  string
	Slots int32
}

// Hostfile returns the hostfile of hosts in the format of Open MPI and
// DeepSpeed: "<host> slots=<n>" per line.
func Hostfile(hosts []Host) string {
	var b strings.Builder
	for _, h := range hosts {
		fmt.Fprintf(&b, "%s slots=%d\n", h.Name, h.Slots)
	}
	return b.String()
}

// MountAuth mounts, in container c of pod, at dir (0600, owned by root):
// the job's private key, its public key, authorized_keys and the client
// configuration.
func MountAuth(pod *corev1.Pod, c *corev1.Container, job, dir string) {
	if !hasVolume(pod, authVolume) {
		pod.Spec.Volumes = append(pod.Spec.Volumes, corev1.Volume{
			Name: authVolume,
			VolumeSource: corev1.VolumeSource{Projected: &corev1.ProjectedVolumeSource{
				DefaultMode: ptr.To[int32](0o600),
				Sources: []corev1.VolumeProjection{
					{Secret: &corev1.SecretProjection{
						LocalObjectReference: corev1.LocalObjectReference{Name: SecretName(job)},
						Items: []corev1.KeyToPath{
							{Key: PrivateKeyKey, Path: privateKeyFile},
							{Key: PublicKeyKey, Path: publicKeyFile},
							{Key: PublicKeyKey, Path: authorizedKeys},
						},
					}},
					{ConfigMap: &corev1.ConfigMapProjection{
						LocalObjectReference: corev1.LocalObjectReference{Name: ConfigMapName(job)},
						Items:                []corev1.KeyToPath{{Key: SSHConfigKey, Path: clientConfig}},
					}},
				},
			}},
		})
	}
	c.VolumeMounts = append(c.VolumeMounts, corev1.VolumeMount{Name: authVolume, MountPath: dir, ReadOnly: true})
}

// MountConfig mounts the job's ConfigMap keys at dir in container c of pod,
// read-only.
func MountConfig(pod *corev1.Pod, c *corev1.Container, job, dir string, keys ...string) {
	if !hasVolume(pod, configVolume) {
		items := make([]corev1.KeyToPath, 0, len(keys))
		for _, k := range keys {
			items = append(items, corev1.KeyToPath{Key: k, Path: k})
		}
		pod.Spec.Volumes = append(pod.Spec.Volumes, corev1.Volume{
			Name: configVolume,
			VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{
				LocalObjectReference: corev1.LocalObjectReference{Name: ConfigMapName(job)},
				Items:                items,
			}},
		})
	}
	c.VolumeMounts = append(c.VolumeMounts, corev1.VolumeMount{Name: configVolume, MountPath: dir, ReadOnly: true})
}

func hasVolume(pod *corev1.Pod, name string) bool {
	for _, v := range pod.Spec.Volumes {
		if v.Name == name {
			return true
		}
	}
	return false
}

// sshdScript starts sshd ($1) in the foreground with the job's key ($2 is
// the auth directory) as its host key and authorized_keys: the image's
// sshd_config if it has one, else none, and the privilege separation
// directory, which images built without running package scripts lack.
const sshdScript = `mkdir -p /run/sshd && chmod 0755 /run/sshd
config=/etc/ssh/sshd_config; [ -f "$config" ] || config=/dev/null
exec "$1" -D -e -f "$config" -h "$2/` + privateKeyFile + `" -o "AuthorizedKeysFile $2/` + authorizedKeys + `" -o StrictModes=no -o PermitRootLogin=prohibit-password -o PasswordAuthentication=no -p ` + "22"

// SSHDCommand is the command of a worker's container that runs sshd at
// sshdPath with the key pair mounted at authDir.
func SSHDCommand(sshdPath, authDir string) []string {
	return []string{"/bin/sh", "-c", sshdScript, "sshd", sshdPath, authDir}
}

// BackgroundSSHD is a shell fragment that starts sshd as SSHDCommand does,
// in the background; the script it is part of gets sshdPath and authDir as
// $SSHD_PATH and $SSH_AUTH_DIR.
const BackgroundSSHD = `/bin/sh -c '` + sshdScript + `' sshd "$SSHD_PATH" "$SSH_AUTH_DIR" &`

// ReadinessProbe makes a worker Ready once sshd accepts connections, unless
// the container has a probe of its own.
func ReadinessProbe(c *corev1.Container) {
	if c.ReadinessProbe != nil {
		return
	}
	c.ReadinessProbe = &corev1.Probe{
		ProbeHandler:  corev1.ProbeHandler{TCPSocket: &corev1.TCPSocketAction{Port: intstr.FromInt32(SSHPort)}},
		PeriodSeconds: 2,
	}
}
