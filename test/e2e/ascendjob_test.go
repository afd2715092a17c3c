//go:build e2e

package e2e

import (
	"encoding/json"
	"fmt"
	"strconv"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	batchv1beta1 "github.com/accelstack/accelstack/api/batch/v1beta1"
	mindxdlv1 "github.com/accelstack/accelstack/api/mindxdl/v1"
	"github.com/accelstack/accelstack/pkg/ascend/annotation"
	"github.com/accelstack/accelstack/pkg/ascend/volcano"
	"github.com/accelstack/accelstack/pkg/ranktable"
	"github.com/accelstack/accelstack/test/cluster"
)

// ascendJobScript prints the chips the pod sees, waits for the rank table
// mounted from rings-config-<job> to be completed (the kubelet refreshes a
// ConfigMap volume within a minute or so) and prints it on one line.
const ascendJobScript = `echo ASCEND_VISIBLE_DEVICES=$ASCEND_VISIBLE_DEVICES
f=` + ranktable.MountPath + `/` + ranktable.ConfigMapKey + `
i=0
until grep -q '"status": *"completed"' "$f"; do
  i=$((i+1))
  if [ $i -gt 300 ]; then echo "the rank table was never completed:"; cat "$f"; exit 1; fi
  sleep 1
done
echo "HCCL_JSON=$(tr -d '\n' < "$f")"
`

