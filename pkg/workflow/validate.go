package workflow

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"path"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/controller-runtime/pkg/client"

	batchv1beta1 "github.com/accelstack/accelstack/api/batch/v1beta1"
	triggersv1beta1 "github.com/accelstack/accelstack/api/tensorstack/triggers/v1beta1"
	"github.com/accelstack/accelstack/pkg/jobs"
	"github.com/accelstack/accelstack/pkg/workflow/rules"
	"github.com/accelstack/accelstack/pkg/workflow/seqpod"
)

// TemplateLookup returns the spec of the WorkflowTemplate name in
// namespace, or nil when there is none.
type TemplateLookup func(ctx context.Context, namespace, name string) (*batchv1beta1.WorkflowTemplateSpec, error)

// ReaderLookup returns a TemplateLookup that reads templates from cache and,
// for one the cache has not seen yet, from live: a template applied together
// with the run that names it is found.
func ReaderLookup(cache, live client.Reader) TemplateLookup {
	return func(ctx context.Context, ns, name string) (*batchv1beta1.WorkflowTemplateSpec, error) {
		key := client.ObjectKey{Namespace: ns, Name: name}
		wt := &batchv1beta1.WorkflowTemplate{}
		err := cache.Get(ctx, key, wt)
		if apierrors.IsNotFound(err) && live != nil {
			err = live.Get(ctx, key, wt)
		}
		if err != nil {
			return nil, client.IgnoreNotFound(err)
		}
		return &wt.Spec, nil
	}
}

// Validator checks workflow objects, naming the fields at fault.
type Validator struct {
	// Lookup finds the templates that runs and DAG nodes name.
	Lookup TemplateLookup
	// JobKinds validate the specs of T9k Job templates, by kind name.
	JobKinds map[string]jobs.Kind
	// TriggerRules checks what is particular to a WorkflowTrigger: its
	// event sources and filters.
	TriggerRules func(*triggersv1beta1.WorkflowTrigger) field.ErrorList
}

// NewValidator returns a validator that validates the T9k Job templates of
// kinds and looks templates up with lookup.
func NewValidator(lookup TemplateLookup, kinds []jobs.Kind) *Validator {
	v := &Validator{JobKinds: map[string]jobs.Kind{}, Lookup: lookup}
	for _, k := range kinds {
		v.JobKinds[kindName(k.NewObject())] = k
	}
	return v
}

// kindName returns the Go type name of a job object, its kind.
func kindName(o client.Object) string {
	t := fmt.Sprintf("%T", o)
	return t[strings.LastIndex(t, ".")+1:]
}

// TemplateSpec checks a WorkflowTemplate's spec in namespace ns.
func (v *Validator) TemplateSpec(ctx context.Context, ns string, spec *batchv1beta1.WorkflowTemplateSpec, p *field.Path) field.ErrorList {
	typ, ferr := TemplateType(spec, p)
	if ferr != nil {
		return field.ErrorList{ferr}
	}
	var errs field.ErrorList
	errs = append(errs, validateNames(spec, p)...)
	switch {
	case typ == batchv1beta1.WorkflowTemplateTypePod:
		fp := p.Child("pod")
		if len(spec.Pod.Containers) == 0 {
			errs = append(errs, field.Required(fp.Child("containers"), "a Pod template needs a container"))
		}
		errs = append(errs, validateReferences(spec, spec.Pod, fp)...)
	case typ == batchv1beta1.WorkflowTemplateTypeSeqPod:
		fp := p.Child("seqPod")
		errs = append(errs, seqpod.ValidateSteps(spec.SeqPod, fp)...)
		errs = append(errs, validateReferences(spec, spec.SeqPod, fp)...)
	case typ == batchv1beta1.WorkflowTemplateTypeResource:
		fp := p.Child("resource")
		obj, err := ParseManifest(spec.Resource.Manifest)
		if err != nil {
			errs = append(errs, field.Invalid(fp.Child("manifest"), "<manifest>", err.Error()))
		} else {
			errs = append(errs, validateReferences(spec, obj.Object, fp.Child("manifest"))...)
		}
		errs = append(errs, rules.Validate(spec.Resource.SuccessRules, fp.Child("successRules"))...)
		errs = append(errs, rules.Validate(spec.Resource.FailureRules, fp.Child("failureRules"))...)
	case typ == batchv1beta1.WorkflowTemplateTypeDAG:
		errs = append(errs, v.dag(ctx, ns, spec, p.Child("dag"))...)
	default:
		errs = append(errs, v.job(spec, p)...)
	}
	if typ != batchv1beta1.WorkflowTemplateTypeDAG {
		for i, r := range spec.Results {
			if r.Value != "" {
				errs = append(errs, field.Forbidden(p.Child("results").Index(i).Child("value"), "only DAG templates combine results in value"))
			}
		}
		if len(spec.Results) > 0 && typ != batchv1beta1.WorkflowTemplateTypeSeqPod {
			errs = append(errs, field.Forbidden(p.Child("results"), "only SeqPod and DAG templates have results"))
		}
	}
	return errs
}

