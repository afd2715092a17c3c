package ranktable

import (
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"

	"github.com/accelstack/accelstack/pkg/ascend/annotation"
)

const (
	// RingControllerLabel marks the pods (and the ConfigMap) of a job that
	// needs a rank table; its value is the chip type, e.g. ascend-910b.
	RingControllerLabel = "ring-controller.atlas"
	// VolcanoJobNameLabel names a Volcano Job's pods' job.
	VolcanoJobNameLabel = "volcano.sh/job-name"
	// VolcanoTaskSpecLabel names the task of a Volcano Job's pod.
	VolcanoTaskSpecLabel = "volcano.sh/task-spec"
	// VolcanoTaskIndexKey is the index of a pod within its Volcano task
	// (label or annotation).
	VolcanoTaskIndexKey = "volcano.sh/task-index"
	// RankIndexAnnotation is the rank the Ascend operator gives a pod.
	RankIndexAnnotation = "hccl/rankIndex"
	// ConfigMapPrefix prefixes the job name in the rank table's ConfigMap.
	ConfigMapPrefix = "rings-config-"
	// ConfigMapKey is the ConfigMap key holding the rank table.
	ConfigMapKey = "hccl.json"
	// MountPath is where a job's pods mount the rank table's ConfigMap;
	// the table is the file ConfigMapKey in it.
	MountPath = "/user/serverid/devindex/config"
	// VolumeName is the name of the rank-table volume in a job's pods.
	VolumeName = "ascend-910-config"
	// ChipTypeAscend910 is the RingControllerLabel value for Ascend 910 chips.
	ChipTypeAscend910 = "ascend-910"

	// StatusInitializing is the rank table's status until every pod has
	// its chips.
	StatusInitializing = "initializing"
	// StatusCompleted is the rank table's status once filled.
	StatusCompleted = "completed"
	// Version is the rank table format written.
	Version = "1.0"
)

// RankTable is the hccl.json document. Numbers are strings, as MindX
// writes them.
type RankTable struct {
	Status      string   `json:"status"`
	ServerList  []Server `json:"server_list,omitempty"`
	ServerCount string   `json:"server_count,omitempty"`
	Version     string   `json:"version,omitempty"`
}

// Server is one pod's entry in the rank table.
type Server struct {
	Devices  []Device `json:"device"`
	ServerID string   `json:"server_id"`
}

// Device is one chip with its global rank.
type Device struct {
	DeviceID string `json:"device_id"`
	DeviceIP string `json:"device_ip"`
	RankID   string `json:"rank_id"`
}

// ParseStatus returns the status of an hccl.json document; an empty or
// absent document reads as initializing.
func ParseStatus(doc string) (string, error) {
	if doc == "" {
		return StatusInitializing, nil
	}
	var rt RankTable
	if err := json.Unmarshal([]byte(doc), &rt); err != nil {
		return "", fmt.Errorf("parsing %s: %w", ConfigMapKey, err)
	}
	return rt.Status, nil
}

// JobName returns the job a pod belongs to: its Volcano job-name label, or
// else the name of its controlling owner (an AscendJob, for instance).
func JobName(pod *corev1.Pod) string {
	if name := pod.Labels[VolcanoJobNameLabel]; name != "" {
		return name
	}
	for _, ref := range pod.OwnerReferences {
		if ref.Controller != nil && *ref.Controller {
			return ref.Name
		}
	}
	return ""
}

// errNotReady means a pod has no chips yet.
var errNotReady = errors.New("not every pod of the job is allocated")

// InvalidPodError names a pod whose annotations cannot be used.
type InvalidPodError struct {
	Pod string
	Err error
}

func (e *InvalidPodError) Error() string { return fmt.Sprintf("pod %s: %v", e.Pod, e.Err) }
func (e *InvalidPodError) Unwrap() error { return e.Err }

type rankedPod struct {
	pod    *corev1.Pod
	conf   annotation.PodConfiguration
	rank   int // hccl/rankIndex, -1 when absent
	task   string
	index  int
	hasIdx bool
}

