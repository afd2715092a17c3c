package gateway

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"github.com/go-logr/logr"
	authorizationv1 "k8s.io/api/authorization/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/util/validation"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/accelstack/accelstack/pkg/gateway/gatewayapi"
	"github.com/accelstack/accelstack/pkg/members"
)

// ProjectsPath is the API of the projects' members, under the security
// server's prefix:
//
//	GET    ProjectsPath/<project>/members               the members: 200 {"items": [...]}
//	PUT    ProjectsPath/<project>/members/<kind>/<name> {"scopes": [...], "admin": bool}: 200 with the member
//	DELETE ProjectsPath/<project>/members/<kind>/<name> ends the membership: 204
//
// <kind> is User or Group; <name> is path-escaped.
const ProjectsPath = gatewayapi.ProjectsPath

// membersResource is the virtual resource whose rights the members API
// asks RBAC about in the project's namespace: list to see the members
// (every scope's role), update and delete to change them (the project
// admin's role).
const membersResource = "members"

// projectsResource is the cluster-scoped Project: making or unmaking a
// project admin takes update on it, a cluster admin's right.
const projectsResource = "projects"

// maxMemberRequest bounds the body of a PUT.
const maxMemberRequest = 4 << 10

// membersAPI serves ProjectsPath. The membership is the member
// RoleBindings of package members, which the gateway writes with its own
// rights once RBAC says the caller may: a caller cannot grant through it
// more than the member roles. API keys may not manage members.
type membersAPI struct {
	c     client.Client
	authn Authenticator
	log   logr.Logger
}

// memberRequest is the body of a PUT. Admin nil leaves the admin role as
// it is.
type memberRequest struct {
	Scopes []members.Scope `json:"scopes"`
	Admin  *bool           `json:"admin,omitempty"`
}

func (a *membersAPI) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	user, ok := authenticateAccount(w, r, a.authn, a.log, "members")
	if !ok {
		return
	}
	project, kind, name, err := parseMembersPath(r.URL.EscapedPath())
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	switch {
	case r.Method == http.MethodGet && kind == "":
		a.list(w, r, user, project)
	case r.Method == http.MethodPut && kind != "":
		a.put(w, r, user, project, kind, name)
	case r.Method == http.MethodDelete && kind != "":
		a.delete(w, r, user, project, kind, name)
	default:
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
	}
}

// parseMembersPath splits ProjectsPath/<project>/members[/<kind>/<name>].
func parseMembersPath(escaped string) (project, kind, name string, err error) {
	rest, ok := strings.CutPrefix(escaped, ProjectsPath+"/")
	if !ok {
		return "", "", "", errors.New("not a members path")
	}
	parts := strings.Split(rest, "/")
	if (len(parts) != 2 && len(parts) != 4) || parts[1] != membersResource {
		return "", "", "", fmt.Errorf("want %s/<project>/members or %s/<project>/members/<User|Group>/<name>", ProjectsPath, ProjectsPath)
	}
	project = parts[0]
	if errs := validation.IsDNS1123Label(project); len(errs) > 0 {
		return "", "", "", fmt.Errorf("project %q: %s", project, strings.Join(errs, "; "))
	}
	if len(parts) == 2 {
		return project, "", "", nil
	}
	kind = parts[2]
	if name, err = url.PathUnescape(parts[3]); err != nil {
		return "", "", "", fmt.Errorf("member name: %w", err)
	}
	if err := members.ValidateSubject(kind, name); err != nil {
		return "", "", "", err
	}
	return project, kind, name, nil
}

func (a *membersAPI) list(w http.ResponseWriter, r *http.Request, user *User, project string) {
	if !a.may(r.Context(), w, user, project, "list") {
		return
	}
	items, err := members.List(r.Context(), a.c, project)
	if err != nil {
		a.fail(w, project, err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"items": items})
}

