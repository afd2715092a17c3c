package main

import (
	"context"
	"errors"
	"fmt"
	"net/netip"
	"os"
	"path/filepath"
	"strings"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	tensorstackv1beta1 "github.com/accelstack/accelstack/api/tensorstack/v1beta1"
	"github.com/accelstack/accelstack/pkg/activity"
	"github.com/accelstack/accelstack/pkg/interactive"
	"github.com/accelstack/accelstack/pkg/project"
	"github.com/accelstack/accelstack/pkg/webroute"
	"github.com/accelstack/accelstack/test/harness"
)

// The objects of the bench's project.
const (
	// systemNamespace holds the gateway's ServiceAccount, as deploy/ does.
	systemNamespace = "accelstack-system"
	// benchNamespace is the project's namespace.
	benchNamespace = "bench"
	// notebookName is the Notebook the requests go to.
	notebookName = "nb"
	// memberName is the ServiceAccount of the project's member whose
	// token the requests to the gateway carry.
	memberName = "alice"
)

// cluster is a control plane with the roles of deploy/, a project
// namespace with a member and a Notebook whose Service's ready endpoint is
// the upstream, and a kubeconfig of the gateway's ServiceAccount.
type cluster struct {
	cp *harness.ControlPlane
	// memberToken is a token of the member's ServiceAccount.
	memberToken string
	// gatewayKubeconfig is the path of the gateway's kubeconfig.
	gatewayKubeconfig string
}

// startCluster starts the control plane and makes the objects, with the
// Notebook's endpoint at upstream, and the gateway's kubeconfig in dir.
func startCluster(ctx context.Context, dir string, upstream netip.AddrPort) (_ *cluster, err error) {
	cp, err := harness.NewControlPlane()
	if err != nil {
		return nil, fmt.Errorf("starting the control plane: %w", err)
	}
	defer func() {
		if err != nil {
			err = errors.Join(err, cp.Stop())
		}
	}()
	c := cp.Client
	for _, ns := range []string{systemNamespace, benchNamespace} {
		if err := c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil {
			return nil, fmt.Errorf("creating namespace %s: %w", ns, err)
		}
	}
	for _, f := range []string{filepath.Join("deploy", "controllers", "project-roles.yaml"), filepath.Join("deploy", "gateway", "rbac.yaml")} {
		if err := apply(ctx, c, f); err != nil {
			return nil, err
		}
	}
	// What the Project controller binds in a project's namespace: the
	// gateway's rights, and the member role to the member.
	for _, b := range []struct {
		name, role string
		subject    rbacv1.Subject
	}{
		{project.GatewayRoleBindingName, project.GatewayClusterRole, rbacv1.Subject{Kind: rbacv1.ServiceAccountKind, Namespace: systemNamespace, Name: "gateway"}},
		{"members", "accelstack-project-member", rbacv1.Subject{Kind: rbacv1.ServiceAccountKind, Namespace: benchNamespace, Name: memberName}},
	} {
		if err := c.Create(ctx, &rbacv1.RoleBinding{
			ObjectMeta: metav1.ObjectMeta{Namespace: benchNamespace, Name: b.name},
			RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: b.role},
			Subjects:   []rbacv1.Subject{b.subject},
		}); err != nil {
			return nil, fmt.Errorf("binding %s: %w", b.role, err)
		}
	}
	if err := notebook(ctx, c, upstream); err != nil {
		return nil, err
	}
	cl := &cluster{cp: cp}
	if cl.memberToken, err = harness.ServiceAccountToken(ctx, c, benchNamespace, memberName); err != nil {
		return nil, err
	}
	gatewayToken, err := harness.ServiceAccountToken(ctx, c, systemNamespace, "gateway")
	if err != nil {
		return nil, err
	}
	cl.gatewayKubeconfig = filepath.Join(dir, "gateway.kubeconfig")
	kc := clientcmdapi.NewConfig()
	kc.Clusters["bench"] = &clientcmdapi.Cluster{Server: cp.Config.Host, CertificateAuthorityData: cp.Config.CAData}
	kc.AuthInfos["gateway"] = &clientcmdapi.AuthInfo{Token: gatewayToken}
	kc.Contexts["bench"] = &clientcmdapi.Context{Cluster: "bench", AuthInfo: "gateway"}
	kc.CurrentContext = "bench"
	if err := clientcmd.WriteToFile(*kc, cl.gatewayKubeconfig); err != nil {
		return nil, fmt.Errorf("writing the gateway's kubeconfig: %w", err)
	}
	return cl, nil
}

