package deepspeed

import (
	"regexp"
	"strings"

	corev1 "k8s.io/api/core/v1"

	batchv1beta1 "github.com/accelstack/accelstack/api/batch/v1beta1"
	"github.com/accelstack/accelstack/pkg/jobs/sshjob"
)

// launchScript runs on worker 0: it starts sshd in the background, waits
// until every host of the hostfile answers over SSH, and then runs its
// arguments, the launcher's command line.
const launchScript = sshjob.BackgroundSSHD + `
while read -r host _; do
  until ssh -n -F "$SSH_AUTH_DIR/config" "$host" true; do
    echo "waiting for sshd on $host" >&2
    sleep 2
  done
done < ` + ConfigDir + "/" + sshjob.HostfileKey + `
exec "$@"`

// launchCommand is worker 0's command: launchScript with the deepspeed
// command line, or customCommand through the shell.
func launchCommand(dj *batchv1beta1.DeepSpeedJob, authDir string) []string {
	cmd := []string{"/bin/sh", "-c", "export SSHD_PATH=" + sshjob.DefaultSSHDPath + " SSH_AUTH_DIR=" + authDir + "\n" + launchScript, "deepspeed-launch"}
	if c := dj.Spec.Config.CustomCommand; c != "" {
		return append(cmd, "/bin/sh", "-c", c)
	}
	return append(cmd, deepspeedArgs(dj)...)
}

// deepspeedArgs is the deepspeed launcher's command line.
func deepspeedArgs(dj *batchv1beta1.DeepSpeedJob) []string {
	c := dj.Spec.Config
	args := []string{"deepspeed", "--hostfile", ConfigDir + "/" + sshjob.HostfileKey, "--launcher", "pdsh"}
	if c.LocalRank != nil && !*c.LocalRank {
		args = append(args, "--no_local_rank")
	}
	if a := c.Autotune; a != "" && a != batchv1beta1.DeepSpeedAutotuneNone {
		args = append(args, "--autotuning", string(a))
	}
	args = append(args, c.OtherArgs...)
	if r := c.Run; r != nil {
		switch {
		case len(r.Python) > 0:
			args = append(args, r.Python...)
		case len(r.Module) > 0:
			args = append(append(args, "--module"), r.Module...)
		case len(r.Exec) > 0:
			args = append(append(args, "--no_python"), r.Exec...)
		}
	}
	return args
}

// envName matches the names a shell can export.
var envName = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// envFile is the env file of the job: the main container's variables with
// values of their own, one NAME='value' per line, quoted for the shell
// that pdsh runs the export in. Variables taken from Secrets or fields are
// left out: the file is a ConfigMap.
func envFile(c *corev1.Container) string {
	if c == nil {
		return ""
	}
	var b strings.Builder
	for _, e := range c.Env {
		if e.ValueFrom != nil || !envName.MatchString(e.Name) || strings.ContainsAny(e.Value, "\n\r") {
			continue
		}
		b.WriteString(e.Name + "=" + shellQuote(e.Value) + "\n")
	}
	return b.String()
}

// shellQuote quotes s for a POSIX shell.
func shellQuote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