func (a *membersAPI) put(w http.ResponseWriter, r *http.Request, user *User, project, kind, name string) {
	var req memberRequest
	d := json.NewDecoder(io.LimitReader(r.Body, maxMemberRequest))
	d.DisallowUnknownFields()
	if err := d.Decode(&req); err != nil {
		http.Error(w, "the body is not a member request: "+err.Error(), http.StatusBadRequest)
		return
	}
	m := members.Member{Kind: kind, Name: name, Scopes: slices.Compact(slices.Sorted(slices.Values(req.Scopes)))}
	if err := m.Validate(); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	if !a.may(r.Context(), w, user, project, "update") {
		return
	}
	if req.Admin != nil && !a.mayChangeAdmin(r.Context(), w, user, project) {
		return
	}
	m.Admin = req.Admin != nil && *req.Admin
	if err := members.Set(r.Context(), a.c, project, m); err != nil {
		a.fail(w, project, err)
		return
	}
	if req.Admin != nil && !*req.Admin {
		if err := members.RemoveAdmin(r.Context(), a.c, project, kind, name); err != nil {
			a.fail(w, project, err)
			return
		}
	}
	admin := "unchanged"
	if req.Admin != nil {
		admin = strconv.FormatBool(*req.Admin)
	}
	a.log.Info("Project member set", "user", user.Name, "project", project, "kind", kind, "member", name, "scopes", m.Scopes, "admin", admin)
	now, err := members.Get(r.Context(), a.c, project, kind, name)
	if err != nil {
		a.fail(w, project, err)
		return
	}
	writeJSON(w, http.StatusOK, now)
}

func (a *membersAPI) delete(w http.ResponseWriter, r *http.Request, user *User, project, kind, name string) {
	if !a.may(r.Context(), w, user, project, "delete") {
		return
	}
	m, err := members.Get(r.Context(), a.c, project, kind, name)
	if err != nil {
		a.fail(w, project, err)
		return
	}
	if m.Admin && !a.mayChangeAdmin(r.Context(), w, user, project) {
		return
	}
	if err := members.Remove(r.Context(), a.c, project, kind, name); err != nil {
		a.fail(w, project, err)
		return
	}
	a.log.Info("Project member removed", "user", user.Name, "project", project, "kind", kind, "member", name)
	w.WriteHeader(http.StatusNoContent)
}

// may answers 403 and returns false unless user may verb the members of
// project.
func (a *membersAPI) may(ctx context.Context, w http.ResponseWriter, user *User, project, verb string) bool {
	return a.check(ctx, w, user, authorizationv1.ResourceAttributes{Namespace: project, Verb: verb, Group: group, Resource: membersResource})
}

// mayChangeAdmin answers 403 and returns false unless user may update the
// Project itself.
func (a *membersAPI) mayChangeAdmin(ctx context.Context, w http.ResponseWriter, user *User, project string) bool {
	return a.check(ctx, w, user, authorizationv1.ResourceAttributes{Verb: "update", Group: group, Resource: projectsResource, Name: project})
}

// check asks RBAC whether user may do attrs, answering 403 (or 503 when
// the API server does not answer) and returning false when not.
func (a *membersAPI) check(ctx context.Context, w http.ResponseWriter, user *User, attrs authorizationv1.ResourceAttributes) bool {
	ok, err := reviewAccess(ctx, a.c, user, attrs)
	if err != nil {
		a.log.Error(err, "Asking for access failed", "user", user.Name)
		http.Error(w, "authorization is unavailable", http.StatusServiceUnavailable)
		return false
	}
	if !ok {
		what := attrs.Resource
		if attrs.Name != "" {
			what += " " + attrs.Name
		}
		if attrs.Namespace != "" {
			what += " of " + attrs.Namespace
		}
		http.Error(w, fmt.Sprintf("forbidden: %s may not %s %s", user.Name, attrs.Verb, what), http.StatusForbidden)
	}
	return ok
}

// fail answers an error of the membership store.
func (a *membersAPI) fail(w http.ResponseWriter, project string, err error) {
	switch {
	case errors.Is(err, members.ErrInvalid), errors.Is(err, members.ErrTooMany):
		http.Error(w, err.Error(), http.StatusBadRequest)
	case errors.Is(err, members.ErrConflict):
		http.Error(w, err.Error(), http.StatusConflict)
	case errors.Is(err, members.ErrNoMember):
		http.Error(w, err.Error(), http.StatusNotFound)
	case apierrors.IsForbidden(err) || apierrors.IsNotFound(err):
		// The gateway's rights are bound in Project namespaces only.
		http.Error(w, fmt.Sprintf("no project %s", project), http.StatusNotFound)
	default:
		a.log.Error(err, "The membership store failed", "project", project)
		http.Error(w, "the membership store is unavailable", http.StatusServiceUnavailable)
	}
}
