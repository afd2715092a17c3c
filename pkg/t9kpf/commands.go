package t9kpf

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"strings"

	"github.com/spf13/cobra"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/client-go/kubernetes"

	tensorstackv1beta1 "github.com/accelstack/accelstack/api/tensorstack/v1beta1"
	"github.com/accelstack/accelstack/pkg/activity"
)

// notebookCommand returns t9k-pf notebook.
func (o *options) notebookCommand() *cobra.Command {
	return &cobra.Command{
		Use:     "notebook URL [LOCAL_PORT]",
		Aliases: []string{"nb"},
		Short:   "Forward a local port to the SSH server of the Notebook whose page URL is URL",
		Long: "Forward a local port (a free one when not given) to the SSH server of a Notebook. URL is the\n" +
			"address of the Notebook's page in the browser; its project and name come from it. Then:\n" +
			"  ssh t9kuser@localhost -p <port> -o StrictHostKeyChecking=no -o UserKnownHostsFile=/dev/null",
		Example: "  t9k-pf notebook https://platform.example.com/t9k/notebooks/projects/demo/name/ml-labs/lab\n" +
			"  t9k-pf nb https://platform.example.com/t9k/build-console/projects/demo/notebooks/ml-labs/lab 2222",
		Args: cobra.RangeArgs(1, 2),
		RunE: func(cmd *cobra.Command, args []string) error {
			ns, name, err := notebookOfURL(args[0])
			if err != nil {
				return err
			}
			local := 0
			if len(args) == 2 {
				if local, err = parsePort(args[1], true); err != nil {
					return fmt.Errorf("the local port %q: %w", args[1], err)
				}
			}
			return o.forward(cmd.Context(), local, func(ctx context.Context, cs kubernetes.Interface) (target, error) {
				return notebookPod(ctx, cs, ns, name)
			})
		},
	}
}

// notebookOfURL returns the project and name of the Notebook of a page
// URL: the gateway's /t9k/notebooks/projects/<project>/name/<name>/... or
// the console's .../projects/<project>/notebooks/<name>/...
func notebookOfURL(raw string) (string, string, error) {
	u, err := url.Parse(raw)
	if err != nil {
		return "", "", fmt.Errorf("the Notebook's URL %q: %w", raw, err)
	}
	segs := strings.Split(strings.Trim(u.Path, "/"), "/")
	for i := 0; i+3 < len(segs); i++ {
		if segs[i] != "projects" || (segs[i+2] != "name" && segs[i+2] != "notebooks") {
			continue
		}
		ns, name := segs[i+1], segs[i+3]
		if len(validation.IsDNS1123Label(ns)) > 0 || len(validation.IsDNS1123Subdomain(name)) > 0 {
			break
		}
		return ns, name, nil
	}
	return "", "", fmt.Errorf("the URL %q is no Notebook's page, whose path holds projects/<project>/name/<notebook> (the gateway's) or projects/<project>/notebooks/<notebook> (the console's)", raw)
}

// notebookPod returns the SSH port of the Notebook's pod.
func notebookPod(ctx context.Context, cs kubernetes.Interface, ns, name string) (target, error) {
	var nb tensorstackv1beta1.Notebook
	err := cs.CoreV1().RESTClient().Get().AbsPath("/apis/tensorstack.dev/v1beta1").Namespace(ns).Resource("notebooks").Name(name).Do(ctx).Into(&nb)
	if err != nil {
		return target{}, fmt.Errorf("reading Notebook %s/%s: %w", ns, name, err)
	}
	if nb.Spec.SSH == nil || !nb.Spec.SSH.Enabled {
		return target{}, fmt.Errorf("notebook %s/%s does not enable SSH: set spec.ssh.enabled and spec.ssh.authorized_keys", ns, name)
	}
	if nb.Status.Pod == nil || nb.Status.Pod.Reference.Name == "" || nb.Status.Pod.Phase != corev1.PodRunning {
		return target{}, fmt.Errorf("notebook %s/%s has no running pod yet (phase %q)", ns, name, nb.Status.Phase)
	}
	return target{namespace: ns, pod: nb.Status.Pod.Reference.Name, port: activity.SSHPort}, nil
}