// stop stops the control plane.
func (cl *cluster) stop() error { return cl.cp.Stop() }

// apply creates the objects of the YAML file path of the repository.
func apply(ctx context.Context, c client.Client, path string) error {
	root, err := harness.RepoRoot()
	if err != nil {
		return fmt.Errorf("finding the repository: %w", err)
	}
	b, err := os.ReadFile(filepath.Join(root, path))
	if err != nil {
		return fmt.Errorf("reading %s: %w", path, err)
	}
	for _, doc := range strings.Split(string(b), "\n---\n") {
		var meta metav1.TypeMeta
		if err := yaml.Unmarshal([]byte(doc), &meta); err != nil {
			return fmt.Errorf("%s: %w", path, err)
		}
		obj, err := c.Scheme().New(schema.FromAPIVersionAndKind(meta.APIVersion, meta.Kind))
		if err != nil {
			return fmt.Errorf("%s: %w", path, err)
		}
		if err := yaml.UnmarshalStrict([]byte(doc), obj); err != nil {
			return fmt.Errorf("%s: %w", path, err)
		}
		if err := c.Create(ctx, obj.(client.Object)); err != nil {
			return fmt.Errorf("%s: creating %s: %w", path, meta.Kind, err)
		}
	}
	return nil
}

// notebook creates the Notebook, its access Secret, its Service and an
// EndpointSlice whose one ready endpoint is upstream, as the Notebook
// controller and the EndpointSlice controller would with a pod there.
func notebook(ctx context.Context, c client.Client, upstream netip.AddrPort) error {
	nb := &tensorstackv1beta1.Notebook{
		ObjectMeta: metav1.ObjectMeta{Namespace: benchNamespace, Name: notebookName},
		Spec: tensorstackv1beta1.NotebookSpec{Template: tensorstackv1beta1.NotebookTemplateSpec{Spec: corev1.PodSpec{
			Containers: []corev1.Container{{Name: tensorstackv1beta1.NotebookContainer, Image: "jupyter"}},
		}}},
	}
	if err := c.Create(ctx, nb); err != nil {
		return fmt.Errorf("creating the Notebook: %w", err)
	}
	svc := webroute.NotebookObjectName(string(nb.UID))
	objs := []client.Object{
		&corev1.Secret{
			ObjectMeta: metav1.ObjectMeta{
				Namespace: benchNamespace, Name: interactive.AccessSecretName(svc),
				OwnerReferences: []metav1.OwnerReference{{APIVersion: "tensorstack.dev/v1beta1", Kind: "Notebook", Name: nb.Name, UID: nb.UID, Controller: ptr.To(true)}},
			},
			Data: map[string][]byte{activity.AccessTokenKey: []byte("access-token")},
		},
		&corev1.Service{
			ObjectMeta: metav1.ObjectMeta{Namespace: benchNamespace, Name: svc},
			Spec:       corev1.ServiceSpec{Ports: []corev1.ServicePort{{Name: "http", Port: 80, TargetPort: intstr.FromString("http")}}},
		},
		&discoveryv1.EndpointSlice{
			ObjectMeta:  metav1.ObjectMeta{Namespace: benchNamespace, Name: svc + "-1", Labels: map[string]string{discoveryv1.LabelServiceName: svc}},
			AddressType: discoveryv1.AddressTypeIPv4,
			Endpoints:   []discoveryv1.Endpoint{{Addresses: []string{upstream.Addr().String()}, Conditions: discoveryv1.EndpointConditions{Ready: ptr.To(true)}}},
			Ports:       []discoveryv1.EndpointPort{{Name: ptr.To("http"), Port: ptr.To(int32(upstream.Port()))}},
		},
	}
	for _, o := range objs {
		if err := c.Create(ctx, o); err != nil {
			return fmt.Errorf("creating the Notebook's %T: %w", o, err)
		}
	}
	return nil
}
