package directory

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"github.com/go-logr/logr/funcr"
)

// countingListener accepts connections on loopback, counts and closes them.
type countingListener struct {
	l net.Listener
	n atomic.Int64
}

func listen(t *testing.T) *countingListener {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	c := &countingListener{l: l}
	go func() {
		for {
			conn, err := l.Accept()
			if err != nil {
				return
			}
			c.n.Add(1)
			conn.Close()
		}
	}()
	return c
}

// connections returns how many connections were made so far: it makes one
// more itself and waits until it is counted, so that none made before it
// is still on its way.
func (c *countingListener) connections(t *testing.T) int64 {
	t.Helper()
	before := c.n.Load()
	conn, err := net.Dial("tcp", c.l.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	conn.Close()
	deadline := time.Now().Add(5 * time.Second)
	for c.n.Load() == before {
		if time.Now().After(deadline) {
			t.Fatal("the listener counted no connection")
		}
		time.Sleep(time.Millisecond)
	}
	return c.n.Load() - 1
}

func TestCheckName(t *testing.T) {
	for name, ok := range map[string]bool{
		"alice":                   true,
		"Alice.O'Neil-2":          true,
		"李雷":                      true,
		"alice)(uid=*":            true, // escaped in the filter, not refused
		strings.Repeat("a", 253):  true,
		"":                        false,
		strings.Repeat("a", 254):  false,
		"ali\x00ce":               false,
		"alice\n":                 false,
		"ali\tce":                 false,
		"ali\x7fce":               false,
		"ali\u0085ce":             false,
		"ali\xffce":               false,
		"system:admin":            false,
		"system:serviceaccount:x": false,
		"SYSTEM:masters":          false,
		"\u017fystem:masters":     false, // long s folds to s
		"system":                  true,
		"systemd":                 true,
	} {
		if err := checkName(name); (err == nil) != ok {
			t.Errorf("checkName(%q) = %v, want ok %v", name, err, ok)
		}
	}
}

func TestAuthenticateRefusesBeforeConnecting(t *testing.T) {
	srv := listen(t)
	c := validConfig()
	c.URL = "ldap://" + srv.l.Addr().String()
	l, err := NewLDAP(c)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, password string
		invalidName    bool
	}{
		{"alice", "", false},
		{"", "secret", true},
		{strings.Repeat("a", 254), "secret", true},
		{"alice\x00", "secret", true},
		{"alice\r\n", "secret", true},
		{"system:admin", "secret", true},
		{"System:Masters", "secret", true},
	} {
		_, err := l.Authenticate(context.Background(), tc.name, tc.password)
		if !errors.Is(err, ErrBadLogin) || errors.Is(err, ErrInvalidName) != tc.invalidName {
			t.Errorf("Authenticate(%q, %q) = %v, want ErrBadLogin (ErrInvalidName %v)", tc.name, tc.password, err, tc.invalidName)
		}
	}
	if n := srv.connections(t); n != 0 {
		t.Errorf("%d connections to the server, want none", n)
	}
}

func TestAuthenticateTimesOut(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0") // accepts (backlog) but never answers
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	c := validConfig()
	c.URL, c.Timeout = "ldap://"+l.Addr().String(), 200*time.Millisecond
	d, err := NewLDAP(c)
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	_, err = d.Authenticate(context.Background(), "alice", "secret")
	if err == nil || errors.Is(err, ErrBadLogin) {
		t.Errorf("Authenticate against a silent server = %v, want an error other than ErrBadLogin", err)
	}
	if took := time.Since(start); took > 3*time.Second {
		t.Errorf("Authenticate took %s with a Timeout of 200ms", took)
	}

	c.Timeout = time.Minute
	if d, err = NewLDAP(c); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	start = time.Now()
	if _, err = d.Authenticate(ctx, "alice", "secret"); !errors.Is(err, context.DeadlineExceeded) || errors.Is(err, ErrBadLogin) {
		t.Errorf("Authenticate with a context that ends = %v, want context.DeadlineExceeded", err)
	}
	if took := time.Since(start); took > 3*time.Second {
		t.Errorf("Authenticate took %s with a context of 200ms", took)
	}
}

func TestFiltersEscape(t *testing.T) {
	c := validConfig()
	c.UserFilter = "(&(objectClass=inetOrgPerson)(uid=%s))"
	l, err := NewLDAP(c)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := l.userFilter(`alice)(uid=*`), `(&(objectClass=inetOrgPerson)(uid=alice\29\28uid=\2a))`; got != want {
		t.Errorf("userFilter = %s, want %s", got, want)
	}
	if got, want := l.userFilter(`a\b%s`), `(&(objectClass=inetOrgPerson)(uid=a\5cb%s))`; got != want {
		t.Errorf("userFilter = %s, want %s", got, want)
	}
	if got, want := l.groupFilter(`uid=a\,b*,ou=people,dc=example,dc=org`), `(member=uid=a\5c,b\2a,ou=people,dc=example,dc=org)`; got != want {
		t.Errorf("groupFilter = %s, want %s", got, want)
	}
}

func TestCleanGroups(t *testing.T) {
	var logged []string
	log := funcr.New(func(prefix, args string) { logged = append(logged, args) }, funcr.Options{})
	got := cleanGroups(log, []string{"ml-team", "admins", "ml-team", "system:masters", "bad\x1bname", "", "Admins"})
	if want := []string{"Admins", "admins", "ml-team"}; fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("cleanGroups = %q, want %q", got, want)
	}
	if len(logged) != 3 || !strings.Contains(strings.Join(logged, "\n"), "system:masters") {
		t.Errorf("logged %q, want the three dropped names", logged)
	}

	var many []string
	for i := range 150 {
		many = append(many, fmt.Sprintf("g%03d", 149-i))
	}
	got = cleanGroups(logr.Discard(), many)
	if len(got) != MaxGroups || got[0] != "g000" || got[MaxGroups-1] != "g099" {
		t.Errorf("cleanGroups of 150 kept %d, %q..%q; want g000..g099", len(got), got[0], got[len(got)-1])
	}
	if got := cleanGroups(logr.Discard(), nil); got != nil {
		t.Errorf("cleanGroups(nil) = %q, want nil", got)
	}
}
