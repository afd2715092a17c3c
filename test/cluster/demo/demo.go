// Package demo runs accelstack's demo on the local cluster: the examples of
// its examples directory (a PyTorchTrainingJob on a queue, a workflow, a
// Notebook, a SimpleMLService, storage), their waits, and a report of what
// a user looks at, in which every part is also a check. `make demo` runs it
// on a cluster of its own; the end-to-end tier runs it on its cluster after
// the tests.
package demo

import (
	"bufio"
	"bytes"
	"context"
	"crypto/tls"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/cookiejar"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/minio/minio-go/v7"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/accelstack/accelstack/pkg/activity"
	"github.com/accelstack/accelstack/pkg/console"
	"github.com/accelstack/accelstack/pkg/interactive"
	"github.com/accelstack/accelstack/pkg/jobs"
	"github.com/accelstack/accelstack/pkg/members"
	"github.com/accelstack/accelstack/pkg/notebook"
	"github.com/accelstack/accelstack/pkg/serving/simple"
	"github.com/accelstack/accelstack/pkg/t9kcli"
	"github.com/accelstack/accelstack/test/cluster"
	"github.com/accelstack/accelstack/test/harness"
	"github.com/accelstack/accelstack/test/loginclient"
)

// demoBucket and the objects the demo puts there for the StorageShim and
// the DataCube.
const demoBucket = "demo"

var demoObjects = map[string]string{
	"dataset/README.txt":      "A tiny dataset for the accelstack demo.\n",
	"dataset/labels/0001.txt": "cat\n",
	"dataset/labels/0002.txt": "dog\n",
	// The model the SimpleMLService of examples/serving.yaml serves.
	"models/linear/model.json": `{"weights": [1, 2, 3], "bias": 0.5}`,
}

// demoPVDir is the hostPath of the demo's DataCube volume (examples/demo.yaml).
const demoPVDir = "/run/accelstack/demo-datacube"

// Run applies the examples on c, a running cluster with accelstack
// installed, waits for each to do its work, and writes the report of what
// a user looks at to w. It fails if a wait times out or any part of the
// report failed or came back empty.
func Run(ctx context.Context, c *cluster.Cluster, w io.Writer) error {
	if err := seedBucket(ctx, c); err != nil {
		return err
	}
	root, err := harness.RepoRoot()
	if err != nil {
		return err
	}
	examples := filepath.Join(root, "test", "cluster", "demo", "examples")
	if err := createProject(ctx, c, filepath.Join(examples, "project.yaml")); err != nil {
		return err
	}
	if _, err := c.Kubectl(ctx, "apply", "-f", filepath.Join(examples, "demo.yaml")); err != nil {
		return err
	}
	if err := applyTrainingProgram(ctx, c, filepath.Join(root, trainingProgram)); err != nil {
		return err
	}
	// The queue controllers set Ready once they see the Queue; from then on
	// the admission webhook, which reads the same cache, takes the job.
	if _, err := c.Kubectl(ctx, "wait", "--for=condition=Ready", "queue/demo", "--timeout=60s"); err != nil {
		return err
	}
	if _, err := c.Kubectl(ctx, "apply", "-f", filepath.Join(examples, "pytorch-job.yaml")); err != nil {
		return err
	}
	if _, err := c.Kubectl(ctx, "-n", "demo", "wait", "--for=condition=Ready", "storageshim/dataset", "--timeout=120s"); err != nil {
		return err
	}
	if _, err := c.Kubectl(ctx, "apply", "-f", filepath.Join(examples, "workflow.yaml")); err != nil {
		return err
	}
	if _, err := c.Kubectl(ctx, "apply", "-f", filepath.Join(examples, "notebook.yaml")); err != nil {
		return err
	}
	if _, err := c.Kubectl(ctx, "apply", "-f", filepath.Join(examples, "serving.yaml")); err != nil {
		return err
	}
	waits := [][]string{
		{"-n", "demo", "wait", "--for=condition=Ready", "storageshim/dataset", "--timeout=120s"},
		{"-n", "demo", "wait", "--for=condition=Ready", "pod/train", "pod/notebook", "--timeout=180s"},
		{"-n", "demo", "wait", "--for=condition=Complete", "datacube/dataset-copy", "--timeout=180s"},
		{"-n", "demo", "wait", "--for=jsonpath={.status.phase}=Succeeded", "pytorchtrainingjob/ddp", "--timeout=300s"},
		{"-n", "demo", "wait", "--for=condition=GroupScheduled", "podgroup/ddp", "--timeout=60s"},
		{"-n", "demo", "wait", "--for=jsonpath={.status.phase}=Succeeded", "workflowrun/report", "--timeout=300s"},
		{"-n", "demo", "wait", "--for=condition=Ready", "notebook/tutorial", "--timeout=180s"},
		{"-n", "demo", "wait", "--for=condition=ModelDownloaded", "simplemlservice/linear", "--timeout=180s"},
		{"-n", "demo", "wait", "--for=condition=Ready", "simplemlservice/linear", "--timeout=180s"},
	}
	for _, w := range waits {
		if _, err := c.Kubectl(ctx, w...); err != nil {
			events, _ := c.Kubectl(ctx, "-n", "demo", "get", "events", "--sort-by=.lastTimestamp")
			return fmt.Errorf("%w\n%s", err, events)
		}
	}
	return report(ctx, c, w)
}

