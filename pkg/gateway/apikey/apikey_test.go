package apikey

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/accelstack/accelstack/pkg/members"
)

const ns = "accelstack-system"

func newStore(t *testing.T) (*Store, client.Client, *time.Time) {
	t.Helper()
	scheme := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	c := fake.NewClientBuilder().WithScheme(scheme).Build()
	now := time.Date(2026, 12, 6, 10, 0, 0, 0, time.UTC)
	s := NewStore(c, ns, time.Minute, time.Minute)
	s.now = func() time.Time { return now }
	return s, c, &now
}

func TestLookupRecordsLastUseAtMostEveryMinute(t *testing.T) {
	s, c, now := newStore(t)
	ctx := context.Background()
	value, k, err := s.Create(ctx, Record{User: "alice", Groups: []string{"team"}}, "ci", []members.Scope{members.Deploy, members.Build, members.Build})
	if err != nil {
		t.Fatal(err)
	}
	if got := k.Scopes; len(got) != 2 || got[0] != members.Build || got[1] != members.Deploy {
		t.Errorf("scopes %v, want [build deploy], sorted and once each", got)
	}
	lastUsed := func() string {
		secret := &corev1.Secret{}
		if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: namePrefix + k.ID}, secret); err != nil {
			t.Fatal(err)
		}
		return secret.Annotations[LastUsedAnnotation]
	}
	if got := lastUsed(); got != "" {
		t.Errorf("a new key has a last use: %s", got)
	}
	if _, err := s.Lookup(ctx, value); err != nil {
		t.Fatal(err)
	}
	first := lastUsed()
	if first != "2026-12-06T10:00:00Z" {
		t.Errorf("last used %q after a lookup", first)
	}
	*now = now.Add(30 * time.Second)
	if _, err := s.Lookup(ctx, value); err != nil {
		t.Fatal(err)
	}
	if got := lastUsed(); got != first {
		t.Errorf("last used %q 30 s later, want %q kept", got, first)
	}
	*now = now.Add(2 * time.Minute)
	got, err := s.Lookup(ctx, value)
	if err != nil || got.User != "alice" || got.Groups[0] != "team" {
		t.Fatalf("lookup: %+v %v", got, err)
	}
	if got := lastUsed(); got != "2026-12-06T10:02:30Z" {
		t.Errorf("last used %q after 2.5 min", got)
	}
}

func TestStoreRefuses(t *testing.T) {
	s, c, _ := newStore(t)
	ctx := context.Background()
	for _, tc := range []struct {
		name   string
		scopes []members.Scope
		want   string
	}{
		{"", []members.Scope{members.Build}, "name"},
		{strings.Repeat("x", MaxNameLength+1), []members.Scope{members.Build}, "name"},
		{"bad\nname", []members.Scope{members.Build}, "control"},
		{"x", nil, "scopes"},
		{"x", []members.Scope{"admin"}, `"admin"`},
	} {
		if _, _, err := s.Create(ctx, Record{User: "alice"}, tc.name, tc.scopes); !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Create(%q, %v) = %v, want ErrInvalid naming %s", tc.name, tc.scopes, err, tc.want)
		}
	}
	for i := range MaxKeysPerUser {
		if _, _, err := s.Create(ctx, Record{User: "bob"}, "k", []members.Scope{members.Build}); err != nil {
			t.Fatalf("key %d: %v", i, err)
		}
	}
	if _, _, err := s.Create(ctx, Record{User: "bob"}, "k", []members.Scope{members.Build}); !errors.Is(err, ErrTooMany) {
		t.Errorf("key %d: %v, want ErrTooMany", MaxKeysPerUser+1, err)
	}
	// A Secret of a key's name that the store did not label is no key.
	value := "e4ccd2a3-3425-44b0-8b44-148bd303a0f9"
	h := hashOf(value)
	if err := c.Create(ctx, &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: namePrefix + h[:idLength]},
		Data:       map[string][]byte{hashKey: []byte(h), recordKey: []byte(`{"user":"mallory","scopes":["build"]}`)},
	}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Lookup(ctx, value); !errors.Is(err, ErrUnknown) {
		t.Errorf("lookup of an unlabelled Secret: %v, want ErrUnknown", err)
	}
	if err := s.Delete(ctx, "bob", "../../x"); !errors.Is(err, ErrUnknown) {
		t.Errorf("delete of a malformed ID: %v, want ErrUnknown", err)
	}
	if !Shaped(value) || Shaped("not-a-key") || Shaped(strings.Repeat("a", 36)) {
		t.Error("Shaped")
	}
}
