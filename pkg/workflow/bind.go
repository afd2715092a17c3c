package workflow

import (
	"fmt"
	"path"
	"sort"
	"strings"

	batchv1beta1 "github.com/accelstack/accelstack/api/batch/v1beta1"
	"github.com/accelstack/accelstack/pkg/workflow/seqpod"
)

// binding is a run's params and workspaces bound to its template's.
type binding struct {
	// params are the values of every param the template declares.
	params map[string]string
	// workspaces are the template's workspaces the run binds, by name.
	workspaces []boundWorkspace
	// vars are the variables of the template's body: params, workspace
	// paths and result paths.
	vars Variables
}

// boundWorkspace is a declared workspace and the volume bound to it.
type boundWorkspace struct {
	decl    batchv1beta1.WorkspaceDeclaration
	binding batchv1beta1.WorkspaceBinding
}

// mountPath is where a workspace is mounted.
func mountPath(d batchv1beta1.WorkspaceDeclaration) string {
	if d.MountPath != "" {
		return d.MountPath
	}
	return path.Join(seqpod.WorkspacesDir, d.Name)
}

// bind binds the run's params and workspaces to spec's declarations: a
// param without a value or default, or a required workspace not bound, is
// an error.
func bind(run *batchv1beta1.WorkflowRun, spec *batchv1beta1.WorkflowTemplateSpec) (*binding, error) {
	given := map[string]string{}
	for _, p := range run.Spec.Params {
		given[p.Name] = p.Value
	}
	b := &binding{params: map[string]string{}, vars: Variables{}}
	var missing []string
	for _, p := range spec.Params {
		v, ok := given[p.Name]
		switch {
		case ok:
		case p.Default != nil:
			v = *p.Default
		default:
			missing = append(missing, p.Name)
			continue
		}
		b.params[p.Name] = v
		b.vars["params."+p.Name] = v
	}
	if len(missing) > 0 {
		return nil, fmt.Errorf("params without a value: %s (spec.params)", strings.Join(missing, ", "))
	}
	bound := map[string]batchv1beta1.WorkspaceBinding{}
	for _, w := range run.Spec.Workspaces {
		bound[w.Name] = w
	}
	for _, d := range spec.Workspaces {
		w, ok := bound[d.Name]
		if !ok {
			if !d.Optional {
				missing = append(missing, d.Name)
			}
			continue
		}
		b.workspaces = append(b.workspaces, boundWorkspace{decl: d, binding: w})
		b.vars["workspaces."+d.Name+".path"] = mountPath(d)
	}
	if len(missing) > 0 {
		sort.Strings(missing)
		return nil, fmt.Errorf("workspaces not bound: %s (spec.workspaces)", strings.Join(missing, ", "))
	}
	for _, res := range spec.Results {
		b.vars["results."+res.Name+".path"] = path.Join(seqpod.ResultsDir, res.Name)
	}
	return b, nil
}
