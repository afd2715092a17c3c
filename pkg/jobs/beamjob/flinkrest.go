package beamjob

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	corev1client "k8s.io/client-go/kubernetes/typed/core/v1"
)

// jobIDReader returns the ID of the Flink job a session cluster runs, ""
// while it runs none.
type jobIDReader interface {
	JobID(ctx context.Context, namespace, cluster string) (string, error)
}

// restTimeout bounds one request to a job manager.
const restTimeout = 5 * time.Second

// restJobIDs asks the job manager's REST API (GET /jobs/overview on the
// port named ui of the Service <cluster>-jobmanager that flink-operator
// makes) through the API server's service proxy.
type restJobIDs struct {
	core corev1client.CoreV1Interface
}

// JobID returns the newest job of the cluster.
func (r restJobIDs) JobID(ctx context.Context, namespace, cluster string) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, restTimeout)
	defer cancel()
	body, err := r.core.Services(namespace).ProxyGet("http", JobManagerService(cluster), "ui", "jobs/overview", nil).DoRaw(ctx)
	if err != nil {
		return "", fmt.Errorf("asking the job manager of %s for its jobs: %w", cluster, err)
	}
	return newestJobID(body)
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
