package directory

import (
	"errors"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/go-logr/logr"
	"github.com/go-logr/logr/funcr"

	"github.com/accelstack/accelstack/pkg/directory"
	"github.com/accelstack/accelstack/test/harness"
	"github.com/accelstack/accelstack/test/testutil"
)

// Passwords of the test's users; the log must hold none of them.
const (
	alicePassword = "alice-Pa55word"
	bobPassword   = "bob-Pa55word"
)

// logBuffer collects what a logr.Logger writes.
type logBuffer struct {
	mu    sync.Mutex
	lines []string
}

func (b *logBuffer) logger() logr.Logger {
	return funcr.New(func(prefix, args string) {
		b.mu.Lock()
		defer b.mu.Unlock()
		b.lines = append(b.lines, prefix+" "+args)
	}, funcr.Options{Verbosity: 10})
}

func (b *logBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return strings.Join(b.lines, "\n")
}

// config is the directory's configuration as a site would write it.
func config(l *harness.LDAP) directory.LDAPConfig {
	return directory.LDAPConfig{
		URL: l.URL, BindDN: l.BindDN, BindPassword: l.BindPassword,
		UserBaseDN: l.UserBaseDN, GroupBaseDN: l.GroupBaseDN,
	}
}

func TestLDAP(t *testing.T) {
	t.Parallel()
	l := harness.StartLDAP(t,
		harness.LDAPUser{Name: "alice", Password: alicePassword, Groups: []string{"ml-team", "admins"}},
		harness.LDAPUser{Name: "bob", Password: bobPassword},
		harness.LDAPUser{Name: "carol", Password: "carol-Pa55word",
			Groups: []string{"system:masters", "ml-team", "bell\arings"}},
	)
	var logs logBuffer
	ctx := logr.NewContext(testutil.Context(t), logs.logger())
	d, err := directory.NewLDAP(config(l))
	if err != nil {
		t.Fatal(err)
	}
	authenticate := func(t *testing.T, name, password string) (directory.Identity, error) {
		t.Helper()
		id, err := d.Authenticate(ctx, name, password)
		t.Logf("Authenticate(%q) = %+v, %v", name, id, err)
		return id, err
	}
	badLogin := func(t *testing.T, name, password string) {
		t.Helper()
		if id, err := authenticate(t, name, password); !errors.Is(err, directory.ErrBadLogin) {
			t.Errorf("Authenticate(%q) = %+v, %v; want ErrBadLogin", name, id, err)
		}
	}

	t.Run("groups sorted", func(t *testing.T) {
		id, err := authenticate(t, "alice", alicePassword)
		if err != nil {
			t.Fatal(err)
		}
		if id.Name != "alice" || !slices.Equal(id.Groups, []string{"admins", "ml-team"}) {
			t.Errorf("identity %+v, want alice in admins and ml-team", id)
		}
	})
	t.Run("the directory's spelling", func(t *testing.T) {
		id, err := authenticate(t, "ALICE", alicePassword)
		if err != nil || id.Name != "alice" {
			t.Errorf("identity %+v, %v; want alice", id, err)
		}
	})
	t.Run("no groups", func(t *testing.T) {
		id, err := authenticate(t, "bob", bobPassword)
		if err != nil || id.Name != "bob" || len(id.Groups) != 0 {
			t.Errorf("identity %+v, %v; want bob in no group", id, err)
		}
	})
	t.Run("groups not allowed dropped", func(t *testing.T) {
		id, err := authenticate(t, "carol", "carol-Pa55word")
		if err != nil || !slices.Equal(id.Groups, []string{"ml-team"}) {
			t.Errorf("identity %+v, %v; want carol in ml-team only", id, err)
		}
		if log := logs.String(); !strings.Contains(log, "system:masters") || !strings.Contains(log, `bell\arings`) {
			t.Errorf("the dropped groups are not logged:\n%s", log)
		}
	})
	t.Run("wrong password", func(t *testing.T) {
		badLogin(t, "alice", bobPassword)
		badLogin(t, "alice", alicePassword+" ")
	})
	t.Run("unknown user", func(t *testing.T) { badLogin(t, "mallory", alicePassword) })
	t.Run("empty password", func(t *testing.T) { badLogin(t, "alice", "") })
	t.Run("filter injection", func(t *testing.T) {
		for _, name := range []string{"*", "a*", "alice)(uid=*", "*)(|(uid=*", "alice)(|(objectClass=*)", `alice\2a`, "alice\x00"} {
			badLogin(t, name, alicePassword)
		}
	})
	t.Run("reserved name", func(t *testing.T) {
		if _, err := authenticate(t, "system:admin", alicePassword); !errors.Is(err, directory.ErrInvalidName) {
			t.Errorf("error %v, want ErrInvalidName", err)
		}
	})
	t.Run("more than one entry", func(t *testing.T) {
		c := config(l)
		c.UserFilter = "(|(uid=%s)(uid=bob))"
		d, err := directory.NewLDAP(c)
		if err != nil {
			t.Fatal(err)
		}
		if id, err := d.Authenticate(ctx, "alice", alicePassword); !errors.Is(err, directory.ErrBadLogin) {
			t.Errorf("Authenticate = %+v, %v; want ErrBadLogin", id, err)
		}
		if !strings.Contains(logs.String(), "more than one entry") {
			t.Errorf("the directory problem is not logged:\n%s", logs.String())
		}
	})
	t.Run("anonymous search", func(t *testing.T) {
		c := config(l)
		c.BindDN, c.BindPassword = "", ""
		d, err := directory.NewLDAP(c)
		if err != nil {
			t.Fatal(err)
		}
		id, err := d.Authenticate(ctx, "alice", alicePassword)
		if err != nil || !slices.Equal(id.Groups, []string{"admins", "ml-team"}) {
			t.Errorf("identity %+v, %v; want alice in admins and ml-team", id, err)
		}
		if _, err := d.Authenticate(ctx, "alice", bobPassword); !errors.Is(err, directory.ErrBadLogin) {
			t.Errorf("wrong password: %v, want ErrBadLogin", err)
		}
	})
	t.Run("wrong service account", func(t *testing.T) {
		c := config(l)
		c.BindPassword = "not-the-password"
		d, err := directory.NewLDAP(c)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := d.Authenticate(ctx, "alice", alicePassword); err == nil || errors.Is(err, directory.ErrBadLogin) {
			t.Errorf("error %v, want a directory error, not ErrBadLogin", err)
		}
	})
	t.Run("server gone", func(t *testing.T) {
		c := config(l)
		c.URL = "ldap://127.0.0.1:1"
		d, err := directory.NewLDAP(c)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := d.Authenticate(ctx, "alice", alicePassword); err == nil || errors.Is(err, directory.ErrBadLogin) {
			t.Errorf("error %v, want a connection error, not ErrBadLogin", err)
		}
	})
	for _, p := range []string{alicePassword, bobPassword, "carol-Pa55word", l.BindPassword} {
		if strings.Contains(logs.String(), p) {
			t.Errorf("the log holds a password:\n%s", logs.String())
		}
	}
}
