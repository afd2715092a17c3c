package nodeagent

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sort"
	"strings"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	podresourcesv1 "k8s.io/kubelet/pkg/apis/podresources/v1"

	"github.com/accelstack/accelstack/pkg/accelerator"
)

// ErrNoPodResourcesSocket is returned when the kubelet PodResources
// socket does not exist: the directory is not mounted into the agent's
// container or the kubelet is not running.
var ErrNoPodResourcesSocket = errors.New("kubelet PodResources socket not found")

// PodLister lists which containers hold which devices.
type PodLister interface {
	// List returns every container's device assignments.
	List(ctx context.Context) ([]Assignment, error)
}

// Assignment is the devices of one resource held by one container.
type Assignment struct {
	Owner
	// Resource is the extended resource name, e.g. nvidia.com/gpu.shared.
	Resource string
	// DeviceIDs are the IDs the kubelet allocated, e.g. GPU-x::3.
	DeviceIDs []string
}

// PodResourcesClient reads the kubelet PodResources API v1. It connects
// for each List, as the kubelet may restart between collections.
type PodResourcesClient struct {
	// Socket is the path of kubelet.sock in the pod-resources directory.
	Socket string
	// Timeout bounds one List call.
	Timeout time.Duration
}

var _ PodLister = (*PodResourcesClient)(nil)

// List calls the kubelet's List.
func (c *PodResourcesClient) List(ctx context.Context) ([]Assignment, error) {
	if _, err := os.Stat(c.Socket); err != nil {
		return nil, fmt.Errorf("%w at %s (mount /var/lib/kubelet/pod-resources into the agent): %w", ErrNoPodResourcesSocket, c.Socket, err)
	}
	conn, err := grpc.NewClient("unix://"+c.Socket, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		return nil, fmt.Errorf("connecting to kubelet PodResources at %s: %w", c.Socket, err)
	}
	defer conn.Close()
	timeout := c.Timeout
	if timeout <= 0 {
		timeout = 5 * time.Second
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	resp, err := podresourcesv1.NewPodResourcesListerClient(conn).List(ctx, &podresourcesv1.ListPodResourcesRequest{})
	if err != nil {
		return nil, fmt.Errorf("listing kubelet PodResources at %s: %w", c.Socket, err)
	}
	return assignments(resp), nil
}

// assignments flattens a List response to the accelerator resources, those
// of a vendor's device plugin (accelerator.VendorOf): every nvidia.com
// resource (nvidia.com/gpu, nvidia.com/gpu.shared, nvidia.com/mig-*, renamed
// time-sliced resources) and huawei.com/Ascend*.
func assignments(resp *podresourcesv1.ListPodResourcesResponse) []Assignment {
	var out []Assignment
	for _, p := range resp.GetPodResources() {
		for _, c := range p.GetContainers() {
			for _, d := range c.GetDevices() {
				if accelerator.VendorOf(d.GetResourceName()) == "" || len(d.GetDeviceIds()) == 0 {
					continue
				}
				out = append(out, Assignment{
					Owner:     Owner{Namespace: p.GetNamespace(), Pod: p.GetName(), Container: c.GetName()},
					Resource:  d.GetResourceName(),
					DeviceIDs: d.GetDeviceIds(),
				})
			}
		}
	}
	return out
}

// replicaSep separates a device ID from its time-slicing replica number.
const replicaSep = "::"

// DeviceKey strips the replica suffix: GPU-x::3 is GPU-x.
func DeviceKey(id string) string {
	if i := strings.Index(id, replicaSep); i >= 0 {
		return id[:i]
	}
	return id
}

// Owners maps each device key to the containers holding it, one entry per
// container even when it holds several replicas of one device, sorted.
func Owners(as []Assignment) map[string][]Owner {
	seen := map[string]map[Owner]bool{}
	for _, a := range as {
		for _, id := range a.DeviceIDs {
			k := DeviceKey(id)
			if seen[k] == nil {
				seen[k] = map[Owner]bool{}
			}
			seen[k][a.Owner] = true
		}
	}
	out := make(map[string][]Owner, len(seen))
	for k, set := range seen {
		owners := make([]Owner, 0, len(set))
		for o := range set {
			owners = append(owners, o)
		}
		sort.Slice(owners, func(i, j int) bool {
			a, b := owners[i], owners[j]
			if a.Namespace != b.Namespace {
				return a.Namespace < b.Namespace
			}
			if a.Pod != b.Pod {
				return a.Pod < b.Pod
			}
			return a.Container < b.Container
		})
		out[k] = owners
	}
	return out
}
