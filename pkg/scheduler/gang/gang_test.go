package gang

import (
	"strings"
	"testing"

	schedv1beta1 "github.com/accelstack/accelstack/api/scheduler/v1beta1"
)

func count(roles ...string) Count {
	var c Count
	for _, r := range roles {
		c.Add(r)
	}
	return c
}

func TestCountAdd(t *testing.T) {
	c := count("worker", "", "worker", "master", "")
	if c.Total != 5 {
		t.Errorf("Total = %d, want 5", c.Total)
	}
	if len(c.ByRole) != 2 || c.ByRole["worker"] != 2 || c.ByRole["master"] != 1 {
		t.Errorf("ByRole = %v, want map[master:1 worker:2]", c.ByRole)
	}
	if _, ok := c.ByRole[""]; ok {
		t.Errorf("pods without a role are counted under role \"\": %v", c.ByRole)
	}
	var none Count
	none.Add("")
	if none.Total != 1 || none.ByRole != nil {
		t.Errorf("one pod without role: %+v", none)
	}
}

func TestShortfall(t *testing.T) {
	roles := []schedv1beta1.Role{{Name: "worker", MinMember: 2}, {Name: "master", MinMember: 1}}
	tests := []struct {
		name string
		spec schedv1beta1.PodGroupSpec
		c    Count
		// want is "" when satisfied, otherwise substrings of the shortfall.
		want []string
	}{
		{name: "empty spec, no pods", spec: schedv1beta1.PodGroupSpec{}, c: Count{}},
		{name: "total exactly met", spec: schedv1beta1.PodGroupSpec{MinMember: 3}, c: count("", "", "")},
		{name: "total exceeded", spec: schedv1beta1.PodGroupSpec{MinMember: 2}, c: count("", "", "")},
		{name: "total short", spec: schedv1beta1.PodGroupSpec{MinMember: 4}, c: count("", "", ""), want: []string{"3 of minMember 4"}},
		{name: "no pods at all", spec: schedv1beta1.PodGroupSpec{MinMember: 1}, want: []string{"0 of minMember 1"}},
		{
			name: "total short is reported before a role",
			spec: schedv1beta1.PodGroupSpec{MinMember: 4, Roles: roles},
			c:    count("worker"),
			want: []string{"1 of minMember 4 pods"},
		},
		{
			name: "role short names the role",
			spec: schedv1beta1.PodGroupSpec{MinMember: 3, Roles: roles},
			c:    count("worker", "master", "other"),
			want: []string{`role "worker"`, "1 of minMember 2"},
		},
		{
			name: "roles short are reported in name order",
			spec: schedv1beta1.PodGroupSpec{MinMember: 1, Roles: roles},
			c:    count("other"),
			want: []string{`role "master"`, "0 of minMember 1"},
		},
		{
			name: "satisfied with roles",
			spec: schedv1beta1.PodGroupSpec{MinMember: 3, Roles: roles},
			c:    count("worker", "worker", "master"),
		},
		{
			name: "satisfied with roles and extra pods",
			spec: schedv1beta1.PodGroupSpec{MinMember: 3, Roles: roles},
			c:    count("worker", "worker", "worker", "master", ""),
		},
		{
			name: "pods of unlisted roles and without role count in the total",
			spec: schedv1beta1.PodGroupSpec{MinMember: 4, Roles: []schedv1beta1.Role{{Name: "worker", MinMember: 1}}},
			c:    count("worker", "ps", "ps", ""),
		},
		{
			name: "role with minMember 0 asks for nothing",
			spec: schedv1beta1.PodGroupSpec{MinMember: 2, Roles: []schedv1beta1.Role{{Name: "launcher"}, {Name: "worker", MinMember: 2}}},
			c:    count("worker", "worker"),
		},
		{
			name: "roles without group minMember",
			spec: schedv1beta1.PodGroupSpec{Roles: []schedv1beta1.Role{{Name: "worker", MinMember: 2}}},
			c:    count("worker"),
			want: []string{`role "worker"`, "1 of minMember 2"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			spec := tt.spec
			got := Shortfall(&spec, tt.c)
			if len(tt.want) == 0 {
				if got != "" {
					t.Errorf("Shortfall = %q, want none", got)
				}
				if !Satisfied(&spec, tt.c) {
					t.Error("Satisfied = false, want true")
				}
				return
			}
			if got == "" {
				t.Fatal("Shortfall = \"\", want a shortfall")
			}
			for _, s := range tt.want {
				if !strings.Contains(got, s) {
					t.Errorf("Shortfall = %q, does not contain %q", got, s)
				}
			}
			if Satisfied(&spec, tt.c) {
				t.Error("Satisfied = true, want false")
			}
		})
	}
}

func TestShortfallLeavesSpecRolesOrder(t *testing.T) {
	spec := schedv1beta1.PodGroupSpec{Roles: []schedv1beta1.Role{{Name: "worker", MinMember: 1}, {Name: "master", MinMember: 1}}}
	Shortfall(&spec, Count{})
	if spec.Roles[0].Name != "worker" || spec.Roles[1].Name != "master" {
		t.Errorf("Shortfall reordered spec.Roles: %v", spec.Roles)
	}
}
