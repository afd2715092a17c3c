package t9kcli

import (
	"fmt"
	"strings"
	"time"

	"github.com/spf13/cobra"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	batchv1beta1 "github.com/accelstack/accelstack/api/batch/v1beta1"
)

// The kinds wt start reads and creates.
var (
	workflowTemplate = kindNamed("workflowtemplate")
	workflowRun      = kindNamed("workflowrun")
)

// startCommand starts a WorkflowRun of a WorkflowTemplate.
func (o *options) startCommand() *cobra.Command {
	var (
		c                          changeFlags
		labels, params, workspaces []string
		serviceAccount             string
		timeout                    time.Duration
		useDefaults                bool
	)
	cmd := &cobra.Command{
		Use:   "start NAME",
		Short: "Start a WorkflowRun of a WorkflowTemplate and print its name",
		Long: "Start a WorkflowRun of the WorkflowTemplate, named <template>-run-<5 random characters>,\n" +
			"with the params, workspaces, labels, service account and timeout given.\n\n" +
			"A workspace is name=<ws>,type=<pvc|emptyDir|configMap|secret>[,claimName=<pvc>][,name=...][,subPath=<path>]:\n" +
			"pvc takes claimName, configMap takes configMapName, secret takes secretName.",
		Example: "  t9k wt start foo -p demo\n" +
			"  t9k wt start foo --param=bar=hello -p demo\n" +
			"  t9k wt start foo --workspace=name=bar,type=pvc,claimName=bar-pvc,subPath=/user/local/Document -p demo",
		Args:              cobra.ExactArgs(1),
		ValidArgsFunction: o.completeNames(workflowTemplate),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := c.validate(cmd); err != nil {
				return err
			}
			run := &batchv1beta1.WorkflowRun{
				TypeMeta:   metav1.TypeMeta{APIVersion: batchv1beta1.GroupVersion.String(), Kind: "WorkflowRun"},
				ObjectMeta: metav1.ObjectMeta{GenerateName: args[0] + "-run-"},
				Spec:       batchv1beta1.WorkflowRunSpec{WorkflowTemplateRef: args[0], ServiceAccountName: serviceAccount},
			}
			var err error
			if run.Labels, err = keyValues(labels); err != nil {
				return usageError(cmd, "--label: %v", err)
			}
			given, err := keyValues(params)
			if err != nil {
				return usageError(cmd, "--param: %v", err)
			}
			for _, ws := range workspaces {
				b, err := parseWorkspace(ws)
				if err != nil {
					return usageError(cmd, "--workspace %q: %v", ws, err)
				}
				run.Spec.Workspaces = append(run.Spec.Workspaces, b)
			}
			if timeout > 0 {
				run.Spec.Timeout = &metav1.Duration{Duration: timeout}
			}
			wt := &batchv1beta1.WorkflowTemplate{}
			if _, err := o.typed(cmd.Context(), workflowTemplate, args[0], wt); err != nil {
				return err
			}
			for _, p := range wt.Spec.Params {
				v, ok := given[p.Name]
				switch {
				case ok:
					delete(given, p.Name)
				case p.Default != nil && useDefaults:
					v = *p.Default
				case p.Default == nil:
					return usageError(cmd, "WorkflowTemplate %s needs param %q: give --param=%s=<value>", args[0], p.Name, p.Name)
				default:
					continue
				}
				run.Spec.Params = append(run.Spec.Params, batchv1beta1.Param{Name: p.Name, Value: v})
			}
			for name := range given {
				return usageError(cmd, "WorkflowTemplate %s has no param %q", args[0], name)
			}
			r, err := o.resource(workflowRun)
			if err != nil {
				return err
			}
			saved, err := o.save(cmd.Context(), &c, r, run, true)
			if err != nil {
				return fmt.Errorf("starting a run of WorkflowTemplate %s: %w", args[0], err)
			}
			if !c.dryRun {
				fmt.Fprintln(o.streams.Out, saved.GetName())
			}
			return nil
		},
	}
	cmd.Flags().StringSliceVarP(&labels, "label", "l", nil, "Labels of the run: K1=V1,K2=V2")
	cmd.Flags().StringSliceVarP(&params, "param", "r", nil, "Params of the run: K1=V1,K2=V2")
	cmd.Flags().StringArrayVarP(&workspaces, "workspace", "w", nil, "A workspace of the run (repeat for each): name=<ws>,type=<type>,<key>=<value>...")
	// -s is --server, as in kubectl: the manual's -s for this flag would shadow it.
	cmd.Flags().StringVar(&serviceAccount, "serviceaccount", "", "The run's service account")
	cmd.Flags().DurationVar(&timeout, "timeout", 0, "The run's timeout; 0 is none")
	cmd.Flags().BoolVar(&useDefaults, "use-param-defaults", false, "Write the template's defaults into the run for the params not given")
	c.add(cmd)
	return cmd
}

// keyValues parses K=V items into a map.
func keyValues(items []string) (map[string]string, error) {
	m := map[string]string{}
	for _, it := range items {
		k, v, ok := strings.Cut(it, "=")
		if !ok || k == "" {
			return nil, fmt.Errorf("%q is not KEY=VALUE", it)
		}
		m[k] = v
	}
	return m, nil
}

// parseWorkspace parses name=<ws>,type=<type>,<key>=<value>... into a
// workspace binding.
func parseWorkspace(s string) (batchv1beta1.WorkspaceBinding, error) {
	var b batchv1beta1.WorkspaceBinding
	kv, err := keyValues(strings.Split(s, ","))
	if err != nil {
		return b, err
	}
	b.Name, b.SubPath = kv["name"], kv["subPath"]
	if b.Name == "" {
		return b, fmt.Errorf("name= is required")
	}
	need := func(key string) (string, error) {
		if kv[key] == "" {
			return "", fmt.Errorf("type=%s needs %s=", kv["type"], key)
		}
		return kv[key], nil
	}
	switch kv["type"] {
	case "pvc":
		claim, err := need("claimName")
		b.PersistentVolumeClaim = &corev1.PersistentVolumeClaimVolumeSource{ClaimName: claim}
		return b, err
	case "emptyDir":
		b.EmptyDir = &corev1.EmptyDirVolumeSource{}
	case "configMap":
		name, err := need("configMapName")
		b.ConfigMap = &corev1.ConfigMapVolumeSource{LocalObjectReference: corev1.LocalObjectReference{Name: name}}
		return b, err
	case "secret":
		name, err := need("secretName")
		b.Secret = &corev1.SecretVolumeSource{SecretName: name}
		return b, err
	default:
		return b, fmt.Errorf("type must be pvc, emptyDir, configMap or secret, not %q", kv["type"])
	}
	return b, nil
}