// validateNames refuses params, workspaces and results declared twice, and
// workspace mount paths that are not absolute.
func validateNames(spec *batchv1beta1.WorkflowTemplateSpec, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	dup := func(fp *field.Path, names []string) {
		seen := map[string]bool{}
		for i, n := range names {
			if seen[n] {
				errs = append(errs, field.Duplicate(fp.Index(i).Child("name"), n))
			}
			seen[n] = true
		}
	}
	var params, workspaces, results []string
	for _, x := range spec.Params {
		params = append(params, x.Name)
	}
	for i, x := range spec.Workspaces {
		workspaces = append(workspaces, x.Name)
		if x.MountPath != "" && (!path.IsAbs(x.MountPath) || path.Clean(x.MountPath) != x.MountPath) {
			errs = append(errs, field.Invalid(p.Child("workspaces").Index(i).Child("mountPath"), x.MountPath, "must be an absolute, clean path"))
		}
	}
	for _, x := range spec.Results {
		results = append(results, x.Name)
	}
	dup(p.Child("params"), params)
	dup(p.Child("workspaces"), workspaces)
	dup(p.Child("results"), results)
	return errs
}

// validateReferences refuses variables in body that name a param,
// workspace or result the template does not declare.
func validateReferences(spec *batchv1beta1.WorkflowTemplateSpec, body any, p *field.Path) field.ErrorList {
	declared := map[string]bool{}
	for _, x := range spec.Params {
		declared["params."+x.Name] = true
	}
	for _, x := range spec.Workspaces {
		declared["workspaces."+x.Name+".path"] = true
	}
	for _, x := range spec.Results {
		declared["results."+x.Name+".path"] = true
	}
	var bad []string
	walkStrings(body, func(s string) {
		for _, ref := range References(s) {
			kind, _, _ := strings.Cut(ref, ".")
			if (kind == "params" || kind == "workspaces" || kind == "results") && !declared[ref] {
				bad = append(bad, "$("+ref+")")
			}
		}
	})
	if len(bad) == 0 {
		return nil
	}
	sort.Strings(bad)
	return field.ErrorList{field.Invalid(p, strings.Join(dedupe(bad), ", "), "refers to params, workspaces or results the template does not declare")}
}

// walkStrings calls f with every string in the JSON form of v.
func walkStrings(v any, f func(string)) {
	b, err := json.Marshal(v)
	if err != nil {
		return
	}
	var tree any
	if json.Unmarshal(b, &tree) != nil {
		return
	}
	var walk func(any)
	walk = func(t any) {
		switch t := t.(type) {
		case string:
			f(t)
		case map[string]any:
			for _, e := range t {
				walk(e)
			}
		case []any:
			for _, e := range t {
				walk(e)
			}
		}
	}
	walk(tree)
}

func dedupe(s []string) []string {
	out := s[:0]
	for i, x := range s {
		if i == 0 || x != s[i-1] {
			out = append(out, x)
		}
	}
	return out
}

