package jobs

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/util/retry"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	"github.com/accelstack/accelstack/pkg/jobs/beamjob"
	"github.com/accelstack/accelstack/test/harness"
)

// installFlinkClusterCRD installs flink-operator's FlinkCluster CRD
// (testdata/crds), as a cluster with flink-operator has it, before the
// controllers start.
func installFlinkClusterCRD(t *testing.T, cp *harness.ControlPlane) {
	t.Helper()
	if _, err := envtest.InstallCRDs(cp.Config, envtest.CRDInstallOptions{
		Paths: []string{filepath.Join("testdata", "crds")}, ErrorIfPathMissing: true,
	}); err != nil {
		t.Fatalf("installing the FlinkCluster CRD: %v", err)
	}
}

// flinkJobManager is a job manager's REST API answering GET /jobs/overview
// with one job, listening on an address of this host (not a loopback one)
// that the job manager pod's status names, as a pod's address.
type flinkJobManager struct {
	ip    string
	port  int32
	jobID string
}

// startFlinkJobManager starts a job manager REST API, or returns nil where
// the host has no address but loopback ones.
func startFlinkJobManager(t *testing.T, jobID string) *flinkJobManager {
	t.Helper()
	ip := hostIP()
	if ip == "" {
		return nil
	}
	l, err := net.Listen("tcp", net.JoinHostPort(ip, "0"))
	if err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /jobs/overview", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"jobs":[{"jid":%q,"name":"wordcount","state":"RUNNING","start-time":1610937391000,"end-time":-1}]}`, jobID)
	})
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go func() {
		if err := srv.Serve(l); err != nil && !errors.Is(err, http.ErrServerClosed) {
			t.Errorf("job manager: %v", err)
		}
	}()
	t.Cleanup(func() { _ = srv.Close() })
	return &flinkJobManager{ip: ip, port: int32(l.Addr().(*net.TCPAddr).Port), jobID: jobID}
}

// hostIP returns an IPv4 address of an interface of this host that is up
// and not loopback, "" where there is none.
func hostIP() string {
	ifaces, err := net.Interfaces()
	if err != nil {
		return ""
	}
	for _, i := range ifaces {
		if i.Flags&net.FlagUp == 0 || i.Flags&net.FlagLoopback != 0 {
			continue
		}
		addrs, _ := i.Addrs()
		for _, a := range addrs {
			if n, ok := a.(*net.IPNet); ok && n.IP.To4() != nil && n.IP.IsGlobalUnicast() {
				return n.IP.String()
			}
		}
	}
	return ""
}

// flinkCluster gets the FlinkCluster of a BeamJob; nil when there is none.
func (e *env) flinkCluster(ctx context.Context, t *testing.T, ns, job string) *unstructured.Unstructured {
	t.Helper()
	fc := &unstructured.Unstructured{}
	fc.SetGroupVersionKind(beamjob.FlinkClusterGVK)
	err := e.c.Get(ctx, client.ObjectKey{Namespace: ns, Name: beamjob.ClusterName(job)}, fc)
	if client.IgnoreNotFound(err) != nil {
		t.Fatal(err)
	}
	if err != nil {
		return nil
	}
	return fc
}

// setClusterState writes the FlinkCluster's status as flink-operator does:
// the state, and the job and task managers' components.
func (e *env) setClusterState(ctx context.Context, t *testing.T, fc *unstructured.Unstructured, state string) {
	t.Helper()
	name := fc.GetName()
	tm, _, _ := unstructured.NestedInt64(fc.Object, "spec", "taskManager", "replicas")
	ready, compState := int64(0), "NotReady"
	if state == beamjob.ClusterStateRunning {
		ready, compState = tm, "Ready"
	}
	status := map[string]any{
		"state": state,
		"components": map[string]any{
			"configMap":         map[string]any{"name": name + "-configmap", "state": "Ready"},
			"jobManager":        map[string]any{"name": name + "-jobmanager", "state": compState, "replicas": int64(1), "readyReplicas": min(ready, 1), "ready": fmt.Sprintf("%d/1", min(ready, 1))},
			"jobManagerService": map[string]any{"name": name + "-jobmanager", "state": "Ready"},
			"taskManager": map[string]any{"name": name + "-taskmanager", "state": compState, "replicas": tm, "readyReplicas": ready,
				"ready": fmt.Sprintf("%d/%d", ready, tm), "selector": "app=flink,cluster=" + name + ",component=taskmanager"},
		},
	}
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		if err := e.c.Get(ctx, client.ObjectKeyFromObject(fc), fc); err != nil {
			return err
		}
		fc.Object["status"] = status
		return e.c.Status().Update(ctx, fc)
	})
	if err != nil {
		t.Fatalf("setting FlinkCluster %s %s: %v", name, state, err)
	}
}

