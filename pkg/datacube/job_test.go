package datacube

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	tensorstackv1beta1 "github.com/accelstack/accelstack/api/tensorstack/v1beta1"
	"github.com/accelstack/accelstack/pkg/datacube/executorenv"
)

func secretRef(name, key string) *corev1.EnvVarSource {
	return &corev1.EnvVarSource{SecretKeyRef: &corev1.SecretKeySelector{LocalObjectReference: corev1.LocalObjectReference{Name: name}, Key: key}}
}

// download is an S3 to PVC DataCube whose URI comes from a Secret.
func download(name string, extraArgs ...string) *tensorstackv1beta1.DataCube {
	return &tensorstackv1beta1.DataCube{
		ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name},
		Spec: tensorstackv1beta1.DataCubeSpec{
			Source: tensorstackv1beta1.DataReference{Type: "s3", Options: []corev1.EnvVar{
				{Name: "s3-uri", ValueFrom: secretRef("s3", "uri")},
				{Name: "s3-endpoint", Value: "http://s3:9000"},
				{Name: "s3-secret-access-key", ValueFrom: secretRef("s3", "secret")},
			}},
			Sink: tensorstackv1beta1.DataReference{Type: "pvc", PVC: &tensorstackv1beta1.PVCReference{Name: "data"}},
			Executor: tensorstackv1beta1.ExecutorReference{
				Options: tensorstackv1beta1.ExecutorOptions{ExtraArgs: extraArgs},
				Env: []corev1.EnvVar{
					{Name: "HTTPS_PROXY", ValueFrom: secretRef("proxy", "url")},
					{Name: executorenv.EnvSecretOptions, Value: ""},
				},
			},
		},
	}
}

func TestNewJobPodHasNoServiceAccountToken(t *testing.T) {
	job, err := newJob(download("dc"), "executor")
	if err != nil {
		t.Fatal(err)
	}
	if a := job.Spec.Template.Spec.AutomountServiceAccountToken; a == nil || *a {
		t.Errorf("automountServiceAccountToken = %v, want false", a)
	}
}

// TestNewJobListsSecretOptions checks that every variable taken from a
// Secret is named in executorenv.EnvSecretOptions, whatever the option, and that
// spec.executor.env cannot override the list.
func TestNewJobListsSecretOptions(t *testing.T) {
	job, err := newJob(download("dc"), "executor")
	if err != nil {
		t.Fatal(err)
	}
	env := job.Spec.Template.Spec.Containers[0].Env
	last := env[len(env)-1]
	want := "DATACUBE_SOURCE_OPT_S3_SECRET_ACCESS_KEY,DATACUBE_SOURCE_OPT_S3_URI,HTTPS_PROXY"
	if last.Name != executorenv.EnvSecretOptions || last.Value != want {
		t.Errorf("last env var = %s=%q, want %s=%q", last.Name, last.Value, executorenv.EnvSecretOptions, want)
	}
}

func TestNewJobRefusesInvalidSpecs(t *testing.T) {
	testCases := []struct {
		name    string
		dc      *tensorstackv1beta1.DataCube
		wantErr string // "" for none
	}{
		{name: "allowed flags", dc: download("dc", "--concurrency", "8", "--part-size=64Mi", "-no-fsync", "--sync-allow-empty", "--connect-timeout=5s", "--cache-dir", "/tmp", "-v=4")},
		{name: "pvc root", dc: download("dc", "--pvc-root=/"), wantErr: `spec.executor.options.extraArgs[0]: flag "--pvc-root" is not allowed`},
		{name: "pvc root as separate value", dc: download("dc", "--concurrency=2", "-pvc-root", "/"), wantErr: `extraArgs[1]: flag "--pvc-root"`},
		{name: "termination message path", dc: download("dc", "--termination-message-path=/x"), wantErr: `flag "--termination-message-path"`},
		{name: "end of flags", dc: download("dc", "--"), wantErr: `extraArgs[0]: flag "--" is not allowed`},
		{name: "name of 54 characters", dc: download(strings.Repeat("a", 54))},
		{name: "name of 55 characters", dc: download(strings.Repeat("a", 55)), wantErr: "metadata.name"},
	}
	for _, tc := range testCases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := newJob(tc.dc, "executor")
			switch {
			case tc.wantErr == "" && err != nil:
				t.Errorf("newJob: %v, want no error", err)
			case tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)):
				t.Errorf("newJob: %v, want an error containing %q", err, tc.wantErr)
			}
		})
	}
}
