package ascendjob

import (
	"context"
	"fmt"
	"sort"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	mindxdlv1 "github.com/accelstack/accelstack/api/mindxdl/v1"
	"github.com/accelstack/accelstack/pkg/jobs"
)

// leaderService returns the ClusterIP Service of the leader's pod,
// <job>-<leader>-0, with a port per named port of the leader's template
// (and ascendjob-port). Its owner reference does not make it the job's
// controlled child, so that the engine, which keeps only its own
// per-replica Services, leaves it alone; it goes with the job all the same.
func leaderService(aj *mindxdlv1.AscendJob, lead mindxdlv1.ReplicaType) *corev1.Service {
	name := jobs.PodName(aj.Name, engineType(lead), 0)
	labels := podLabels(aj.Name, lead, 0)
	selector := podLabels(aj.Name, lead, 0)
	for k, v := range jobs.Labels(Kind{}.Component(), aj.Name) {
		labels[k] = v
	}
	svc := &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{
			Name: name, Namespace: aj.Namespace, Labels: labels,
			OwnerReferences: []metav1.OwnerReference{{
				APIVersion: mindxdlv1.GroupVersion.String(), Kind: "AscendJob",
				Name: aj.Name, UID: aj.UID, BlockOwnerDeletion: ptr.To(true),
			}},
		},
		Spec: corev1.ServiceSpec{Selector: selector},
	}
	seen := map[string]bool{}
	if s := find(aj, lead); s != nil {
		for _, c := range s.Template.Spec.Containers {
			for _, p := range c.Ports {
				if p.Name == "" || seen[p.Name] {
					continue
				}
				seen[p.Name] = true
				svc.Spec.Ports = append(svc.Spec.Ports, corev1.ServicePort{
					Name: p.Name, Port: p.ContainerPort, TargetPort: intstr.FromInt32(p.ContainerPort), Protocol: p.Protocol})
			}
		}
	}
	if !seen[PortName] {
		svc.Spec.Ports = append(svc.Spec.Ports, corev1.ServicePort{Name: PortName, Port: DefaultPort, TargetPort: intstr.FromInt32(DefaultPort)})
	}
	sort.Slice(svc.Spec.Ports, func(i, j int) bool { return svc.Spec.Ports[i].Name < svc.Spec.Ports[j].Name })
	return svc
}

// ensureLeader creates the leader's Service unless it exists, and records
// its address in the status, which the pods' variables are taken from.
func ensureLeader(ctx context.Context, env *jobs.Env, aj *mindxdlv1.AscendJob) error {
	lead := topologyOf(aj).leader
	if lead == "" || find(aj, lead) == nil {
		return nil
	}
	want := leaderService(aj, lead)
	svc := &corev1.Service{}
	err := env.Cache.Get(ctx, client.ObjectKeyFromObject(want), svc)
	switch {
	case apierrors.IsNotFound(err):
		if err := env.Client.Create(ctx, want); apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("service %s exists but is not yet seen: %w", want.Name, err)
		} else if err != nil {
			return fmt.Errorf("creating Service %s: %w", want.Name, err)
		}
		svc = want
	case err != nil:
		return fmt.Errorf("getting Service %s: %w", want.Name, err)
	case !ownedBy(svc, aj):
		return fmt.Errorf("service %s belongs to another object", want.Name)
	}
	port := int32(DefaultPort)
	for _, p := range svc.Spec.Ports {
		if p.Name == PortName {
			port = p.Port
		}
	}
	if svc.Spec.ClusterIP == "" || svc.Spec.ClusterIP == corev1.ClusterIPNone {
		return fmt.Errorf("service %s has no cluster IP", svc.Name)
	}
	aj.Status.Leader = &mindxdlv1.LeaderEndpoint{Service: svc.Name, ClusterIP: svc.Spec.ClusterIP, Port: port}
	return nil
}

// ownedBy reports whether o has an owner reference to job.
func ownedBy(o client.Object, job client.Object) bool {
	for _, ref := range o.GetOwnerReferences() {
		if ref.UID == job.GetUID() {
			return true
		}
	}
	return false
}