// TestAscendJobRankTable runs a PyTorch AscendJob of a master and a worker
// of one simulated Ascend 910 chip each through the real kubelet and the
// Ascend device plugin in Volcano mode. The test plays Volcano: the pod
// templates carry the chips it chose, and it binds each pod to the node in
// turn. The plugin hands those chips out and annotates the pods, the
// rank-table controller completes hccl.json, and each pod sees its chips in
// ASCEND_VISIBLE_DEVICES and the completed table, with both pods' chips in
// rank order, in the file mounted from rings-config-<job>.
func TestAscendJobRankTable(t *testing.T) {
	t.Parallel()
	c := crClient(t)
	ns := newNamespace(t)
	chips := map[mindxdlv1.ReplicaType]string{mindxdlv1.ReplicaTypeMaster: "Ascend910-0", mindxdlv1.ReplicaTypeWorker: "Ascend910-1"}
	specs := map[mindxdlv1.ReplicaType]*mindxdlv1.ReplicaSpec{}
	for typ, chip := range chips {
		one := *resource.NewQuantity(1, resource.DecimalSI)
		specs[typ] = &mindxdlv1.ReplicaSpec{
			Replicas:      ptr.To[int32](1),
			RestartPolicy: mindxdlv1.RestartPolicyNever,
			Template: corev1.PodTemplateSpec{
				// What Volcano's Ascend plugin writes on the pod it places.
				ObjectMeta: metav1.ObjectMeta{Annotations: map[string]string{ascend910: chip}},
				Spec: corev1.PodSpec{
					TerminationGracePeriodSeconds: ptr.To[int64](1),
					Containers: []corev1.Container{{
						Name: "ascend", Image: cluster.BusyboxImage, ImagePullPolicy: corev1.PullNever,
						Command: []string{"sh", "-c", ascendJobScript},
						Resources: corev1.ResourceRequirements{
							Limits:   corev1.ResourceList{ascend910: one},
							Requests: corev1.ResourceList{ascend910: one},
						},
					}},
				},
			},
		}
	}
	aj := &mindxdlv1.AscendJob{
		ObjectMeta: metav1.ObjectMeta{Name: "rt", Namespace: ns, Labels: map[string]string{
			mindxdlv1.FrameworkLabel: mindxdlv1.FrameworkPyTorch, mindxdlv1.RingControllerLabel: "ascend-910b"}},
		Spec: mindxdlv1.AscendJobSpec{SchedulerName: volcano.DefaultSchedulerName, ReplicaSpecs: specs},
	}
	if err := c.Create(testContext(t), aj); err != nil {
		t.Fatal(err)
	}

	// Volcano's part: bind one pod at a time, so that the plugin's oldest
	// pending pod is the one the kubelet admits.
	pods := map[string]*corev1.Pod{}
	for _, typ := range []mindxdlv1.ReplicaType{mindxdlv1.ReplicaTypeMaster, mindxdlv1.ReplicaTypeWorker} {
		name := fmt.Sprintf("%s-%s-0", aj.Name, map[mindxdlv1.ReplicaType]string{
			mindxdlv1.ReplicaTypeMaster: "master", mindxdlv1.ReplicaTypeWorker: "worker"}[typ])
		p := waitPod(t, ns, name, "created", func(*corev1.Pod) bool { return true })
		if p.Spec.SchedulerName != volcano.DefaultSchedulerName {
			t.Fatalf("%s: schedulerName %q, want %q", name, p.Spec.SchedulerName, volcano.DefaultSchedulerName)
		}
		err := kube.CoreV1().Pods(ns).Bind(testContext(t), &corev1.Binding{
			ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, UID: p.UID},
			Target:     corev1.ObjectReference{Kind: "Node", Name: cluster.NodeName},
		}, metav1.CreateOptions{})
		if err != nil {
			t.Fatalf("binding %s: %v", name, err)
		}
		pods[name] = waitPod(t, ns, name, "given its chips by the device plugin", func(p *corev1.Pod) bool {
			return p.Annotations[volcano.AnnotationRealKey] != "" && p.Annotations[annotation.ConfigurationKey] != ""
		})
		if got := pods[name].Annotations[volcano.AnnotationRealKey]; got != chips[typ] {
			t.Errorf("%s: the plugin gave %s %q, want the chips Volcano chose, %q", name, volcano.AnnotationRealKey, got, chips[typ])
		}
	}

	waitJob(t, c, aj, "Succeeded", phase(batchv1beta1.JobSucceeded))

	// The table the controller wrote, in the ConfigMap and in each pod.
	cm, err := kube.CoreV1().ConfigMaps(ns).Get(testContext(t), ranktable.ConfigMapPrefix+aj.Name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var rt ranktable.RankTable
	if err := json.Unmarshal([]byte(cm.Data[ranktable.ConfigMapKey]), &rt); err != nil {
		t.Fatalf("rank table %q: %v", cm.Data[ranktable.ConfigMapKey], err)
	}
	if rt.Status != ranktable.StatusCompleted || len(rt.ServerList) != 2 || rt.ServerCount != "2" {
		t.Fatalf("rank table of two servers, completed: %s", cm.Data[ranktable.ConfigMapKey])
	}
	for name, p := range pods {
		logs := podLogs(t, ns, name)
		if got, _ := envValue(logs, "ASCEND_VISIBLE_DEVICES"); got != p.Annotations[ascend910] {
			t.Errorf("%s: ASCEND_VISIBLE_DEVICES=%q, want the pod's %s annotation %q; log:\n%s", name, got, ascend910, p.Annotations[ascend910], logs)
		}
		seen, _ := envValue(logs, "HCCL_JSON")
		var mounted ranktable.RankTable
		if err := json.Unmarshal([]byte(seen), &mounted); err != nil {
			t.Errorf("%s: the mounted rank table %q: %v", name, seen, err)
		} else if got, want := fmt.Sprint(mounted), fmt.Sprint(rt); got != want {
			t.Errorf("%s read the rank table %s, the ConfigMap has %s", name, got, want)
		}
		// The pod's server in the table, at its rank, holds the chips the
		// plugin annotated.
		var conf annotation.PodConfiguration
		if err := json.Unmarshal([]byte(p.Annotations[annotation.ConfigurationKey]), &conf); err != nil {
			t.Fatalf("%s: %s %q: %v", name, annotation.ConfigurationKey, p.Annotations[annotation.ConfigurationKey], err)
		}
		rank, err := strconv.Atoi(p.Annotations[ranktable.RankIndexAnnotation])
		if err != nil || rank < 0 || rank >= len(rt.ServerList) {
			t.Fatalf("%s: %s %q", name, ranktable.RankIndexAnnotation, p.Annotations[ranktable.RankIndexAnnotation])
		}
		s := rt.ServerList[rank]
		if s.ServerID != conf.ServerID || len(s.Devices) != 1 || len(conf.Devices) != 1 ||
			s.Devices[0].DeviceID != conf.Devices[0].DeviceID || s.Devices[0].DeviceIP != conf.Devices[0].DeviceIP ||
			s.Devices[0].RankID != strconv.Itoa(rank) {
			t.Errorf("%s (rank %d, configuration %+v): server %+v in the rank table", name, rank, conf, s)
		}
	}
	if want := fmt.Sprintf("%s-master-0", aj.Name); pods[want].Annotations[ranktable.RankIndexAnnotation] != "0" {
		t.Errorf("the master's rank is %q, want 0", pods[want].Annotations[ranktable.RankIndexAnnotation])
	}
	t.Logf("rank table: %s", cm.Data[ranktable.ConfigMapKey])
}
