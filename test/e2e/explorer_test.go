//go:build e2e

package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"net/http"
	"slices"
	"strconv"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client"

	tensorstackv1beta1 "github.com/accelstack/accelstack/api/tensorstack/v1beta1"
	tensorstackv1beta2 "github.com/accelstack/accelstack/api/tensorstack/v1beta2"
	"github.com/accelstack/accelstack/pkg/activity"
	"github.com/accelstack/accelstack/pkg/explorer"
	"github.com/accelstack/accelstack/pkg/interactive"
)

// TestExplorerListsShimFile writes a file into a bucket through a
// StorageShim PVC mounted by csi-s3, opens an Explorer on that PVC, and
// lists the file through each component's activity sidecar: the file
// browser's REST API under its URL prefix, and the folder code-server
// opens. The local cluster runs the stand-ins of test/cluster/standin for
// File Browser and code-server, which refuse any command line but the one
// the controller writes.
func TestExplorerListsShimFile(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 6*time.Minute)
	t.Cleanup(cancel)
	c := crClient(t)
	ns := newNamespace(t)
	s3, bucket := newBucket(t, nil)
	createS3Secret(t, ns)
	shim := &tensorstackv1beta2.StorageShim{
		ObjectMeta: metav1.ObjectMeta{Name: "data", Namespace: ns},
		Spec: tensorstackv1beta2.StorageShimSpec{Type: tensorstackv1beta2.StorageShimTypeS3, S3: &tensorstackv1beta2.S3{
			URI: "s3://" + bucket + "/work", SecretRef: corev1.LocalObjectReference{Name: "s3"}}},
	}
	if err := c.Create(ctx, shim); err != nil {
		t.Fatal(err)
	}
	waitShimReady(t, c, ns, shim.Name)
	createPod(t, ns, withVolume(shellPod("writer", "echo hello > /data/from-pod.txt", nil), shim.Name))
	waitPod(t, ns, "writer", "Succeeded", succeeded)
	waitObject(t, s3, bucket, "work/from-pod.txt", "hello\n")

	ex := &tensorstackv1beta1.Explorer{
		ObjectMeta: metav1.ObjectMeta{Name: "files", Namespace: ns},
		Spec:       tensorstackv1beta1.ExplorerSpec{StorageType: tensorstackv1beta1.StorageTypePVC, StorageName: shim.Name},
	}
	if err := c.Create(ctx, ex); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	ex = waitExplorerRunning(ctx, t, c, ex)
	t.Logf("Explorer running after %s", round(time.Since(start)))
	for _, comp := range explorer.Components {
		if got, want := componentStatus(ex, comp).URL, explorer.URL("", ns, ex.Name, comp); got != want {
			t.Errorf("%s url %q, want %q", comp, got, want)
		}
	}

	// No kube-proxy: the host reaches each pod's sidecar directly, by its
	// address, as a pod of an admitted namespace would: with the
	// component's access token, and refused without it.
	sidecar := func(comp explorer.Component) string {
		return "http://" + explorerPodIP(ctx, t, ex, comp) + ":" + strconv.Itoa(activity.HTTPPort)
	}
	token := func(comp explorer.Component) http.Header {
		return bearer(accessToken(ctx, t, ns, explorer.ObjectName(ex.Name, comp)))
	}
	for _, comp := range explorer.Components {
		if code := statusOf(ctx, t, sidecar(comp)+"/", nil); code != http.StatusUnauthorized {
			t.Errorf("%s without the access token: %d, want 401", comp, code)
		}
	}
	// Pods: only those of the platform's namespaces reach the sidecars,
	// and get 401 without the token.
	checkExplorerNetworkPolicy(ctx, t, ex)
	type item struct {
		Name  string `json:"name"`
		IsDir bool   `json:"isDir"`
		Size  int64  `json:"size"`
	}
	var listing struct {
		Items []item `json:"items"`
	}
	getJSON(ctx, t, sidecar(explorer.FileBrowser)+explorer.URLPrefix(ns, ex.Name, explorer.FileBrowser)+"api/resources/", token(explorer.FileBrowser), &listing)
	i := slices.IndexFunc(listing.Items, func(it item) bool { return it.Name == "from-pod.txt" })
	if i < 0 || listing.Items[i].IsDir || listing.Items[i].Size != int64(len("hello\n")) {
		t.Errorf("the file browser lists %+v, want from-pod.txt of %d bytes", listing.Items, len("hello\n"))
	}
	var folder struct {
		Folder  string   `json:"folder"`
		Entries []string `json:"entries"`
	}
	getJSON(ctx, t, sidecar(explorer.CodeServer)+"/", token(explorer.CodeServer), &folder)
	if folder.Folder != explorer.MountPath || !slices.Contains(folder.Entries, "from-pod.txt") {
		t.Errorf("code-server opened %q with %v, want %s with from-pod.txt", folder.Folder, folder.Entries, explorer.MountPath)
	}
}

