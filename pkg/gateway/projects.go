package gateway

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"strings"

	"github.com/go-logr/logr"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/accelstack/accelstack/pkg/gateway/gatewayapi"
	"github.com/accelstack/accelstack/pkg/members"
)

// maxProjects bounds the projects the projects API reads the members of.
const maxProjects = 1000

// projectsAPI answers GET ProjectsPath: the caller's projects, those
// where they or one of their groups is a member, with their scopes, so
// that a console's project selector offers what the user works in.
type projectsAPI struct {
	c     client.Client
	authn Authenticator
	log   logr.Logger
}

func (a *projectsAPI) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet {
		w.Header().Set("Allow", "GET")
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
		return
	}
	user, ok := authenticate(w, r, a.authn, a.log)
	if !ok {
		return
	}
	list, err := myProjects(r.Context(), a.c, user)
	if err != nil {
		a.log.Error(err, "Listing the projects failed", "user", user.Name)
		http.Error(w, "the projects are unavailable", http.StatusServiceUnavailable)
		return
	}
	writeJSON(w, http.StatusOK, list)
}

// myProjects returns the projects user is a member of, by name.
func myProjects(ctx context.Context, c client.Reader, user *User) (gatewayapi.ProjectList, error) {
	projects := &metav1.PartialObjectMetadataList{}
	projects.SetGroupVersionKind(schema.GroupVersionKind{Group: group, Version: "v1beta1", Kind: "ProjectList"})
	if err := c.List(ctx, projects, client.Limit(maxProjects)); err != nil {
		return gatewayapi.ProjectList{}, fmt.Errorf("listing the projects: %w", err)
	}
	out := gatewayapi.ProjectList{Items: []gatewayapi.Project{}}
	for _, p := range projects.Items {
		ms, err := members.List(ctx, c, p.Name)
		if err != nil {
			return gatewayapi.ProjectList{}, err
		}
		if mine, ok := membership(ms, user); ok {
			mine.Name = p.Name
			out.Items = append(out.Items, mine)
		}
	}
	slices.SortFunc(out.Items, func(a, b gatewayapi.Project) int { return strings.Compare(a.Name, b.Name) })
	return out, nil
}

// membership merges the memberships of user and their groups among ms.
func membership(ms []members.Member, user *User) (gatewayapi.Project, bool) {
	var p gatewayapi.Project
	found := false
	for _, m := range ms {
		if (m.Kind != "User" || m.Name != user.Name) && (m.Kind != "Group" || !slices.Contains(user.Groups, m.Name)) {
			continue
		}
		found = true
		p.Admin = p.Admin || m.Admin
		for _, s := range m.Scopes {
			if !slices.Contains(p.Scopes, string(s)) {
				p.Scopes = append(p.Scopes, string(s))
			}
		}
	}
	if p.Scopes == nil {
		p.Scopes = []string{}
	}
	slices.Sort(p.Scopes)
	return p, found
}