// createProject applies the Project of path, waits until its namespace
// is Ready, and makes the demo user's group a member with both scopes.
func createProject(ctx context.Context, c *cluster.Cluster, path string) error {
	if _, err := c.Kubectl(ctx, "apply", "-f", path); err != nil {
		return err
	}
	if _, err := c.Kubectl(ctx, "wait", "--for=condition=Ready", "project/demo", "--timeout=60s"); err != nil {
		return err
	}
	cfg, err := c.RESTConfig()
	if err != nil {
		return err
	}
	cl, err := client.New(cfg, client.Options{})
	if err != nil {
		return err
	}
	return members.Set(ctx, cl, "demo", members.Member{
		Kind: rbacv1.GroupKind, Name: cluster.DemoGroup, Scopes: []members.Scope{members.Build, members.Deploy},
	})
}

// trainingProgram is the program of the demo's PyTorchTrainingJob, the one
// the jobs tests run, relative to the repository root.
const trainingProgram = "test/e2e/testdata/jobs/train.py"

// applyTrainingProgram creates or updates the ConfigMap train-py in the
// demo namespace, holding the program at path.
func applyTrainingProgram(ctx context.Context, c *cluster.Cluster, path string) error {
	manifest, err := c.Kubectl(ctx, "-n", "demo", "create", "configmap", "train-py", "--from-file="+path,
		"--dry-run=client", "-o", "yaml")
	if err != nil {
		return err
	}
	f, err := os.CreateTemp("", "train-py-*.yaml")
	if err != nil {
		return err
	}
	defer os.Remove(f.Name())
	if _, err := f.WriteString(manifest); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	_, err = c.Kubectl(ctx, "apply", "-f", f.Name())
	return err
}

// seedBucket creates the demo bucket with a few objects once the S3
// endpoint answers.
func seedBucket(ctx context.Context, c *cluster.Cluster) error {
	s3, err := c.S3(ctx)
	if err != nil {
		return err
	}
	client, err := s3.Client()
	if err != nil {
		return err
	}
	deadline := time.Now().Add(60 * time.Second)
	for {
		if _, err = client.ListBuckets(ctx); err == nil {
			break
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("the S3 endpoint %s does not answer: %w", s3.Endpoint, err)
		}
		time.Sleep(500 * time.Millisecond)
	}
	if ok, err := client.BucketExists(ctx, demoBucket); err != nil {
		return err
	} else if !ok {
		if err := client.MakeBucket(ctx, demoBucket, minio.MakeBucketOptions{Region: s3.Region}); err != nil {
			return err
		}
	}
	for key, body := range demoObjects {
		if _, err := client.PutObject(ctx, demoBucket, key, strings.NewReader(body), int64(len(body)), minio.PutObjectOptions{}); err != nil {
			return err
		}
	}
	return nil
}

