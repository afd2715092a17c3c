package gateway

import (
	"context"
	"fmt"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	tensorstackv1beta1 "github.com/accelstack/accelstack/api/tensorstack/v1beta1"
	"github.com/accelstack/accelstack/pkg/console"
	"github.com/accelstack/accelstack/pkg/members"
	chromium "github.com/accelstack/accelstack/test/browser"
	"github.com/accelstack/accelstack/test/testutil"
)

// startConsole serves the consoles for the gateways of e.
func (e *env) startConsole(t *testing.T) {
	t.Helper()
	h, err := console.NewHandler(console.DefaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	e.console = httptest.NewServer(h)
	t.Cleanup(e.console.Close)
}

// consoleTests: erin, a member of team-a with the build scope, opens the
// Build Console through the gateway, logs in, lands on her project, sees
// its Notebook, creates one from the form, sees a change made elsewhere
// without reloading, is refused YAML of another project and a value the
// API server refuses (with its message), deletes what she made, and sees
// team-b's objects refused. The screenshots are docs/console.md's.
func consoleTests(t *testing.T, e *env, gw *httptest.Server) {
	ctx := context.Background()
	for _, p := range []string{"team-a", "team-b"} {
		project := &unstructured.Unstructured{}
		project.SetAPIVersion("tensorstack.dev/v1beta1")
		project.SetKind("Project")
		project.SetName(p)
		if err := e.c.Create(ctx, project); err != nil && !apierrors.IsAlreadyExists(err) {
			t.Fatal(err)
		}
	}
	if err := members.Set(ctx, e.c, "team-a", members.Member{Kind: "User", Name: "erin", Scopes: []members.Scope{members.Build}}); err != nil {
		t.Fatal(err)
	}
	base := gw.URL + console.BuildPrefix

	b := chromium.New(t)
	chromium.Login(b, t, base, "erin", "erin-pw", `section.overview .cards`)
	if got := chromium.TextOf(b, t, "#project-select"); !strings.Contains(got, "team-a (build)") || strings.Contains(got, "team-b") {
		t.Errorf("the project selector offers %q, want team-a with its build scope only", got)
	}
	if got := chromium.TextOf(b, t, "header .user"); got != "erin" {
		t.Errorf("the header shows the user %q", got)
	}
	chromium.Screenshot(b, t, "console-overview")

	chromium.Do(b, t, "the Notebook list", time.Minute,
		chromedp.Click(chromedp.CSS(`nav.side a[href$="/team-a/notebooks"]`)),
		chromedp.WaitVisible(chromedp.CSS(`tr[data-name="nb"]`)))

	chromium.Do(b, t, "creating a Notebook from the form", time.Minute,
		chromedp.Click(chromedp.CSS(`section.list a.button.primary`)),
		chromedp.WaitVisible(chromedp.CSS(`input[name="name"]`)),
		chromium.SetValue(`input[name="name"]`, "lab2"),
		chromium.SetValue(`input[name="image"]`, "jupyter:2"),
		chromium.SetValue(`input[name="cpu"]`, "2"))
	chromium.Screenshot(b, t, "console-create-notebook")
	chromium.Do(b, t, "submitting the form", time.Minute,
		chromedp.Click(chromedp.CSS(`button.create`)),
		chromedp.WaitVisible(chromedp.CSS(`section.detail table.info`)))
	var nb tensorstackv1beta1.Notebook
	if err := e.c.Get(ctx, client.ObjectKey{Namespace: "team-a", Name: "lab2"}, &nb); err != nil {
		t.Fatalf("the Notebook the form created: %v", err)
	}
	if c := nb.Spec.Template.Spec.Containers[0]; c.Image != "jupyter:2" || c.Resources.Limits.Cpu().String() != "2" {
		t.Errorf("the form created a Notebook of image %q, limits %v", c.Image, c.Resources.Limits)
	}
	chromium.Screenshot(b, t, "console-notebook-detail")

	// A change made elsewhere shows on the open list, by the list's watch
	// (a WebSocket through the gateway, which serves HTTP/1.1): the page
	// lists the Notebooks no second time.
	chromium.Do(b, t, "back to the list", time.Minute,
		chromedp.Click(chromedp.CSS(`nav.side a[href$="/team-a/notebooks"]`)),
		chromedp.WaitVisible(chromedp.CSS(`tr[data-name="lab2"]`)))
	lists := `performance.getEntriesByType('resource').filter(e => /\/namespaces\/team-a\/notebooks\?.*resourceVersion=0/.test(e.name)).length`
	listed, err := chromedp.Run(b, chromedp.Evaluate[int](lists))
	if err != nil {
		t.Fatal(err)
	}
	if err := e.c.Get(ctx, client.ObjectKey{Namespace: "team-a", Name: "nb"}, &nb); err != nil {
		t.Fatal(err)
	}
	nb.Status.Phase = "Running"
	if err := e.c.Status().Update(ctx, &nb); err != nil {
		t.Fatal(err)
	}
	chromium.Do(b, t, "the list following the Notebook's phase", time.Minute,
		chromedp.WaitVisible(chromedp.CSS(`tr[data-name="nb"] .phase.ok`)))
	if again, err := chromedp.Run(b, chromedp.Evaluate[int](lists)); err != nil || again != listed {
		t.Errorf("the page listed the Notebooks %d times before the change and %d after (%v): the change came by a list, not the watch", listed, again, err)
	}
	chromium.Screenshot(b, t, "console-notebooks")

	t.Run("YAML of another project is refused before it is sent", func(t *testing.T) {
		chromium.Do(b, t, "the YAML editor", time.Minute,
			chromedp.Navigate(base+"projects/team-a/notebooks/-/create"),
			chromedp.WaitVisible(chromedp.CSS(`section.create`)),
			chromedp.Click(chromedp.CSS(`button.to-yaml`)),
			chromedp.WaitVisible(chromedp.CSS(`textarea.yaml-editor`)),
			chromium.SetValue(`textarea.yaml-editor`, "apiVersion: tensorstack.dev/v1beta1\nkind: Notebook\nmetadata: {name: x, namespace: team-b}\nspec: {template: {spec: {containers: [{name: notebook, image: j}]}}}\n"),
			chromedp.Click(chromedp.CSS(`button.create`)),
			chromedp.WaitVisible(chromedp.CSS(`.submit-error .state.error`)))
		if got := chromium.TextOf(b, t, ".submit-error"); !strings.Contains(got, "this page creates in project team-a") {
			t.Errorf("the refusal says %q", got)
		}
	})
	t.Run("the API server's refusal names the field", func(t *testing.T) {
		chromium.Do(b, t, "a bad type", time.Minute,
			chromium.SetValue(`textarea.yaml-editor`, "apiVersion: tensorstack.dev/v1beta1\nkind: Notebook\nmetadata: {name: x}\nspec: {type: vscode, template: {spec: {containers: [{name: notebook, image: j}]}}}\n"),
			chromedp.Click(chromedp.CSS(`button.check`)),
			chromium.WaitTrue(`document.querySelector('.submit-error').innerText.includes('spec.type')`))
		chromium.Screenshot(b, t, "console-create-refused")
		if err := e.c.Get(ctx, client.ObjectKey{Namespace: "team-a", Name: "x"}, &nb); !apierrors.IsNotFound(err) {
			t.Errorf("the refused Notebook: %v", err)
		}
	})
	t.Run("delete", func(t *testing.T) {
		chromium.Do(b, t, "deleting lab2", time.Minute,
			chromedp.Navigate(base+"projects/team-a/notebooks"),
			chromedp.WaitVisible(chromedp.CSS(`tr[data-name="lab2"]`)),
			chromium.Eval(`window.confirm = () => true; true`),
			chromedp.Click(chromedp.CSS(`tr[data-name="lab2"] button.danger`)),
			chromedp.WaitNotPresent(chromedp.CSS(`tr[data-name="lab2"]`)))
		testutil.Poll(ctx, t, "lab2 deleted", func() (bool, string, error) {
			err := e.c.Get(ctx, client.ObjectKey{Namespace: "team-a", Name: "lab2"}, &tensorstackv1beta1.Notebook{})
			return apierrors.IsNotFound(err), "", client.IgnoreNotFound(err)
		})
	})
	t.Run("the forms of a volume, an S3 Secret, a StorageShim, a PyTorchTrainingJob, a DataCube and a Pod", func(t *testing.T) {
		create := func(what, kind string, steps ...chromedp.Action[chromedp.Void]) {
			t.Helper()
			open := []chromedp.Action[chromedp.Void]{
				chromedp.Navigate(base + "projects/team-a/" + kind + "/-/create"),
				chromedp.WaitVisible(chromedp.CSS(`input[name="name"]`)),
			}
			chromium.Do(b, t, what, time.Minute, append(append(open, steps...),
				chromedp.Click(chromedp.CSS(`button.create`)),
				chromedp.WaitVisible(chromedp.CSS(`section.detail table.info`)))...)
		}
		create("a volume", "persistentvolumeclaims",
			chromium.SetValue(`input[name="name"]`, "data"),
			chromium.SetValue(`input[name="size"]`, "2Gi"))
		var pvc corev1.PersistentVolumeClaim
		if err := e.c.Get(ctx, client.ObjectKey{Namespace: "team-a", Name: "data"}, &pvc); err != nil || pvc.Spec.Resources.Requests.Storage().String() != "2Gi" {
			t.Errorf("the volume the form made: %v %v", pvc.Spec.Resources.Requests, err)
		}

		chromium.Do(b, t, "the S3 Secret", time.Minute,
			chromedp.Navigate(base+"projects/team-a/secrets/-/create"),
			chromedp.WaitVisible(chromedp.CSS(`input[name="name"]`)),
			chromium.SetValue(`input[name="name"]`, "s3"),
			chromium.SetValue(`select[name="secretType"]`, "s3-cfg"),
			chromedp.WaitVisible(chromedp.CSS(`input[name="endpoint"]`)),
			chromium.SetValue(`input[name="endpoint"]`, "http://s3.example:9000"),
			chromium.SetValue(`input[name="accessKey"]`, "AKID"),
			chromium.SetValue(`input[name="secretKey"]`, "sekrit"),
			chromedp.Click(chromedp.CSS(`button.create`)),
			chromedp.WaitVisible(chromedp.CSS(`section.detail table.info`)))
		var secret corev1.Secret
		if err := e.c.Get(ctx, client.ObjectKey{Namespace: "team-a", Name: "s3"}, &secret); err != nil {
			t.Fatal(err)
		}
		if got := string(secret.Data[".s3cfg"]); secret.Labels["tensorstack.dev/resource"] != "s3-cfg" || !strings.Contains(got, "access_key = AKID\n") || !strings.Contains(got, "host_base = http://s3.example:9000\n") {
			t.Errorf("the Secret the form made: labels %v, .s3cfg %q", secret.Labels, got)
		}
		if strings.Contains(chromium.Text(b, t), "sekrit") {
			t.Error("the Secret's page shows its secret key")
		}

		create("a StorageShim", "storageshims",
			chromium.SetValue(`input[name="name"]`, "bucket"),
			chromium.SetValue(`input[name="uri"]`, "s3://models/team-a"),
			// The Secret comes by the page's watch; an option's value is its text.
			chromium.WaitTrue(`[...document.querySelector('select[name="secret"]').options].some(o => o.value === 's3')`),
			chromium.SetValue(`select[name="secret"]`, "s3"))
		shim := &unstructured.Unstructured{}
		shim.SetAPIVersion("tensorstack.dev/v1beta2")
		shim.SetKind("StorageShim")
		if err := e.c.Get(ctx, client.ObjectKey{Namespace: "team-a", Name: "bucket"}, shim); err != nil {
			t.Fatal(err)
		}
		if uri, _, _ := unstructured.NestedString(shim.Object, "spec", "s3", "uri"); uri != "s3://models/team-a" {
			t.Errorf("the StorageShim's URI: %q", uri)
		}
		if ref, _, _ := unstructured.NestedString(shim.Object, "spec", "s3", "secretRef", "name"); ref != "s3" {
			t.Errorf("the StorageShim's Secret: %q", ref)
		}

		create("a PyTorchTrainingJob", "pytorchtrainingjobs",
			chromium.SetValue(`input[name="name"]`, "ddp"),
			chromium.SetValue(`input[name="image"]`, "torch:1"),
			chromium.SetValue(`input[name="command"]`, "torchrun train.py"),
			chromium.SetValue(`input[name="workers"]`, "3"),
			chromium.SetValue(`input[name="gpu"]`, "1"))
		job := &unstructured.Unstructured{}
		job.SetAPIVersion("batch.tensorstack.dev/v1beta1")
		job.SetKind("PyTorchTrainingJob")
		if err := e.c.Get(ctx, client.ObjectKey{Namespace: "team-a", Name: "ddp"}, job); err != nil {
			t.Fatal(err)
		}
		specs, _, _ := unstructured.NestedSlice(job.Object, "spec", "replicaSpecs")
		if len(specs) != 2 {
			t.Fatalf("the job's replica specs: %v", specs)
		}
		for _, r := range specs {
			r := r.(map[string]any)
			ctr := r["template"].(map[string]any)["spec"].(map[string]any)["containers"].([]any)[0].(map[string]any)
			want := map[string]int64{"master": 1, "worker": 3}[r["type"].(string)]
			if r["replicas"] != want || ctr["image"] != "torch:1" || fmt.Sprint(ctr["command"]) != "[sh -c torchrun train.py]" ||
				fmt.Sprint(ctr["resources"]) != "map[limits:map[nvidia.com/gpu:1]]" {
				t.Errorf("replica spec %v", r)
			}
		}
		t.Run("a refused value shows next to its field", func(t *testing.T) {
			chromium.Do(b, t, "a volume with a bad name", time.Minute,
				chromedp.Navigate(base+"projects/team-a/persistentvolumeclaims/-/create"),
				chromedp.WaitVisible(chromedp.CSS(`input[name="name"]`)),
				chromium.SetValue(`input[name="name"]`, "Bad_Name"),
				chromedp.Click(chromedp.CSS(`button.check`)),
				chromedp.WaitVisible(chromedp.CSS(`.field-error[data-field="name"]`)))
			if got := chromium.TextOf(b, t, `label.invalid .field-error[data-field="name"]`); !strings.Contains(got, "RFC 1123") {
				t.Errorf("the name's error says %q, want the API server's message", got)
			}
			chromium.Screenshot(b, t, "console-field-error")
		})

		// A DataCube from S3 to the volume, then turned into an upload:
		// the credentials are references to an S3-env Secret's keys.
		s3env := &corev1.Secret{}
		s3env.Namespace, s3env.Name = "team-a", "s3env"
		s3env.Labels = map[string]string{"tensorstack.dev/resource": "s3-env"}
		s3env.StringData = map[string]string{"endpoint": "http://s3:9000", "accessKeyID": "a", "secretAccessKey": "s"}
		if err := e.c.Create(ctx, s3env); err != nil {
			t.Fatal(err)
		}
		create("a DataCube", "datacubes",
			chromium.SetValue(`input[name="name"]`, "fetch"),
			chromium.SetValue(`input[name="s3Uri"]`, "s3://models/llm/"),
			chromium.WaitTrue(`[...document.querySelector('select[name="s3Secret"]').options].some(o => o.value === 's3env')`),
			chromium.SetValue(`select[name="s3Secret"]`, "s3env"),
			chromium.WaitTrue(`[...document.querySelector('select[name="pvc"]').options].some(o => o.value === 'data')`),
			chromium.SetValue(`select[name="pvc"]`, "data"),
			chromium.SetValue(`input[name="subPath"]`, "llm"),
			chromium.SetValue(`select[name="direction"]`, "upload"))
		cube := &unstructured.Unstructured{}
		cube.SetAPIVersion("tensorstack.dev/v1beta1")
		cube.SetKind("DataCube")
		if err := e.c.Get(ctx, client.ObjectKey{Namespace: "team-a", Name: "fetch"}, cube); err != nil {
			t.Fatal(err)
		}
		source, _, _ := unstructured.NestedMap(cube.Object, "spec", "source")
		sink, _, _ := unstructured.NestedMap(cube.Object, "spec", "sink")
		if fmt.Sprint(source) != "map[pvc:map[name:data subPath:llm] type:pvc]" {
			t.Errorf("the DataCube's source: %v", source)
		}
		if want := "map[options:[map[name:s3-uri value:s3://models/llm/] " +
			"map[name:s3-endpoint valueFrom:map[secretKeyRef:map[key:endpoint name:s3env]]] " +
			"map[name:s3-access-key-id valueFrom:map[secretKeyRef:map[key:accessKeyID name:s3env]]] " +
			"map[name:s3-secret-access-key valueFrom:map[secretKeyRef:map[key:secretAccessKey name:s3env]]]] type:s3]"; fmt.Sprint(sink) != want {
			t.Errorf("the DataCube's sink:\n%v\nwant\n%s", sink, want)
		}

		create("a Pod", "pods",
			chromium.SetValue(`input[name="name"]`, "debug"),
			chromium.SetValue(`input[name="image"]`, "busybox:1"),
			chromium.SetValue(`input[name="cpu"]`, "1"))
		var pod corev1.Pod
		if err := e.c.Get(ctx, client.ObjectKey{Namespace: "team-a", Name: "debug"}, &pod); err != nil {
			t.Fatal(err)
		}
		if c := pod.Spec.Containers[0]; c.Image != "busybox:1" || fmt.Sprint(c.Command) != "[sh -c sleep infinity]" || c.Resources.Limits.Cpu().String() != "1" {
			t.Errorf("the Pod the form made: %+v", c)
		}
		// No kubelet runs here: the pod stays Pending, and its terminal
		// says why it cannot open (the end-to-end tier opens one).
		chromium.Do(b, t, "the Pod's terminal tab", time.Minute,
			chromedp.Navigate(base+"projects/team-a/pods/debug?tab=terminal"),
			chromium.WaitTrue(`document.body.innerText.includes('a terminal needs a running container')`))

		t.Run("import a file into the YAML editor", func(t *testing.T) {
			file := filepath.Join(t.TempDir(), "settings.yaml")
			if err := os.WriteFile(file, []byte("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: settings}\ndata: {lr: \"0.1\"}\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			chromium.Do(b, t, "importing settings.yaml", time.Minute,
				chromedp.Navigate(base+"projects/team-a/configmaps/-/create"),
				chromedp.WaitVisible(chromedp.CSS(`label.import`)),
				chromedp.SetUploadFiles(chromedp.CSS(`label.import input[type="file"]`), []string{file}),
				chromium.WaitTrue(`(document.querySelector('textarea.yaml-editor') || {}).value?.includes('name: settings')`),
				chromedp.Click(chromedp.CSS(`button.create`)),
				chromedp.WaitVisible(chromedp.CSS(`section.detail table.info`)))
			var cm corev1.ConfigMap
			if err := e.c.Get(ctx, client.ObjectKey{Namespace: "team-a", Name: "settings"}, &cm); err != nil || cm.Data["lr"] != "0.1" {
				t.Errorf("the imported ConfigMap: %v %v", cm.Data, err)
			}
		})

		chromium.Do(b, t, "the Job list", time.Minute,
			chromedp.Navigate(base+"projects/team-a/jobs"),
			chromedp.WaitVisible(chromedp.CSS(`tr[data-name="ddp"]`)))
		if got := chromium.TextOf(b, t, `tr[data-name="ddp"]`); !strings.Contains(got, "PyTorchTrainingJob") {
			t.Errorf("the Job list's row: %q", got)
		}
		chromium.Screenshot(b, t, "console-jobs")
	})
	t.Run("another project's objects are refused", func(t *testing.T) {
		chromium.Do(b, t, "team-b's Notebooks", time.Minute,
			chromedp.Navigate(base+"projects/team-b/notebooks"),
			chromedp.WaitVisible(chromedp.CSS(`.state.error`)))
		if got := chromium.TextOf(b, t, ".state.error"); !strings.Contains(got, "forbidden") {
			t.Errorf("team-b's list says %q, want the API server's forbidden", got)
		}
		if strings.Contains(chromium.Text(b, t), "nb") && strings.Contains(chromium.Text(b, t), "jupyter") {
			t.Error("team-b's Notebook shows")
		}
	})
}
