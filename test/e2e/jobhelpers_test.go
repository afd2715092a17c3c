//go:build e2e

package e2e

import (
	"bytes"
	"context"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	batchv1beta1 "github.com/accelstack/accelstack/api/batch/v1beta1"
	mindxdlv1 "github.com/accelstack/accelstack/api/mindxdl/v1"
	"github.com/accelstack/accelstack/pkg/jobs"
	"github.com/accelstack/accelstack/pkg/t9kcli"
	"github.com/accelstack/accelstack/test/cluster"
)

// jobTimeout bounds each wait of the jobs tests: their pods start Python
// with PyTorch or XGBoost, several at once on a small machine.
const jobTimeout = 8 * time.Minute

// scriptsDir holds the training programs, mounted into the pods from a
// ConfigMap rather than built into the images.
const scriptsDir = "/scripts"

// createScripts puts the programs of testdata/jobs into the ConfigMap
// "scripts" of ns.
func createScripts(t *testing.T, ns string) {
	t.Helper()
	files, err := filepath.Glob(filepath.Join("testdata", "jobs", "*.py"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no training programs in testdata/jobs: %v", err)
	}
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "scripts", Namespace: ns}, Data: map[string]string{}}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		cm.Data[filepath.Base(f)] = string(b)
	}
	if _, err := kube.CoreV1().ConfigMaps(ns).Create(testContext(t), cm, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
}

// workload is a pod template running command in image, with the scripts
// mounted, as container name (the kind's main container).
func workload(name, image string, command ...string) corev1.PodTemplateSpec {
	return corev1.PodTemplateSpec{Spec: corev1.PodSpec{
		TerminationGracePeriodSeconds: ptr.To[int64](2),
		Containers: []corev1.Container{{
			Name: name, Image: image, ImagePullPolicy: corev1.PullNever,
			Command:      command,
			VolumeMounts: []corev1.VolumeMount{{Name: "scripts", MountPath: scriptsDir}},
		}},
		Volumes: []corev1.Volume{{Name: "scripts", VolumeSource: corev1.VolumeSource{
			ConfigMap: &corev1.ConfigMapVolumeSource{LocalObjectReference: corev1.LocalObjectReference{Name: "scripts"}}}}},
	}}
}

// torchTemplate runs the training program in the PyTorch image.
func torchTemplate(args ...string) corev1.PodTemplateSpec {
	return workload("pytorch", cluster.PyTorchImage, append([]string{"python3", scriptsDir + "/train.py"}, args...)...)
}

// jobContext returns a context that ends with the test or after jobTimeout.
func jobContext(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), jobTimeout)
	t.Cleanup(cancel)
	return ctx
}

// jobStatus returns the common status of a job of any kind.
func jobStatus(obj client.Object) *batchv1beta1.JobStatus {
	switch o := obj.(type) {
	case *batchv1beta1.GenericJob:
		return &o.Status
	case *batchv1beta1.PyTorchTrainingJob:
		return &o.Status.JobStatus
	case *batchv1beta1.XGBoostTrainingJob:
		return &o.Status.JobStatus
	case *batchv1beta1.MPIJob:
		return &o.Status
	case *batchv1beta1.DeepSpeedJob:
		return &o.Status.JobStatus
	case *mindxdlv1.AscendJob:
		return &o.Status.Detail.JobStatus
	}
	panic(fmt.Sprintf("no job status in %T", obj))
}

// waitJob polls job until done says it is where the test wants it, and
// fails the test when it finishes otherwise.
func waitJob(t *testing.T, c client.Client, job client.Object, what string, done func(*batchv1beta1.JobStatus) bool) {
	t.Helper()
	var lastErr error
	err := wait.PollUntilContextCancel(jobContext(t), 250*time.Millisecond, true, func(ctx context.Context) (bool, error) {
		if lastErr = c.Get(ctx, client.ObjectKeyFromObject(job), job); lastErr != nil {
			return false, nil //nolint:nilerr // retried until the timeout
		}
		st := jobStatus(job)
		if done(st) {
			return true, nil
		}
		if jobs.Finished(st) {
			return false, fmt.Errorf("the job finished as %s instead", st.Phase)
		}
		return false, nil
	})
	if err != nil {
		// The headline goes last: a truncated log keeps its tail.
		t.Fatalf("%s\n%s %s never %s: %v (last error %v)", describeJob(t, job),
			job.GetObjectKind().GroupVersionKind().Kind, job.GetName(), what, err, lastErr)
	}
}

