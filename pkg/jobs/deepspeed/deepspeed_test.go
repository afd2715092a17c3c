package deepspeed

import (
	"os/exec"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"

	batchv1beta1 "github.com/accelstack/accelstack/api/batch/v1beta1"
)

// TestEnvFileQuotes checks that every value of the env file reads back
// unchanged in a shell, whatever it holds, and that what the file cannot
// carry is left out.
func TestEnvFileQuotes(t *testing.T) {
	c := &corev1.Container{Env: []corev1.EnvVar{
		{Name: "PLAIN", Value: "value"},
		{Name: "TRICKY", Value: `it's "$(rm -rf /)" ; $HOME \ ` + "`x`"},
		{Name: "EMPTY"},
		{Name: "FROM_SECRET", ValueFrom: &corev1.EnvVarSource{SecretKeyRef: &corev1.SecretKeySelector{Key: "k"}}},
		{Name: "BAD-NAME", Value: "x"},
		{Name: "MULTI", Value: "a\nb"},
	}}
	file := envFile(c)
	for _, gone := range []string{"FROM_SECRET", "BAD-NAME", "MULTI"} {
		if strings.Contains(file, gone) {
			t.Errorf("env file has %s:\n%s", gone, file)
		}
	}
	out, err := exec.Command("/bin/sh", "-c", file+`printf '%s|%s|%s' "$PLAIN" "$TRICKY" "$EMPTY"`).Output()
	if err != nil {
		t.Fatalf("sh: %v", err)
	}
	if want := "value|" + c.Env[1].Value + "|"; string(out) != want {
		t.Errorf("read back %q, want %q", out, want)
	}
}

func TestDeepSpeedArgs(t *testing.T) {
	for _, tc := range []struct {
		name string
		cfg  batchv1beta1.DeepSpeedConfig
		want []string
	}{
		{"python", batchv1beta1.DeepSpeedConfig{Run: &batchv1beta1.DeepSpeedRun{Python: []string{"train.py", "--epochs=1"}}},
			[]string{"train.py", "--epochs=1"}},
		{"module", batchv1beta1.DeepSpeedConfig{Run: &batchv1beta1.DeepSpeedRun{Module: []string{"pkg.train"}}, LocalRank: ptr.To(false)},
			[]string{"--no_local_rank", "--module", "pkg.train"}},
		{"exec", batchv1beta1.DeepSpeedConfig{Run: &batchv1beta1.DeepSpeedRun{Exec: []string{"./bin"}}, Autotune: "tune", OtherArgs: []string{"--no_ssh_check"}},
			[]string{"--autotuning", "tune", "--no_ssh_check", "--no_python", "./bin"}},
	} {
		dj := &batchv1beta1.DeepSpeedJob{Spec: batchv1beta1.DeepSpeedJobSpec{Config: tc.cfg}}
		want := append([]string{"deepspeed", "--hostfile", "/job/hostfile", "--launcher", "pdsh"}, tc.want...)
		if got := deepspeedArgs(dj); !cmp.Equal(got, want) {
			t.Errorf("%s: %q, want %q", tc.name, got, want)
		}
	}
}

func TestValidateRun(t *testing.T) {
	tmpl := corev1.PodTemplateSpec{Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "worker", Image: "x"}}}}
	for _, tc := range []struct {
		name string
		cfg  batchv1beta1.DeepSpeedConfig
		want string
	}{
		{"none", batchv1beta1.DeepSpeedConfig{}, "spec.config.run: Required value"},
		{"two", batchv1beta1.DeepSpeedConfig{Run: &batchv1beta1.DeepSpeedRun{Python: []string{"a"}, Exec: []string{"b"}}}, "spec.config.run: Invalid value: 2"},
		{"slots", batchv1beta1.DeepSpeedConfig{CustomCommand: "x", SlotsPerWorker: ptr.To[int32](0)}, "spec.config.slotsPerWorker: Invalid value: 0"},
		{"launcher", batchv1beta1.DeepSpeedConfig{CustomCommand: "x", OtherArgs: []string{"--launcher", "openmpi"}}, "spec.config.otherArgs[0]"},
		{"custom only", batchv1beta1.DeepSpeedConfig{CustomCommand: "x", OtherArgs: []string{"--launcher=pdsh"}}, ""},
	} {
		dj := &batchv1beta1.DeepSpeedJob{Spec: batchv1beta1.DeepSpeedJobSpec{Config: tc.cfg, Worker: batchv1beta1.DeepSpeedWorkerSpec{Template: tmpl}}}
		dj.Name = "ds"
		errs := Kind{}.Validate(dj, nil)
		got := errs.ToAggregate()
		switch {
		case tc.want == "" && got != nil:
			t.Errorf("%s: refused: %v", tc.name, got)
		case tc.want != "" && (got == nil || !strings.Contains(got.Error(), tc.want)):
			t.Errorf("%s: %v, want %q", tc.name, got, tc.want)
		}
	}
}
