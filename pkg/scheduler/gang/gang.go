// Package gang decides when a PodGroup's pods may be bound: only all
// together, once the group has the pods its minMember and every role's
// minMember ask for. The scheduler's Permit plugin counts the pods it holds
// ready to bind; the PodGroup status controller counts the pods that exist.
package gang

import (
	"fmt"
	"sort"

	schedv1beta1 "github.com/accelstack/accelstack/api/scheduler/v1beta1"
)

// Count is how many pods of a group there are, in all and per role.
type Count struct {
	Total  int
	ByRole map[string]int
}

// Add counts one pod of role (which may be "").
func (c *Count) Add(role string) {
	c.Total++
	if role == "" {
		return
	}
	if c.ByRole == nil {
		c.ByRole = map[string]int{}
	}
	c.ByRole[role]++
}

// Shortfall says what c lacks to satisfy spec, "" when nothing: the total
// first, then each role in name order.
func Shortfall(spec *schedv1beta1.PodGroupSpec, c Count) string {
	if c.Total < int(spec.MinMember) {
		return fmt.Sprintf("%d of minMember %d pods", c.Total, spec.MinMember)
	}
	roles := append([]schedv1beta1.Role(nil), spec.Roles...)
	sort.Slice(roles, func(i, j int) bool { return roles[i].Name < roles[j].Name })
	for _, r := range roles {
		if n := c.ByRole[r.Name]; n < int(r.MinMember) {
			return fmt.Sprintf("%d of minMember %d pods of role %q", n, r.MinMember, r.Name)
		}
	}
	return ""
}

// Satisfied reports whether c satisfies spec.
func Satisfied(spec *schedv1beta1.PodGroupSpec, c Count) bool {
	return Shortfall(spec, c) == ""
}