// openAsDemoUser opens path on the gateway as a browser does: the login
// form, the demo user's name and password, and back to path, whose answer
// it returns.
func openAsDemoUser(ctx context.Context, password, path string) (string, error) {
	b, err := loginclient.New(cluster.GatewayURL, &tls.Config{InsecureSkipVerify: true}) //nolint:gosec // a client of the local cluster only
	if err != nil {
		return "", err
	}
	ctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	for {
		// Hydra may still be starting, and the gateway registering its
		// client: try the whole login again until it succeeds.
		b.Jar, _ = cookiejar.New(nil)
		resp, body, err := b.Login(ctx, path, cluster.DemoUser, password)
		if err == nil && resp.StatusCode == http.StatusOK {
			return "GET " + path + " after the login: " + strings.TrimSpace(body) + "\n", nil
		}
		if err == nil {
			err = fmt.Errorf("the login ended at %d %s: %s", resp.StatusCode, resp.Request.URL, body)
		}
		select {
		case <-ctx.Done():
			return "", err
		case <-time.After(2 * time.Second):
		}
	}
}

// openConsole logs in as the demo user and opens the console page at
// path, which must be the Build Console's.
func openConsole(ctx context.Context, password, path string) (string, error) {
	got, err := openAsDemoUser(ctx, password, path)
	if err != nil {
		return "", err
	}
	if !strings.Contains(got, "<title>Build Console") {
		return "", fmt.Errorf("%s is not the Build Console's page: %.300s", path, got)
	}
	return "GET " + path + " after the login: the Build Console's page\n", nil
}

