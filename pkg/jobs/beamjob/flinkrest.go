package beamjob

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"time"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// jobIDReader returns the ID of the Flink job a session cluster runs, ""
// while it runs none.
type jobIDReader interface {
	JobID(ctx context.Context, namespace, cluster string) (string, error)
}

// Limits of one question to a job manager.
const (
	// restTimeout bounds one request to a job manager.
	restTimeout = 5 * time.Second
	// maxOverviewBytes bounds the jobs overview read from a job manager.
	maxOverviewBytes = 1 << 20
)

// jobManagerPortName is the name of the job manager container's REST port,
// as flink-operator names it.
const jobManagerPortName = "ui"

// podJobIDs asks the job manager's REST API (GET /jobs/overview) at its
// pod's address: the running pod labelled as the cluster's job manager
// (cluster=<cluster>, component=jobmanager, as flink-operator labels it),
// on its container port named ui. The request goes from the controllers
// to a pod of the job's own namespace, never through the API server, and
// never to a pod on the host's network.
type podJobIDs struct {
	// reader lists the job manager's pods.
	reader client.Reader
	// http sends the request.
	http *http.Client
}

// newPodJobIDs returns a podJobIDs listing pods with reader.
func newPodJobIDs(reader client.Reader) podJobIDs {
	return podJobIDs{reader: reader, http: &http.Client{
		Timeout: restTimeout,
		// The job manager is in the cluster: no proxy from the environment,
		// and no redirect to anywhere else.
		Transport:     &http.Transport{Proxy: nil},
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}}
}

// JobID returns the newest job of the cluster.
func (r podJobIDs) JobID(ctx context.Context, namespace, cluster string) (string, error) {
	addr, err := r.jobManagerAddress(ctx, namespace, cluster)
	if err != nil {
		return "", err
	}
	ctx, cancel := context.WithTimeout(ctx, restTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+addr+"/jobs/overview", nil)
	if err != nil {
		return "", fmt.Errorf("asking the job manager of %s for its jobs: %w", cluster, err)
	}
	resp, err := r.http.Do(req)
	if err != nil {
		return "", fmt.Errorf("asking the job manager of %s for its jobs: %w", cluster, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return "", fmt.Errorf("the job manager of %s answered %s", cluster, resp.Status)
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxOverviewBytes))
	if err != nil {
		return "", fmt.Errorf("reading the job manager's jobs overview: %w", err)
	}
	return newestJobID(body)
}

// jobManagerAddress returns host:port of the REST API of the cluster's
// running job manager pod.
func (r podJobIDs) jobManagerAddress(ctx context.Context, namespace, cluster string) (string, error) {
	var pods corev1.PodList
	if err := r.reader.List(ctx, &pods, client.InNamespace(namespace),
		client.MatchingLabels{"cluster": cluster, "component": "jobmanager"}); err != nil {
		return "", fmt.Errorf("listing the job manager pods of %s: %w", cluster, err)
	}
	for i := range pods.Items {
		if addr, ok := restAddress(&pods.Items[i]); ok {
			return addr, nil
		}
	}
	return "", fmt.Errorf("no running job manager pod of %s with a port named %s", cluster, jobManagerPortName)
}

// restAddress returns host:port of pod's REST port, if the pod runs, is not
// on the host's network and has a container port named ui.
func restAddress(pod *corev1.Pod) (string, bool) {
	if pod.Status.Phase != corev1.PodRunning || pod.Spec.HostNetwork || pod.Status.PodIP == "" || !pod.DeletionTimestamp.IsZero() {
		return "", false
	}
	for _, c := range pod.Spec.Containers {
		for _, p := range c.Ports {
			if p.Name == jobManagerPortName && p.ContainerPort > 0 {
				return net.JoinHostPort(pod.Status.PodIP, strconv.Itoa(int(p.ContainerPort))), true
			}
		}
	}
	return "", false
}

// JobManagerService returns the name of the job manager's Service of a
// FlinkCluster.
func JobManagerService(cluster string) string { return cluster + "-jobmanager" }

// jobsOverview is the answer of Flink's GET /jobs/overview.
type jobsOverview struct {
	Jobs []struct {
		ID        string `json:"jid"`
		StartTime int64  `json:"start-time"`
	} `json:"jobs"`
}

// newestJobID returns the ID of the job started last in a /jobs/overview
// answer, "" when there is none.
func newestJobID(body []byte) (string, error) {
	var o jobsOverview
	if err := json.Unmarshal(body, &o); err != nil {
		return "", fmt.Errorf("reading the job manager's jobs overview: %w", err)
	}
	id, start := "", int64(-1)
	for _, j := range o.Jobs {
		if j.ID != "" && (j.StartTime > start || j.StartTime == start && j.ID > id) {
			id, start = j.ID, j.StartTime
		}
	}
	return id, nil
}