func phase(p batchv1beta1.JobPhase) func(*batchv1beta1.JobStatus) bool {
	return func(s *batchv1beta1.JobStatus) bool { return s.Phase == p }
}

// describeJob returns the job's pods' logs, the namespace's events and the
// job's status, for a failure.
func describeJob(t *testing.T, job client.Object) string {
	ns := job.GetNamespace()
	var b strings.Builder
	kind := strings.ToLower(job.GetObjectKind().GroupVersionKind().Kind)
	if kind == "" {
		kind = fmt.Sprintf("%T", job)
		kind = strings.ToLower(kind[strings.LastIndex(kind, ".")+1:])
	}
	pods, _ := kube.CoreV1().Pods(ns).List(context.Background(), metav1.ListOptions{LabelSelector: jobs.JobSelector(job.GetName())})
	if pods != nil {
		for _, p := range pods.Items {
			logs, _ := clus.Kubectl(context.Background(), "-n", ns, "logs", p.Name, "--tail=30")
			fmt.Fprintf(&b, "--- pod %s %s:\n%s\n", p.Name, podStatus(&p), logs)
		}
	}
	fmt.Fprintf(&b, "--- events:\n%s\n", namespaceEvents(ns, ""))
	st, _ := clus.Kubectl(context.Background(), "-n", ns, "get", kind, job.GetName(), "-o", "jsonpath={.status}")
	fmt.Fprintf(&b, "--- status: %s", st)
	return b.String()
}

// jobPods returns the job's pods by name.
func jobPods(t *testing.T, ns, job string) map[string]corev1.Pod {
	t.Helper()
	var out map[string]corev1.Pod
	waitJobPods(t, ns, job, "listed", func(pods map[string]corev1.Pod) bool {
		out = pods
		return true
	})
	return out
}

// waitJobPods waits until done says the job's pods are where the test
// wants them.
func waitJobPods(t *testing.T, ns, job, what string, done func(map[string]corev1.Pod) bool) {
	t.Helper()
	var last map[string]corev1.Pod
	err := wait.PollUntilContextCancel(jobContext(t), 250*time.Millisecond, true, func(ctx context.Context) (bool, error) {
		pods, err := kube.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{LabelSelector: jobs.JobSelector(job)})
		if err != nil {
			return false, nil //nolint:nilerr // retried until the timeout
		}
		last = map[string]corev1.Pod{}
		for _, p := range pods.Items {
			last[p.Name] = p
		}
		return done(last), nil
	})
	if err != nil {
		t.Fatalf("the pods of %s/%s never %s: %v; last: %v", ns, job, what, err, slices.Sorted(maps.Keys(last)))
	}
}

// waitLogMatch waits until the pod's log matches re and returns the
// submatches of the last match.
func waitLogMatch(t *testing.T, ns, pod string, re *regexp.Regexp) []string {
	t.Helper()
	all := waitLogMatches(t, ns, pod, re, 1)
	return all[len(all)-1]
}

// waitLogMatches waits until the pod's log matches re at least n times and
// returns the submatches of every match.
func waitLogMatches(t *testing.T, ns, pod string, re *regexp.Regexp, n int) [][]string {
	t.Helper()
	var logs string
	var all [][]string
	err := wait.PollUntilContextCancel(jobContext(t), time.Second, true, func(ctx context.Context) (bool, error) {
		out, err := clus.Kubectl(ctx, "-n", ns, "logs", pod)
		if err != nil {
			return false, nil //nolint:nilerr // the container may not have started
		}
		logs = out
		all = re.FindAllStringSubmatch(logs, -1)
		return len(all) >= n, nil
	})
	if err != nil {
		t.Fatalf("%s/%s never logged %s %d times: %v; log:\n%s", ns, pod, re, n, err, logs)
	}
	return all
}

// t9k runs the t9k command line in-process against the cluster, as a user
// with the admin's kubeconfig, and returns what it wrote to its output and
// error output together.
func t9k(t *testing.T, args ...string) (string, error) {
	t.Helper()
	var out bytes.Buffer
	root := t9kcli.NewRoot(genericiooptions.IOStreams{In: strings.NewReader(""), Out: &out, ErrOut: &out})
	root.SetArgs(append(args, "--kubeconfig="+clus.Kubeconfig()))
	err := root.ExecuteContext(jobContext(t))
	return out.String(), err
}