// job validates the T9k Job of a job template with its kind's rules.
func (v *Validator) job(spec *batchv1beta1.WorkflowTemplateSpec, p *field.Path) field.ErrorList {
	obj := jobTemplate(spec)
	var fp *field.Path
	for _, b := range bodies(spec) {
		if b.set {
			fp = p.Child(b.field)
		}
	}
	errs := validateReferences(spec, obj, fp)
	k, ok := v.JobKinds[kindName(obj)]
	if !ok {
		return errs
	}
	if obj.GetName() == "" {
		obj.SetName("workflow-job")
	}
	for _, e := range k.Validate(obj, nil) {
		e.Field = fp.String() + "." + e.Field
		errs = append(errs, e)
	}
	return errs
}

// validateGraph refuses nodes named twice, dependencies on unknown nodes
// and cycles, implicit dependencies through results included.
func validateGraph(dag *batchv1beta1.DAGWorkflowTemplate, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	index := map[string]int{}
	for i, n := range dag.Templates {
		if _, dup := index[n.Name]; dup {
			errs = append(errs, field.Duplicate(p.Child("templates").Index(i).Child("name"), n.Name))
		}
		index[n.Name] = i
	}
	deps := map[string][]string{}
	for i, n := range dag.Templates {
		for _, d := range Dependencies(&n) {
			if _, ok := index[d]; !ok {
				errs = append(errs, field.NotFound(p.Child("templates").Index(i).Child("dependencies"), d))
				continue
			}
			deps[n.Name] = append(deps[n.Name], d)
		}
		for _, d := range n.Dependencies {
			if d == n.Name {
				errs = append(errs, field.Invalid(p.Child("templates").Index(i).Child("dependencies"), d, "a node cannot depend on itself"))
			}
		}
	}
	if len(errs) > 0 {
		return errs
	}
	// Depth-first search for a cycle.
	const (
		unseen = iota
		onPath
		done
	)
	state := map[string]int{}
	var stack []string
	var cycle []string
	var visit func(string) bool
	visit = func(n string) bool {
		state[n] = onPath
		stack = append(stack, n)
		for _, d := range deps[n] {
			switch state[d] {
			case onPath:
				i := len(stack) - 1
				for stack[i] != d {
					i--
				}
				cycle = append(append([]string(nil), stack[i:]...), d)
				return true
			case unseen:
				if visit(d) {
					return true
				}
			}
		}
		stack = stack[:len(stack)-1]
		state[n] = done
		return false
	}
	for _, n := range dag.Templates {
		if state[n.Name] == unseen && visit(n.Name) {
			return field.ErrorList{field.Invalid(p.Child("templates").Index(index[cycle[0]]).Child("dependencies"),
				strings.Join(cycle, " -> "), "the dependencies form a cycle")}
		}
	}
	return nil
}