// startFlinkPods plays flink-operator and the kubelet for a FlinkCluster:
// the job manager pod <cluster>-jobmanager-0 and task manager pods
// <cluster>-taskmanager-<i>, labelled as the operator labels them (its
// labels and the spec's podLabels), all Running; the job manager's Service
// and, standing for the endpoint controller, its EndpointSlice, which
// lead to jm where it is not nil.
func (e *env) startFlinkPods(ctx context.Context, t *testing.T, fc *unstructured.Unstructured, jm *flinkJobManager) {
	t.Helper()
	name, ns := fc.GetName(), fc.GetNamespace()
	image, _, _ := unstructured.NestedString(fc.Object, "spec", "image", "name")
	tm, _, _ := unstructured.NestedInt64(fc.Object, "spec", "taskManager", "replicas")
	pod := func(component string, i int64) *corev1.Pod {
		labels := map[string]string{"app": "flink", "cluster": name, "component": component}
		extra, _, _ := unstructured.NestedStringMap(fc.Object, "spec", component[:len(component)-len("manager")]+"Manager", "podLabels")
		for k, v := range extra {
			labels[k] = v
		}
		c := corev1.Container{Name: component, Image: image, Args: []string{component}}
		if component == "jobmanager" {
			c.Ports = []corev1.ContainerPort{{Name: "ui", ContainerPort: 8081}}
			if jm != nil {
				c.Ports[0].ContainerPort = jm.port
			}
		}
		return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name + "-" + component + "-" + strconv.FormatInt(i, 10), Labels: labels},
			Spec: corev1.PodSpec{Containers: []corev1.Container{c}}}
	}
	pods := []*corev1.Pod{pod("jobmanager", 0)}
	for i := range tm {
		pods = append(pods, pod("taskmanager", i))
	}
	for _, p := range pods {
		if err := e.c.Create(ctx, p); err != nil {
			t.Fatal(err)
		}
		e.setPod(ctx, t, p, corev1.PodRunning, nil)
	}
	svc := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: beamjob.JobManagerService(name)},
		Spec: corev1.ServiceSpec{Selector: map[string]string{"app": "flink", "cluster": name, "component": "jobmanager"},
			Ports: []corev1.ServicePort{{Name: "ui", Port: 8081, TargetPort: intstr.FromString("ui")}}}}
	if err := e.c.Create(ctx, svc); err != nil {
		t.Fatal(err)
	}
	if jm == nil {
		return
	}
	p := pods[0]
	if err := e.c.Get(ctx, client.ObjectKeyFromObject(p), p); err != nil {
		t.Fatal(err)
	}
	p.Status.PodIP, p.Status.PodIPs = jm.ip, []corev1.PodIP{{IP: jm.ip}}
	if err := e.c.Status().Update(ctx, p); err != nil {
		t.Fatal(err)
	}
	slice := &discoveryv1.EndpointSlice{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: svc.Name + "-test", Labels: map[string]string{
			discoveryv1.LabelServiceName: svc.Name, discoveryv1.LabelManagedBy: "accelstack.test"}},
		AddressType: discoveryv1.AddressTypeIPv4,
		Endpoints: []discoveryv1.Endpoint{{Addresses: []string{jm.ip}, Conditions: discoveryv1.EndpointConditions{Ready: ptr.To(true)},
			TargetRef: &corev1.ObjectReference{Kind: "Pod", Namespace: ns, Name: p.Name, UID: p.UID}}},
		Ports: []discoveryv1.EndpointPort{{Name: ptr.To("ui"), Port: ptr.To(jm.port), Protocol: ptr.To(corev1.ProtocolTCP)}},
	}
	if err := e.c.Create(ctx, slice); err != nil {
		t.Fatal(err)
	}
}
