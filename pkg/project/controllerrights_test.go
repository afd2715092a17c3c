package project

import (
	"testing"

	rbacv1 "k8s.io/api/rbac/v1"
)

func TestSubjectOf(t *testing.T) {
	for _, tc := range []struct {
		user    string
		want    rbacv1.Subject
		wantErr bool
	}{
		{user: "system:serviceaccount:accelstack-system:controllers", want: rbacv1.Subject{Kind: rbacv1.ServiceAccountKind, Namespace: "accelstack-system", Name: "controllers"}},
		{user: "admin", want: rbacv1.Subject{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: "admin"}},
		{user: "system:serviceaccount:accelstack-system", wantErr: true},
		{user: "system:serviceaccount::controllers", wantErr: true},
		{user: "", wantErr: true},
	} {
		got, err := subjectOf(tc.user)
		if (err != nil) != tc.wantErr {
			t.Errorf("subjectOf(%q) error = %v, want error %v", tc.user, err, tc.wantErr)
			continue
		}
		if !tc.wantErr && got != tc.want {
			t.Errorf("subjectOf(%q) = %+v, want %+v", tc.user, got, tc.want)
		}
	}
}
