package ascendjob

import (
	"fmt"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"

	mindxdlv1 "github.com/accelstack/accelstack/api/mindxdl/v1"
	"github.com/accelstack/accelstack/pkg/accelerator"
)

// ClusterD's address, which MindX workloads report to.
const (
	serverDomain = "clusterd-grpc-svc.mindx-dl.svc.cluster.local"
	podIPPath    = "status.podIP"
	npuCoreName  = "huawei.com/npu-core"
)

// wholeChips are the resources of whole chips, whose device list the
// device plugin writes in a pod annotation of the same name.
var wholeChips = map[corev1.ResourceName]bool{
	"huawei.com/npu": true, accelerator.Ascend910: true, accelerator.Ascend310: true, accelerator.Ascend310P: true,
}

// topology is what the framework variables are computed from.
type topology struct {
	framework string
	// leader is the job's leading type, "" when it has none.
	leader mindxdlv1.ReplicaType
	// leaderNPU is true when the leader requests NPUs too: it is then rank 0
	// and counts in the world size.
	leaderNPU bool
	// npuResource and npuReq are the NPUs each pod of the NPU spec (the
	// Worker's, else the leader's) requests.
	npuResource corev1.ResourceName
	npuReq      int
	// npuReplicas are the pods that hold NPUs: the workers, and the leader
	// when leaderNPU.
	npuReplicas int
}

// topologyOf works out the job's topology.
func topologyOf(aj *mindxdlv1.AscendJob) topology {
	t := topology{framework: aj.Labels[mindxdlv1.FrameworkLabel]}
	var leaderRes corev1.ResourceName
	var leaderReq int
	for _, s := range specs(aj) {
		if s.spec == nil {
			continue
		}
		res, req := npuRequest(&s.spec.Template)
		switch {
		case s.typ == mindxdlv1.ReplicaTypeWorker:
			t.npuResource, t.npuReq = res, req
			t.npuReplicas += int(replicas(s.spec))
		case isLeader(s.typ):
			if t.leader == "" {
				t.leader = s.typ
			}
			if req > 0 {
				t.leaderNPU = true
				leaderRes, leaderReq = res, req
			}
		}
	}
	if t.leaderNPU {
		for _, s := range specs(aj) {
			if isLeader(s.typ) {
				t.npuReplicas += int(replicas(s.spec))
			}
		}
		if t.npuReq == 0 {
			t.npuResource, t.npuReq = leaderRes, leaderReq
		}
	}
	return t
}

// rank returns the framework rank of pod index of type typ: workers come
// after the leader when it holds NPUs.
func (t topology) rank(typ mindxdlv1.ReplicaType, index int32) int {
	if typ == mindxdlv1.ReplicaTypeWorker && t.leaderNPU {
		return int(index) + 1
	}
	return int(index)
}

// frameworkEnv returns the variables of the job's framework for a pod of
// type typ with framework rank rank, the leader being at addr:port. A job
// whose pods request no NPU, and a MindSpore job without a Scheduler, get
// none.
func (t topology) frameworkEnv(typ mindxdlv1.ReplicaType, rank int, addr string, port int32) []corev1.EnvVar {
	if t.npuReq <= 0 {
		return nil
	}
	var (
		out     []corev1.EnvVar
		p       = strconv.Itoa(int(port))
		r       = strconv.Itoa(rank)
		local   = strconv.Itoa(t.npuReq)
		world   = strconv.Itoa(t.npuReq * t.npuReplicas)
		dynamic = t.npuResource == npuCoreName
	)
	add := func(name, value string) { out = append(out, corev1.EnvVar{Name: name, Value: value}) }
	podIP := func(name string) {
		out = append(out, corev1.EnvVar{Name: name, ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: podIPPath}}})
	}
	switch t.framework {
	case mindxdlv1.FrameworkPyTorch:
		if !dynamic {
			add("LOCAL_WORLD_SIZE", local)
			add("WORLD_SIZE", world)
			add("LOCAL_RANK", localRanks(t.npuReq))
		}
		add("MASTER_ADDR", addr)
		add("MASTER_PORT", p)
		add("RANK", r)
	case mindxdlv1.FrameworkMindSpore:
		if t.leader == "" {
			return nil
		}
		if typ == mindxdlv1.ReplicaTypeScheduler {
			podIP("MS_SCHED_HOST")
		} else {
			add("MS_SCHED_HOST", addr)
		}
		if !dynamic {
			add("MS_LOCAL_WORKER", local)
			add("MS_WORKER_NUM", world)
		}
		add("MS_NODE_RANK", r)
		add("MS_SCHED_PORT", p)
		add("MS_SERVER_NUM", "0")
		role := "MS_WORKER"
		if typ == mindxdlv1.ReplicaTypeScheduler {
			role = "MS_SCHED"
		}
		add("MS_ROLE", role)
		add("NPU_POD", strconv.FormatBool(typ == mindxdlv1.ReplicaTypeWorker || t.leaderNPU))
	case mindxdlv1.FrameworkTensorFlow:
		if typ == mindxdlv1.ReplicaTypeChief {
			podIP("CM_CHIEF_IP")
		} else {
			add("CM_CHIEF_IP", addr)
		}
		if !dynamic {
			add("CM_LOCAL_WORKER", local)
			add("CM_WORKER_SIZE", world)
		}
		add("CM_CHIEF_PORT", p)
		add("CM_RANK", r)
		add("CM_CHIEF_DEVICE", "0")
		podIP("CM_WORKER_IP")
	}
	return out
}