// dag validates a DAG: its graph, and each node's template, params,
// workspaces and result references as far as the templates it names exist.
func (v *Validator) dag(ctx context.Context, ns string, spec *batchv1beta1.WorkflowTemplateSpec, p *field.Path) field.ErrorList {
	dag := spec.DAG
	errs := validateGraph(dag, p)
	if len(errs) > 0 {
		return errs
	}
	templates := map[string]*batchv1beta1.WorkflowTemplateSpec{}
	for _, n := range dag.Templates {
		if _, seen := templates[n.Name]; seen || v.Lookup == nil {
			continue
		}
		t, err := v.Lookup(ctx, ns, n.WorkflowTemplateRef)
		if err != nil {
			errs = append(errs, field.InternalError(p, err))
			continue
		}
		templates[n.Name] = t
	}
	dagParams := map[string]bool{}
	for _, x := range spec.Params {
		dagParams["params."+x.Name] = true
	}
	dagWorkspaces := map[string]bool{}
	for _, x := range spec.Workspaces {
		dagWorkspaces[x.Name] = true
	}
	checkRefs := func(fp *field.Path, s string) {
		for _, ref := range References(s) {
			if node, result, ok := ResultReference(ref); ok {
				t := templates[node]
				if t != nil && !declaresResult(t, result) {
					errs = append(errs, field.Invalid(fp, s, fmt.Sprintf("node %s's template %s declares no result %s", node, nodeRef(dag, node), result)))
				}
				continue
			}
			if strings.HasPrefix(ref, "params.") && !dagParams[ref] {
				errs = append(errs, field.Invalid(fp, s, fmt.Sprintf("the DAG declares no param %s", strings.TrimPrefix(ref, "params."))))
			}
		}
	}
	for i, n := range dag.Templates {
		np := p.Child("templates").Index(i)
		given := map[string]bool{}
		for j, x := range n.Params {
			given[x.Name] = true
			checkRefs(np.Child("params").Index(j).Child("value"), x.Value)
		}
		for j, w := range n.When {
			checkRefs(np.Child("when").Index(j).Child("input"), w.Input)
			for k, val := range w.Values {
				checkRefs(np.Child("when").Index(j).Child("values").Index(k), val)
			}
		}
		for j, w := range n.Workspaces {
			if !dagWorkspaces[w.Workspace] {
				errs = append(errs, field.NotFound(np.Child("workspaces").Index(j).Child("workspace"), w.Workspace))
			}
			errs = append(errs, validateSubPath(np.Child("workspaces").Index(j).Child("subPath"), w.SubPath)...)
		}
		t := templates[n.Name]
		if t == nil {
			continue
		}
		for _, x := range t.Params {
			if x.Default == nil && !given[x.Name] {
				errs = append(errs, field.Required(np.Child("params"), fmt.Sprintf("template %s needs param %s", n.WorkflowTemplateRef, x.Name)))
			}
		}
		bound := map[string]bool{}
		for _, w := range n.Workspaces {
			bound[w.Name] = true
		}
		for _, w := range t.Workspaces {
			if !w.Optional && !bound[w.Name] {
				errs = append(errs, field.Required(np.Child("workspaces"), fmt.Sprintf("template %s needs workspace %s", n.WorkflowTemplateRef, w.Name)))
			}
		}
	}
	for i, r := range spec.Results {
		checkRefs(p.Root().Child("spec", "results").Index(i).Child("value"), r.Value)
	}
	return errs
}

// nodeRef returns the template a node of dag runs.
func nodeRef(dag *batchv1beta1.DAGWorkflowTemplate, node string) string {
	for _, n := range dag.Templates {
		if n.Name == node {
			return n.WorkflowTemplateRef
		}
	}
	return ""
}

func declaresResult(t *batchv1beta1.WorkflowTemplateSpec, name string) bool {
	for _, r := range t.Results {
		if r.Name == name {
			return true
		}
	}
	return false
}

// validateSubPath refuses a subPath that is absolute or leaves its volume.
func validateSubPath(fp *field.Path, sub string) field.ErrorList {
	if sub == "" {
		return nil
	}
	if path.IsAbs(sub) || strings.Contains(sub, "\\") {
		return field.ErrorList{field.Invalid(fp, sub, "must be a relative path")}
	}
	for _, part := range strings.Split(sub, "/") {
		if part == ".." {
			return field.ErrorList{field.Invalid(fp, sub, "must not contain '..'")}
		}
	}
	return nil
}