// report writes what a user looks at after the examples ran. Every part of
// it is also a check: the whole report is printed, then report fails if any
// command, read-back or scrape in it failed or came back empty.
func report(ctx context.Context, c *cluster.Cluster, w io.Writer) error {
	var out bytes.Buffer
	var problems []error
	section := func(title string) { fmt.Fprintf(&out, "\n== %s\n", title) }
	check := func(what string) func(string, error) string {
		return func(s string, err error) string {
			if err == nil && strings.TrimSpace(s) == "" {
				err = errors.New("empty")
			}
			if err != nil {
				problems = append(problems, fmt.Errorf("%s: %w", what, err))
				return "(" + err.Error() + ")\n"
			}
			return s
		}
	}
	kubectl := func(args ...string) string {
		return check("kubectl " + strings.Join(args, " "))(c.Kubectl(ctx, args...))
	}

	section("Node allocatable (kubectl describe node " + cluster.NodeName + ")")
	out.WriteString(allocatable(kubectl("describe", "node", cluster.NodeName)))

	section("Pods (kubectl -n demo get pods)")
	out.WriteString(kubectl("-n", "demo", "get", "pods"))
	for _, pod := range []string{"train", "notebook"} {
		section("What " + pod + " sees (kubectl -n demo logs " + pod + ")")
		out.WriteString(kubectl("-n", "demo", "logs", pod))
	}

	section("Storage (kubectl -n demo get storageshim,pvc,datacube)")
	out.WriteString(kubectl("-n", "demo", "get", "storageshim,pvc,datacube"))
	section("Written by train into the StorageShim volume, read back through S3")
	out.WriteString(check("read-back of dataset/written-by-train.txt")(readBack(ctx, c, demoBucket, "dataset/written-by-train.txt", 60*time.Second)))
	scratch := strings.TrimSpace(kubectl("-n", "demo", "get", "pvc", "scratch", "-o", "jsonpath={.spec.volumeName}"))
	section("Written by train into the csi-s3 PVC scratch, read back from its own bucket " + scratch)
	out.WriteString(check("read-back of the scratch checkpoint")(readBack(ctx, c, scratch, "checkpoint.txt", 60*time.Second)))
	section("Copied by the DataCube into datacube-pvc (" + demoPVDir + "/dataset)")
	out.WriteString(check("the DataCube copy")(listTree(filepath.Join(demoPVDir, "dataset"))))

	section("PyTorchTrainingJob (kubectl -n demo get pytorchtrainingjob ddp)")
	out.WriteString(kubectl("-n", "demo", "get", "pytorchtrainingjob", "ddp"))
	section("Its status (kubectl -n demo get pytorchtrainingjob ddp -o jsonpath={.status})")
	out.WriteString(check("the status of ddp")(indentJSON(kubectl("-n", "demo", "get", "pytorchtrainingjob", "ddp", "-o", "jsonpath={.status}"))))
	for _, pod := range []string{"ddp-master-0", "ddp-worker-0"} {
		section("What " + pod + " logs (kubectl -n demo logs " + pod + ")")
		out.WriteString(kubectl("-n", "demo", "logs", pod))
	}

	section("The same job with the t9k CLI (t9k pj describe ddp -p demo)")
	out.WriteString(check("t9k pj describe ddp")(runT9k(ctx, c.Kubeconfig(), "pj", "describe", "ddp", "-p", "demo")))

	section("Queue and PodGroup (kubectl get queues; kubectl -n demo get podgroups)")
	out.WriteString(kubectl("get", "queues"))
	out.WriteString("\n")
	out.WriteString(kubectl("-n", "demo", "get", "podgroups"))
	section("The Queue's status (kubectl get queue demo -o jsonpath={.status})")
	out.WriteString(check("the status of Queue demo")(indentJSON(kubectl("get", "queue", "demo", "-o", "jsonpath={.status}"))))
	section("The PodGroup's status (kubectl -n demo get podgroup ddp -o jsonpath={.status})")
	out.WriteString(check("the status of PodGroup ddp")(indentJSON(kubectl("-n", "demo", "get", "podgroup", "ddp", "-o", "jsonpath={.status}"))))
	section("Who placed the job's pods (kubectl -n demo get pods -l " + jobs.JobSelector("ddp") + " -o custom-columns=...)")
	out.WriteString(kubectl("-n", "demo", "get", "pods", "-l", jobs.JobSelector("ddp"),
		"-o", "custom-columns=NAME:.metadata.name,SCHEDULER:.spec.schedulerName,PODGROUP:.metadata.labels.scheduler\\.tensorstack\\.dev/group-name,NODE:.spec.nodeName,STATUS:.status.phase"))

	section("Workflow (kubectl -n demo get workflowruns)")
	out.WriteString(kubectl("-n", "demo", "get", "workflowruns"))
	section("The DAG's nodes and results (kubectl -n demo get workflowrun report -o jsonpath={.status.nodes})")
	out.WriteString(check("the nodes of WorkflowRun report")(indentJSON(kubectl("-n", "demo", "get", "workflowrun", "report", "-o", "jsonpath={.status.nodes}"))))
	out.WriteString(check("the results of WorkflowRun report")(indentJSON(kubectl("-n", "demo", "get", "workflowrun", "report", "-o", "jsonpath={.status.results}"))))
	section("Written by the workflow into the StorageShim volume, read back through S3")
	out.WriteString(check("read-back of dataset/report.txt")(readBack(ctx, c, demoBucket, "dataset/report.txt", 60*time.Second)))

	section("Notebook (kubectl -n demo get notebooks)")
	out.WriteString(kubectl("-n", "demo", "get", "notebooks"))
	section("Its URL and status (kubectl -n demo get notebook tutorial -o jsonpath={.status.url} / {.status})")
	out.WriteString(kubectl("-n", "demo", "get", "notebook", "tutorial", "-o", "jsonpath={.status.url}"))
	out.WriteString("\n")
	out.WriteString(check("the status of Notebook tutorial")(indentJSON(kubectl("-n", "demo", "get", "notebook", "tutorial", "-o", "jsonpath={.status}"))))
	nbPod := strings.TrimSpace(kubectl("-n", "demo", "get", "notebook", "tutorial", "-o", "jsonpath={.status.pod.reference.name}"))
	nbIP := strings.TrimSpace(kubectl("-n", "demo", "get", "pod", nbPod, "-o", "jsonpath={.status.podIP}"))
	nbStatus := fmt.Sprintf("http://%s:8080/t9k/notebooks/projects/demo/name/tutorial/api/status", nbIP)
	// The host is not the pod's loopback: the sidecar wants the Notebook's
	// access token, from its Secret.
	nbUID := strings.TrimSpace(kubectl("-n", "demo", "get", "notebook", "tutorial", "-o", "jsonpath={.metadata.uid}"))
	nbToken, err := base64.StdEncoding.DecodeString(strings.TrimSpace(kubectl("-n", "demo", "get", "secret",
		interactive.AccessSecretName(notebook.ObjectName(types.UID(nbUID))), "-o", "jsonpath={.data."+activity.AccessTokenKey+"}")))
	if err != nil {
		problems = append(problems, fmt.Errorf("the access token of Notebook tutorial: %w", err))
	}
	section("Jupyter through the activity sidecar, from the host, with the Notebook's access token (GET " + nbStatus + ")")
	out.WriteString(check("Jupyter's status")(getProbe(ctx, nbStatus, string(nbToken))))

	section("Serving (kubectl -n demo get simplemlservices)")
	out.WriteString(kubectl("-n", "demo", "get", "simplemlservices"))
	section("Its status (kubectl -n demo get simplemlservice linear -o jsonpath={.status})")
	out.WriteString(check("the status of SimpleMLService linear")(indentJSON(kubectl("-n", "demo", "get", "simplemlservice", "linear", "-o", "jsonpath={.status}"))))
	modelIP := strings.TrimSpace(kubectl("-n", "demo", "get", "pods", "-l", simple.LabelKey+"=linear",
		"--field-selector=status.phase=Running", "-o", "jsonpath={.items[0].status.podIP}"))
	predictURL := fmt.Sprintf("http://%s:8080/v1/models/linear:predict", modelIP)
	section("A prediction of the model downloaded from s3://demo/models/linear/, from the host (POST " + predictURL + " " + demoInstances + ")")
	out.WriteString(check("the prediction of SimpleMLService linear")(postJSON(ctx, predictURL, demoInstances)))

	section("Metrics")
	ip := strings.TrimSpace(kubectl("-n", cluster.Namespace, "get", "pods", "-l", "app.kubernetes.io/name=node-agent",
		"-o", "jsonpath={.items[0].status.podIP}"))
	url := fmt.Sprintf("http://%s:9400/metrics", ip)
	fmt.Fprintf(&out, "node agent: %s (dcgm-exporter series with pod, namespace and container labels), for example:\n", url)
	out.WriteString(check("node agent metrics of pod train")(metricsFor(ctx, url, `pod="train"`, 3)))
	fmt.Fprintf(&out, "S3 endpoint: %s\n", cluster.S3Endpoint)

	section("In a browser: the Notebook through the gateway (its certificate is the local cluster CA's)")
	password, err := c.DemoPassword()
	if err != nil {
		problems = append(problems, err)
	}
	nbPath := notebook.URLPrefix("demo", "tutorial")
	fmt.Fprintf(&out, "open %s%s\nlog in as %s, password %s\n", cluster.GatewayURL, nbPath, cluster.DemoUser, password)
	out.WriteString(check("the Notebook through the gateway as " + cluster.DemoUser)(openAsDemoUser(ctx, password, nbPath+"api/status")))
	consolePath := console.BuildPrefix + "projects/demo/overview"
	fmt.Fprintf(&out, "the Build Console, with the same login: %s%s\n", cluster.GatewayURL, consolePath)
	out.WriteString(check("the Build Console as " + cluster.DemoUser)(openConsole(ctx, password, consolePath)))
	fmt.Fprintf(&out, "\nkubectl: export KUBECONFIG=%s\n", c.Kubeconfig())
	out.WriteString("t9k (make build-t9k; bin/t9k, with the same KUBECONFIG), for example:\n" +
		"  t9k pj get -p demo\n  t9k pj logs ddp --type=master -p demo\n  t9k nb get -p demo\n  t9k queue get\n  t9k wr describe report -p demo\n" +
		"or as the demo user, through the gateway (no kubeconfig; the gateway's certificate is self-signed):\n" +
		"  t9k config auth " + cluster.GatewayURL + " -u " + cluster.DemoUser + " --insecure-skip-tls-verify\n" +
		"  KUBECONFIG= t9k nb get -p demo\n")
	out.WriteString("Stop with: make cluster-down\n")
	if _, err := w.Write(out.Bytes()); err != nil {
		return err
	}
	if len(problems) > 0 {
		return fmt.Errorf("the demo report is incomplete: %w", errors.Join(problems...))
	}
	return nil
}