// localRanks returns "0,1,…,n-1".
func localRanks(n int) string {
	rs := make([]string, n)
	for i := range rs {
		rs[i] = strconv.Itoa(i)
	}
	return strings.Join(rs, ",")
}

// commonEnv returns the variables every container ascend gets: its
// visible devices, the task ID, ClusterD's address, whether the pod uses
// the host network, the logical super-pod and the replica type.
func commonEnv(aj *mindxdlv1.AscendJob, c *corev1.Container, hostNetwork bool, typ mindxdlv1.ReplicaType, rank int) []corev1.EnvVar {
	var out []corev1.EnvVar
	add := func(name, value string) { out = append(out, corev1.EnvVar{Name: name, Value: value}) }
	res, chips := containerNPU(c)
	if res != "" && wholeChips[res] {
		out = append(out, corev1.EnvVar{Name: "ASCEND_VISIBLE_DEVICES", ValueFrom: &corev1.EnvVarSource{
			FieldRef: &corev1.ObjectFieldSelector{FieldPath: fmt.Sprintf("metadata.annotations['%s']", res)}}})
	}
	task := string(aj.UID)
	if id := aj.Labels[mindxdlv1.JobIDLabel]; id != "" {
		task = id
	}
	add("MINDX_TASK_ID", task)
	add("MINDX_SERVER_IP", serverDomain)
	add("MINDX_SERVER_DOMAIN", serverDomain)
	add("HostNetwork", strconv.FormatBool(hostNetwork))
	if chips > 0 {
		spBlock, _ := strconv.Atoi(aj.Annotations[mindxdlv1.SPBlockAnnotation])
		add("HCCL_LOGIC_SUPERPOD_ID", strconv.Itoa(logicSuperPod(rank, spBlock, chips)))
	}
	add("REPLICA_TYPE", string(typ))
	return out
}

// logicSuperPod returns the logical super-pod of the pod of rank rank, each
// super-pod holding spBlock chips and each pod chips.
func logicSuperPod(rank, spBlock, chips int) int {
	if spBlock <= 0 || chips <= 0 {
		return 0
	}
	return rank / max(spBlock/chips, 1)
}

// containerNPU returns the first NPU resource container c requests, and
// how many.
func containerNPU(c *corev1.Container) (corev1.ResourceName, int) {
	return npuRequest(&corev1.PodTemplateSpec{Spec: corev1.PodSpec{Containers: []corev1.Container{*c}}})
}

// setVars adds vars to c, but those c sets already: what the user wrote
// wins.
func setVars(c *corev1.Container, vars []corev1.EnvVar) {
	have := map[string]bool{}
	for _, e := range c.Env {
		have[e.Name] = true
	}
	for _, v := range vars {
		if !have[v.Name] {
			c.Env = append(c.Env, v)
			have[v.Name] = true
		}
	}
}
