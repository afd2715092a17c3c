package beamjob

import (
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
)

func TestNewestJobID(t *testing.T) {
	for _, tc := range []struct {
		body, want string
		err        bool
	}{
		{`{"jobs":[]}`, "", false},
		{`{"jobs":[{"jid":"a","state":"FAILED","start-time":100},{"jid":"b","state":"RUNNING","start-time":200}]}`, "b", false},
		{`{"jobs":[{"jid":"b","start-time":200},{"jid":"a","start-time":100}]}`, "b", false},
		{`{"jobs":[{"jid":"a","start-time":-1}]}`, "a", false},
		{`<html>`, "", true},
	} {
		got, err := newestJobID([]byte(tc.body))
		if got != tc.want || (err != nil) != tc.err {
			t.Errorf("%s: %q, %v; want %q, error %t", tc.body, got, err, tc.want, tc.err)
		}
	}
}

// jobManagerPod is a running job manager pod of cluster at ip, its REST API
// on port.
func jobManagerPod(name, cluster, ip string, port int32) *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name, Labels: map[string]string{"cluster": cluster, "component": "jobmanager"}},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "jobmanager",
			Ports: []corev1.ContainerPort{{Name: "rpc", ContainerPort: 6123}, {Name: jobManagerPortName, ContainerPort: port}}}}},
		Status: corev1.PodStatus{Phase: corev1.PodRunning, PodIP: ip},
	}
}

// TestRESTAddress: only a running pod off the host's network, with a port
// named ui, is asked.
func TestRESTAddress(t *testing.T) {
	ok := jobManagerPod("jm", "c", "10.0.0.7", 8081)
	if got, found := restAddress(ok); !found || got != "10.0.0.7:8081" {
		t.Errorf("restAddress = %q, %t; want 10.0.0.7:8081", got, found)
	}
	for name, mutate := range map[string]func(*corev1.Pod){
		"host network": func(p *corev1.Pod) { p.Spec.HostNetwork = true },
		"pending":      func(p *corev1.Pod) { p.Status.Phase = corev1.PodPending },
		"no address":   func(p *corev1.Pod) { p.Status.PodIP = "" },
		"no ui port":   func(p *corev1.Pod) { p.Spec.Containers[0].Ports = p.Spec.Containers[0].Ports[:1] },
		"terminating":  func(p *corev1.Pod) { now := metav1.Now(); p.DeletionTimestamp = &now },
	} {
		p := ok.DeepCopy()
		mutate(p)
		if got, found := restAddress(p); found {
			t.Errorf("%s: restAddress = %q, want none", name, got)
		}
	}
}

// TestPodJobIDs: the job ID is read from the job manager pod's own
// address, and a cluster without a usable pod is an error.
func TestPodJobIDs(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/jobs/overview" {
			http.NotFound(w, r)
			return
		}
		fmt.Fprint(w, `{"jobs":[{"jid":"feed","start-time":1}]}`)
	}))
	defer srv.Close()
	host, port, err := net.SplitHostPort(srv.Listener.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	p, _ := strconv.Atoi(port)
	hostNet := jobManagerPod("other", "other", host, int32(p))
	hostNet.Spec.HostNetwork = true
	c := fake.NewClientBuilder().WithObjects(jobManagerPod("jm", "flink", host, int32(p)), hostNet).Build()
	r := newPodJobIDs(c)
	got, err := r.JobID(t.Context(), "ns", "flink")
	if err != nil || got != "feed" {
		t.Errorf("JobID = %q, %v; want feed", got, err)
	}
	if got, err := r.JobID(t.Context(), "ns", "other"); err == nil {
		t.Errorf("JobID of a cluster whose job manager is on the host's network = %q, want an error", got)
	}
	if got, err := r.JobID(t.Context(), "ns", "none"); err == nil {
		t.Errorf("JobID of a cluster without a job manager = %q, want an error", got)
	}
}
