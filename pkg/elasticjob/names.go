package elasticjob

import (
	"fmt"
	"strings"

	elasticv1alpha1 "github.com/accelstack/accelstack/api/elastic/v1alpha1"
)

const (
	// PSServicePort is the port of a parameter server's Service.
	PSServicePort = 2222
	// WorkerServicePort is the port of the Service of a worker, chief or
	// evaluator.
	WorkerServicePort = 3333
	// MasterServicePort is the port of DLRover's job master.
	MasterServicePort = 50001
)

// TaskName is the name of the pod of type t with id, and of the Service of
// rank id: <job>-edljob-<type>-<id>.
func TaskName(job string, t elasticv1alpha1.ReplicaType, id int) string {
	return fmt.Sprintf("%s-edljob-%s-%d", job, t, id)
}

// ServicePort is the port of the Services of type t.
func ServicePort(t elasticv1alpha1.ReplicaType) int {
	if t == elasticv1alpha1.ReplicaTypePS {
		return PSServicePort
	}
	return WorkerServicePort
}

// TaskServiceAddr is the host:port of the Service of rank of type t.
func TaskServiceAddr(job string, t elasticv1alpha1.ReplicaType, rank int) string {
	return fmt.Sprintf("%s:%d", TaskName(job, t, rank), ServicePort(t))
}

// MasterName is the name of the master pod and Service of a job:
// elasticjob-<job>-dlrover-master.
func MasterName(job string) string {
	return fmt.Sprintf("elasticjob-%s-%s", job, elasticv1alpha1.ReplicaTypeMaster)
}

// MasterAddr is the host:port of a job's master, DLROVER_MASTER_ADDR.
func MasterAddr(job string) string {
	return fmt.Sprintf("%s:%d", MasterName(job), MasterServicePort)
}

// serviceHost is the host part of a host:port address.
func serviceHost(addr string) string {
	host, _, _ := strings.Cut(addr, ":")
	return host
}