// RunSpec checks a WorkflowRun's spec in namespace ns: its template, which
// must exist, the params and workspaces it needs, and the depth.
func (v *Validator) RunSpec(ctx context.Context, ns string, spec *batchv1beta1.WorkflowRunSpec, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	var t *batchv1beta1.WorkflowTemplateSpec
	switch {
	case spec.WorkflowTemplateRef != "" && spec.WorkflowTemplateSpec != nil:
		return field.ErrorList{field.Forbidden(p.Child("workflowTemplateSpec"), "set spec.workflowTemplateRef or spec.workflowTemplateSpec, not both")}
	case spec.WorkflowTemplateSpec != nil:
		t = spec.WorkflowTemplateSpec
		errs = append(errs, v.TemplateSpec(ctx, ns, t, p.Child("workflowTemplateSpec"))...)
	case spec.WorkflowTemplateRef == "":
		return field.ErrorList{field.Required(p.Child("workflowTemplateRef"), "set spec.workflowTemplateRef or spec.workflowTemplateSpec")}
	case v.Lookup != nil:
		var err error
		if t, err = v.Lookup(ctx, ns, spec.WorkflowTemplateRef); err != nil {
			return field.ErrorList{field.InternalError(p.Child("workflowTemplateRef"), err)}
		}
		if t == nil {
			return field.ErrorList{field.NotFound(p.Child("workflowTemplateRef"), spec.WorkflowTemplateRef)}
		}
	}
	if spec.Depth > batchv1beta1.MaxWorkflowRunDepth {
		errs = append(errs, field.Invalid(p.Child("depth"), spec.Depth, fmt.Sprintf("runs nest at most %d deep", batchv1beta1.MaxWorkflowRunDepth)))
	}
	if spec.Timeout != nil && spec.Timeout.Duration < 0 {
		errs = append(errs, field.Invalid(p.Child("timeout"), spec.Timeout.Duration.String(), "must not be negative"))
	}
	for i, w := range spec.Workspaces {
		errs = append(errs, validateSubPath(p.Child("workspaces").Index(i).Child("subPath"), w.SubPath)...)
	}
	if t == nil {
		return errs
	}
	given := map[string]bool{}
	for _, x := range spec.Params {
		given[x.Name] = true
	}
	for _, x := range t.Params {
		if x.Default == nil && !given[x.Name] {
			errs = append(errs, field.Required(p.Child("params"), "the template needs param "+x.Name))
		}
	}
	declared := map[string]bool{}
	for _, w := range t.Workspaces {
		declared[w.Name] = true
	}
	bound := map[string]bool{}
	for i, w := range spec.Workspaces {
		bound[w.Name] = true
		if !declared[w.Name] {
			errs = append(errs, field.NotFound(p.Child("workspaces").Index(i).Child("name"), w.Name))
		}
	}
	for _, w := range t.Workspaces {
		if !w.Optional && !bound[w.Name] {
			errs = append(errs, field.Required(p.Child("workspaces"), "the template needs workspace "+w.Name))
		}
	}
	if typ, _ := TemplateType(t, nil); typ == batchv1beta1.WorkflowTemplateTypeResource && spec.ServiceAccountName == "" {
		errs = append(errs, field.Required(p.Child("serviceAccountName"), "a Resource template's object is created with this service account's permissions"))
	}
	return errs
}

// strictFields are the parts of a template spec that strict decoding
// checks, by JSON name: unknown fields there are typos that the CRD
// schema, which leaves them schemaless, does not catch.
var strictFields = map[string]func() any{
	"pod":                   func() any { return &corev1.PodSpec{} },
	"seqPod":                func() any { return &batchv1beta1.SeqPodWorkflowTemplate{} },
	"genericJob":            func() any { return &batchv1beta1.GenericJobWorkflowTemplate{} },
	"tensorflowTrainingJob": func() any { return &batchv1beta1.TensorFlowTrainingJobWorkflowTemplate{} },
	"pytorchTrainingJob":    func() any { return &batchv1beta1.PyTorchTrainingJobWorkflowTemplate{} },
	"xgboostTrainingJob":    func() any { return &batchv1beta1.XGBoostTrainingJobWorkflowTemplate{} },
	"colossalaiJob":         func() any { return &batchv1beta1.ColossalAIJobWorkflowTemplate{} },
	"deepspeedJob":          func() any { return &batchv1beta1.DeepSpeedJobWorkflowTemplate{} },
	"mpiJob":                func() any { return &batchv1beta1.MPIJobWorkflowTemplate{} },
	"beamJob":               func() any { return &batchv1beta1.BeamJobWorkflowTemplate{} },
}

// StrictTemplateSpec refuses unknown fields in the schemaless parts of a
// template spec given as JSON.
func StrictTemplateSpec(raw json.RawMessage, p *field.Path) field.ErrorList {
	var fields map[string]json.RawMessage
	if len(raw) == 0 || json.Unmarshal(raw, &fields) != nil {
		return nil
	}
	var errs field.ErrorList
	for name, newObj := range strictFields {
		b, ok := fields[name]
		if !ok || string(b) == "null" {
			continue
		}
		dec := json.NewDecoder(bytes.NewReader(b))
		dec.DisallowUnknownFields()
		if err := dec.Decode(newObj()); err != nil {
			errs = append(errs, field.Invalid(p.Child(name), "<object>", strings.TrimPrefix(err.Error(), "json: ")))
		}
	}
	return errs
}