// indentJSON indents a JSON document for reading.
func indentJSON(doc string) (string, error) {
	var b bytes.Buffer
	if err := json.Indent(&b, []byte(doc), "", "  "); err != nil {
		return "", err
	}
	return b.String() + "\n", nil
}

// allocatable cuts the Allocatable block out of kubectl describe node.
func allocatable(describe string) string {
	var b strings.Builder
	in := false
	for _, line := range strings.Split(describe, "\n") {
		switch {
		case strings.HasPrefix(line, "Allocatable:"):
			in = true
		case in && !strings.HasPrefix(line, " "):
			return b.String()
		}
		if in {
			b.WriteString(line + "\n")
		}
	}
	return b.String()
}

// readBack reads an object, waiting up to timeout for it to appear (the
// FUSE mounter uploads a closed file in the background).
func readBack(ctx context.Context, c *cluster.Cluster, bucket, key string, timeout time.Duration) (string, error) {
	s3, err := c.S3(ctx)
	if err != nil {
		return "", err
	}
	client, err := s3.Client()
	if err != nil {
		return "", err
	}
	deadline := time.Now().Add(timeout)
	for {
		obj, err := client.GetObject(ctx, bucket, key, minio.GetObjectOptions{})
		if err == nil {
			var b bytes.Buffer
			_, err = b.ReadFrom(obj)
			obj.Close()
			if err == nil {
				return fmt.Sprintf("s3://%s/%s: %s", bucket, key, b.String()), nil
			}
		}
		if time.Now().After(deadline) {
			return "", fmt.Errorf("s3://%s/%s: %w", bucket, key, err)
		}
		time.Sleep(time.Second)
	}
}