// waitExplorerRunning waits until both components of ex run and answer
// through their sidecars' readiness.
func waitExplorerRunning(ctx context.Context, t *testing.T, c client.Client, ex *tensorstackv1beta1.Explorer) *tensorstackv1beta1.Explorer {
	t.Helper()
	got := &tensorstackv1beta1.Explorer{}
	err := wait.PollUntilContextCancel(ctx, time.Second, true, func(ctx context.Context) (bool, error) {
		if err := c.Get(ctx, client.ObjectKeyFromObject(ex), got); err != nil {
			return false, nil //nolint:nilerr // retried until the timeout
		}
		for _, comp := range explorer.Components {
			if s := componentStatus(got, comp); s == nil || s.Phase != tensorstackv1beta1.ResourceRunning {
				return false, nil
			}
		}
		return true, nil
	})
	if err != nil {
		status, _ := json.MarshalIndent(got.Status, "", "  ")
		t.Fatalf("Explorer %s never ran both components: %v\nstatus %s", ex.Name, err, status)
	}
	return got
}

// componentStatus returns the status of the component comp of ex.
func componentStatus(ex *tensorstackv1beta1.Explorer, comp explorer.Component) *tensorstackv1beta1.ResourceStatus {
	if comp == explorer.FileBrowser {
		return ex.Status.FileBrowser
	}
	return ex.Status.CodeServer
}

// explorerPodIP returns the IP of the running pod of the component comp
// of ex.
func explorerPodIP(ctx context.Context, t *testing.T, ex *tensorstackv1beta1.Explorer, comp explorer.Component) string {
	t.Helper()
	pods, err := kube.CoreV1().Pods(ex.Namespace).List(ctx, metav1.ListOptions{
		LabelSelector: explorer.LabelKey + "=" + explorer.ObjectName(ex.Name, comp)})
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range pods.Items {
		if running(&p) && p.Status.PodIP != "" {
			return p.Status.PodIP
		}
	}
	t.Fatalf("no running pod of %s %s (%d pods)", ex.Name, comp, len(pods.Items))
	return ""
}

// getJSON GETs url with header until it answers 200, within ctx, and
// decodes the body into v.
func getJSON(ctx context.Context, t *testing.T, url string, header http.Header, v any) {
	t.Helper()
	var last string
	err := wait.PollUntilContextCancel(ctx, time.Second, true, func(ctx context.Context) (bool, error) {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		if err != nil {
			return false, err
		}
		maps.Copy(req.Header, header)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			last = err.Error()
			return false, nil
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
		if resp.StatusCode != http.StatusOK {
			last = fmt.Sprintf("%s: %s", resp.Status, body)
			return false, nil
		}
		return true, json.Unmarshal(body, v)
	})
	if err != nil {
		t.Fatalf("GET %s: %v (last answer %s)", url, err, last)
	}
}

// accessToken returns the token of the access Secret of the interactive
// workload child name of ns (a Notebook's, TensorBoard's or Explorer's),
// which its sidecar requires of a request that is not from the pod's
// loopback.
func accessToken(ctx context.Context, t *testing.T, ns, name string) string {
	t.Helper()
	secret, err := kube.CoreV1().Secrets(ns).Get(ctx, interactive.AccessSecretName(name), metav1.GetOptions{})
	if err != nil {
		t.Fatalf("reading the access Secret of %s: %v", name, err)
	}
	token := string(secret.Data[activity.AccessTokenKey])
	if token == "" {
		t.Fatalf("the access Secret of %s holds no token", name)
	}
	return token
}

// bearer is the header that carries token.
func bearer(token string) http.Header {
	return http.Header{"Authorization": {"Bearer " + token}}
}

// statusOf returns the status of a GET of url with header.
func statusOf(ctx context.Context, t *testing.T, url string, header http.Header) int {
	t.Helper()
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	maps.Copy(req.Header, header)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	resp.Body.Close()
	return resp.StatusCode
}