// podCommand returns t9k-pf pod.
func (o *options) podCommand() *cobra.Command {
	return o.portCommand("pod", nil, "Forward a local port (a free one when not given) to a port of a pod",
		"  t9k-pf pod example 3333:2222 -n dev\n  t9k-pf pod example 2222 -n dev",
		func(_ context.Context, _ kubernetes.Interface, ns, name string, port int) (target, error) {
			return target{namespace: ns, pod: name, port: port}, nil
		})
}

// serviceCommand returns t9k-pf service.
func (o *options) serviceCommand() *cobra.Command {
	return o.portCommand("service", []string{"svc"}, "Forward a local port (a free one when not given) to a port of a Service, by one of its running pods",
		"  t9k-pf service myservice 8888:80\n  t9k-pf svc myservice 80 -n dev", servicePod)
}

// portCommand returns a command NAME [LOCAL_PORT:]TARGET_PORT that
// forwards to the port find returns for the object NAME of the project.
func (o *options) portCommand(use string, aliases []string, short, example string,
	find func(ctx context.Context, cs kubernetes.Interface, ns, name string, port int) (target, error)) *cobra.Command {
	return &cobra.Command{
		Use:     use + " NAME [LOCAL_PORT:]TARGET_PORT",
		Aliases: aliases,
		Short:   short,
		Example: example,
		Args:    cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			local, remote, err := ports(args[1])
			if err != nil {
				return err
			}
			ns, err := o.namespace()
			if err != nil {
				return err
			}
			return o.forward(cmd.Context(), local, func(ctx context.Context, cs kubernetes.Interface) (target, error) {
				return find(ctx, cs, ns, args[0], remote)
			})
		},
	}
}

// servicePod returns a running pod of Service ns/name and the pod's port
// that the Service's port targets, as kubectl port-forward svc/... does.
func servicePod(ctx context.Context, cs kubernetes.Interface, ns, name string, port int) (target, error) {
	svc, err := cs.CoreV1().Services(ns).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return target{}, fmt.Errorf("reading Service %s/%s: %w", ns, name, err)
	}
	var sp *corev1.ServicePort
	for i := range svc.Spec.Ports {
		if int(svc.Spec.Ports[i].Port) == port {
			sp = &svc.Spec.Ports[i]
		}
	}
	if sp == nil {
		return target{}, fmt.Errorf("service %s/%s has no port %d", ns, name, port)
	}
	if len(svc.Spec.Selector) == 0 {
		return target{}, fmt.Errorf("service %s/%s selects no pods", ns, name)
	}
	pods, err := cs.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{LabelSelector: labels.SelectorFromSet(svc.Spec.Selector).String()})
	if err != nil {
		return target{}, fmt.Errorf("listing the pods of Service %s/%s: %w", ns, name, err)
	}
	for i := range pods.Items {
		pod := &pods.Items[i]
		if pod.Status.Phase != corev1.PodRunning || pod.DeletionTimestamp != nil {
			continue
		}
		p, err := podPort(pod, sp.TargetPort, port)
		if err != nil {
			return target{}, err
		}
		return target{namespace: ns, pod: pod.Name, port: p}, nil
	}
	return target{}, fmt.Errorf("service %s/%s has no running pod", ns, name)
}

// podPort returns the pod's port that a Service's target port names: a
// number, a container port's name, or, when unset, the Service's port.
func podPort(pod *corev1.Pod, tp intstr.IntOrString, port int) (int, error) {
	switch {
	case tp.Type == intstr.Int && tp.IntVal != 0:
		return int(tp.IntVal), nil
	case tp.Type == intstr.String && tp.StrVal != "":
		for _, c := range pod.Spec.Containers {
			for _, cp := range c.Ports {
				if cp.Name == tp.StrVal {
					return int(cp.ContainerPort), nil
				}
			}
		}
		return 0, errors.New("pod " + pod.Name + " has no port named " + tp.StrVal)
	}
	return port, nil
}