// Build returns the completed rank table of a job's pods, errNotReady while
// one has no configuration annotation yet, or an *InvalidPodError for a pod
// whose annotation cannot be parsed or whose rank is bad or taken.
//
// Servers are ordered by the pods' hccl/rankIndex annotation when every pod
// has one; otherwise by Volcano task name and task index, then pod name
// with its numeric suffix compared as a number, so that a T9k job's
// <job>-worker-2 comes before <job>-worker-10, in the order of its ranks.
func Build(pods []*corev1.Pod) (*RankTable, error) {
	ranked := make([]rankedPod, 0, len(pods))
	allRanked := true
	var notReady bool
	for _, pod := range pods {
		rp := rankedPod{pod: pod, rank: -1, task: pod.Labels[VolcanoTaskSpecLabel]}
		if s, ok := pod.Annotations[RankIndexAnnotation]; ok {
			n, err := strconv.Atoi(s)
			if err != nil || n < 0 {
				return nil, &InvalidPodError{Pod: pod.Name, Err: fmt.Errorf("annotation %s=%q is not a rank", RankIndexAnnotation, s)}
			}
			rp.rank = n
		} else {
			allRanked = false
		}
		idx := pod.Labels[VolcanoTaskIndexKey]
		if idx == "" {
			idx = pod.Annotations[VolcanoTaskIndexKey]
		}
		if n, err := strconv.Atoi(idx); err == nil {
			rp.index, rp.hasIdx = n, true
		}
		ann, ok := pod.Annotations[annotation.ConfigurationKey]
		if !ok {
			notReady = true
			ranked = append(ranked, rp)
			continue
		}
		if err := json.Unmarshal([]byte(ann), &rp.conf); err != nil {
			return nil, &InvalidPodError{Pod: pod.Name, Err: fmt.Errorf("annotation %s: %w", annotation.ConfigurationKey, err)}
		}
		if rp.conf.ServerID == "" || len(rp.conf.Devices) == 0 {
			return nil, &InvalidPodError{Pod: pod.Name, Err: fmt.Errorf("annotation %s has no server_id or no devices", annotation.ConfigurationKey)}
		}
		ranked = append(ranked, rp)
	}
	if notReady || len(ranked) == 0 {
		return nil, errNotReady
	}
	if allRanked {
		sort.Slice(ranked, func(i, j int) bool { return ranked[i].rank < ranked[j].rank })
		for i := range ranked {
			if ranked[i].rank != i {
				return nil, &InvalidPodError{Pod: ranked[i].pod.Name, Err: fmt.Errorf("annotation %s=%d: the job's ranks are not 0..%d, each once", RankIndexAnnotation, ranked[i].rank, len(ranked)-1)}
			}
		}
	} else {
		sort.SliceStable(ranked, func(i, j int) bool {
			a, b := ranked[i], ranked[j]
			if a.task != b.task {
				return a.task < b.task
			}
			if a.hasIdx && b.hasIdx && a.index != b.index {
				return a.index < b.index
			}
			return lessPodName(a.pod.Name, b.pod.Name)
		})
	}
	rt := &RankTable{Status: StatusCompleted, Version: Version, ServerCount: strconv.Itoa(len(ranked))}
	rank := 0
	for _, rp := range ranked {
		s := Server{ServerID: rp.conf.ServerID}
		for _, d := range rp.conf.Devices {
			s.Devices = append(s.Devices, Device{DeviceID: d.DeviceID, DeviceIP: d.DeviceIP, RankID: strconv.Itoa(rank)})
			rank++
		}
		rt.ServerList = append(rt.ServerList, s)
	}
	return rt, nil
}

// lessPodName orders pod names, comparing a trailing "-<number>" as a
// number when the names share the rest.
func lessPodName(a, b string) bool {
	pa, na, oka := splitIndex(a)
	pb, nb, okb := splitIndex(b)
	if oka && okb && pa == pb {
		return na < nb
	}
	return a < b
}

// splitIndex splits name into the part before its last "-" and the number
// after it, if that is a number.
func splitIndex(name string) (string, int, bool) {
	i := strings.LastIndexByte(name, '-')
	if i < 0 {
		return "", 0, false
	}
	n, err := strconv.Atoi(name[i+1:])
	if err != nil || n < 0 {
		return "", 0, false
	}
	return name[:i], n, true
}