// metricsFor returns up to n lines of the metrics at url that contain match.
func metricsFor(ctx context.Context, url, match string, n int) (string, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return "", err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	var b strings.Builder
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() && n > 0 {
		if line := sc.Text(); strings.Contains(line, match) && !strings.HasPrefix(line, "#") {
			b.WriteString("  " + line + "\n")
			n--
		}
	}
	return b.String(), sc.Err()
}

// listTree lists the files under dir with their sizes.
func listTree(dir string) (string, error) {
	var b strings.Builder
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() {
			info, err := d.Info()
			if err != nil {
				return err
			}
			rel, _ := filepath.Rel(dir, p)
			fmt.Fprintf(&b, "%8d  %s\n", info.Size(), rel)
		}
		return nil
	})
	return b.String(), err
}

// getProbe returns the body of a GET of url sent with the workload's access
// token and the activity sidecar's probe header, so that reading it is not
// the notebook's activity.
func getProbe(ctx context.Context, url, token string) (string, error) {
	return doJSON(ctx, http.MethodGet, url, "", http.Header{activity.ProbeHeader: {"1"}, "Authorization": {"Bearer " + token}})
}

// demoInstances is the body of the demo's prediction: with the model's
// weights 1, 2, 3 and bias 0.5 the answer is 6.5 and 3.5.
const demoInstances = `{"instances": [[1, 1, 1], [0, 0, 1]]}`

// postJSON POSTs body to url and returns the indented answer, which must
// be 200.
func postJSON(ctx context.Context, url, body string) (string, error) {
	return doJSON(ctx, http.MethodPost, url, body, http.Header{"Content-Type": {"application/json"}})
}

// doJSON sends a request with body and header, and returns the indented
// JSON answer, which must be 200, within 30 s.
func doJSON(ctx context.Context, method, url, body string, header http.Header) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, method, url, strings.NewReader(body))
	if err != nil {
		return "", err
	}
	for k, v := range header {
		req.Header[k] = v
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return "", err
	}
	if resp.StatusCode != http.StatusOK {
		return "", fmt.Errorf("%s: %s", resp.Status, b)
	}
	return indentJSON(string(b))
}

// runT9k runs the t9k command line in-process with the kubeconfig and
// returns its output.
func runT9k(ctx context.Context, kubeconfig string, args ...string) (string, error) {
	var out bytes.Buffer
	root := t9kcli.NewRoot(genericiooptions.IOStreams{In: strings.NewReader(""), Out: &out, ErrOut: &out})
	root.SetArgs(append(args, "--kubeconfig="+kubeconfig))
	err := root.ExecuteContext(ctx)
	return out.String(), err
}
