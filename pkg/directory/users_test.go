package directory

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/crypto/bcrypt"
)

// testHash returns a bcrypt hash of password at cost, cheap at MinCost.
func testHash(t *testing.T, password string, cost int) string {
	t.Helper()
	h, err := bcrypt.GenerateFromPassword([]byte(password), cost)
	if err != nil {
		t.Fatal(err)
	}
	return string(h)
}

// rewriteUsers replaces the file at path with one of content, at once as
// Kubernetes updates a mounted Secret, its modification time an hour past
// the last one, so that a rewrite is seen whatever the file system's time
// resolution and whatever the size.
func rewriteUsers(t *testing.T, path, content string) {
	t.Helper()
	mtime := time.Now()
	if fi, err := os.Stat(path); err == nil {
		mtime = fi.ModTime().Add(time.Hour)
	}
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(tmp, mtime, mtime); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, path); err != nil {
		t.Fatal(err)
	}
}

// usersFileFor writes content to a new users file and returns its path.
func usersFileFor(t *testing.T, content string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "users.yaml")
	rewriteUsers(t, path, content)
	return path
}

// newTestUsers returns the Users of a new users file of content.
func newTestUsers(t *testing.T, content string) (*Users, string) {
	t.Helper()
	path := usersFileFor(t, content)
	u, err := NewUsersFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return u, path
}

// login expects name and password to log in as want.
func login(t *testing.T, u *Users, name, password string, want Identity) {
	t.Helper()
	id, err := u.Authenticate(context.Background(), name, password)
	if err != nil {
		t.Fatalf("Authenticate(%q): %v", name, err)
	}
	if id.Name != want.Name || !slices.Equal(id.Groups, want.Groups) || (id.Groups == nil) != (want.Groups == nil) {
		t.Errorf("Authenticate(%q) = %#v, want %#v", name, id, want)
	}
}

// refused expects name and password to be refused with an error wrapping
// want.
func refused(t *testing.T, u *Users, name, password string, want error) {
	t.Helper()
	id, err := u.Authenticate(context.Background(), name, password)
	if !errors.Is(err, want) {
		t.Errorf("Authenticate(%q) = %#v, %v; want %v", name, id, err, want)
	}
}

func TestUsersLogin(t *testing.T) {
	// htpasswd writes $2y$ hashes; bcrypt computes them as $2a$ ones.
	htpasswd := "$2y$" + strings.TrimPrefix(testHash(t, "ht-pw", bcrypt.MinCost), "$2a$")
	u, _ := newTestUsers(t, fmt.Sprintf(`users:
  - name: demo
    passwordHash: %q
    groups: [zeta, demo-team, zeta, alpha]
  - name: solo
    passwordHash: %q
  - name: ht
    passwordHash: %q
`, testHash(t, "demo-pw", bcrypt.MinCost), testHash(t, "solo-pw", bcrypt.MinCost), htpasswd))
	login(t, u, "demo", "demo-pw", Identity{Name: "demo", Groups: []string{"alpha", "demo-team", "zeta"}})
	login(t, u, "solo", "solo-pw", Identity{Name: "solo"})
	login(t, u, "ht", "ht-pw", Identity{Name: "ht"})
	refused(t, u, "ht", "solo-pw", ErrBadLogin)

	// The groups returned are the caller's to change.
	id, _ := u.Authenticate(context.Background(), "demo", "demo-pw")
	id.Groups[0] = "changed"
	login(t, u, "demo", "demo-pw", Identity{Name: "demo", Groups: []string{"alpha", "demo-team", "zeta"}})
}

func TestUsersRefusals(t *testing.T) {
	long := strings.Repeat("p", 72)
	u, _ := newTestUsers(t, fmt.Sprintf(`users:
  - name: demo
    passwordHash: %q
  - name: long
    passwordHash: %q
`, testHash(t, "demo-pw", bcrypt.MinCost), testHash(t, long, bcrypt.MinCost)))
	login(t, u, "long", long, Identity{Name: "long"})
	for _, c := range []struct{ what, name, password string }{
		{"wrong password", "demo", "wrong"},
		{"unknown user", "nobody", "demo-pw"},
		{"name in another case", "Demo", "demo-pw"},
		{"empty password", "demo", ""},
		// bcrypt ignores the bytes past 72: this one would match.
		{"password longer than 72 bytes", "long", long + "x"},
	} {
		t.Run(c.what, func(t *testing.T) {
			refused(t, u, c.name, c.password, ErrBadLogin)
			_, err := u.Authenticate(context.Background(), c.name, c.password)
			if errors.Is(err, ErrInvalidName) {
				t.Errorf("got %v, want no ErrInvalidName", err)
			}
		})
	}
	for _, name := range []string{"system:admin", "System:Admin", "a\x00b", "", strings.Repeat("n", MaxNameLen+1), "\xff"} {
		refused(t, u, name, "demo-pw", ErrInvalidName)
	}
}

func TestUsersDummyHash(t *testing.T) {
	for _, cost := range []int{bcrypt.MinCost, DefaultCost, bcrypt.MaxCost} {
		got, err := bcrypt.Cost(dummyHash(cost))
		if err != nil || got != cost {
			t.Errorf("cost of dummyHash(%d) = %d, %v", cost, got, err)
		}
	}
	// A well-formed hash: bcrypt runs and finds no match.
	if err := bcrypt.CompareHashAndPassword(dummyHash(bcrypt.MinCost), []byte("pw")); !errors.Is(err, bcrypt.ErrMismatchedHashAndPassword) {
		t.Errorf("comparing with the dummy hash: %v", err)
	}
	// The dummy hash takes the cost most users' hashes have.
	var b strings.Builder
	b.WriteString("users:\n")
	for i, cost := range []int{5, bcrypt.MinCost, 5, bcrypt.MinCost, bcrypt.MinCost} {
		fmt.Fprintf(&b, "  - name: u%d\n    passwordHash: %q\n", i, testHash(t, "pw", cost))
	}
	u, _ := newTestUsers(t, b.String())
	if got, _ := bcrypt.Cost(u.list.dummy); got != bcrypt.MinCost {
		t.Errorf("dummy hash cost %d, want %d", got, bcrypt.MinCost)
	}
}

func TestUsersReload(t *testing.T) {
	demo := fmt.Sprintf("  - name: demo\n    passwordHash: %q\n", testHash(t, "demo-pw", bcrypt.MinCost))
	u, path := newTestUsers(t, "users:\n"+demo)
	login(t, u, "demo", "demo-pw", Identity{Name: "demo"})

	// A rewrite of the same size is seen by its modification time.
	dem2 := strings.Replace(demo, "demo", "dem2", 1)
	rewriteUsers(t, path, "users:\n"+dem2)
	refused(t, u, "demo", "demo-pw", ErrBadLogin)
	login(t, u, "dem2", "demo-pw", Identity{Name: "dem2"})

	rewriteUsers(t, path, "users:\n"+dem2+fmt.Sprintf("  - name: new\n    passwordHash: %q\n    groups: [g]\n",
		testHash(t, "new-pw", bcrypt.MinCost)))
	login(t, u, "new", "new-pw", Identity{Name: "new", Groups: []string{"g"}})
	login(t, u, "dem2", "demo-pw", Identity{Name: "dem2"})
}

func TestUsersBrokenRewriteKeepsLastGood(t *testing.T) {
	demo := fmt.Sprintf("  - name: demo\n    passwordHash: %q\n", testHash(t, "demo-pw", bcrypt.MinCost))
	u, path := newTestUsers(t, "users:\n"+demo)
	for _, broken := range []string{
		"users: [",
		"users:\n" + demo + demo,
		"users:\n" + demo + "    color: blue\n",
		"",
		"users:\n  - name: other\n    passwordHash: not-a-hash\n",
	} {
		rewriteUsers(t, path, broken)
		login(t, u, "demo", "demo-pw", Identity{Name: "demo"})
		refused(t, u, "other", "pw", ErrBadLogin)
	}
	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
	login(t, u, "demo", "demo-pw", Identity{Name: "demo"})

	// Once the file is good again, it is read.
	rewriteUsers(t, path, fmt.Sprintf("users:\n  - name: other\n    passwordHash: %q\n", testHash(t, "pw", bcrypt.MinCost)))
	login(t, u, "other", "pw", Identity{Name: "other"})
	refused(t, u, "demo", "demo-pw", ErrBadLogin)
}

func TestAwaitUsersFile(t *testing.T) {
	good := fmt.Sprintf("users:\n  - name: demo\n    passwordHash: %q\n", testHash(t, "pw", bcrypt.MinCost))
	for _, tc := range []struct {
		name, content string // content "" leaves the file missing
	}{
		{"missing", ""},
		{"bad", "users: [{name: x}]\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "users.yaml")
			if tc.content != "" {
				rewriteUsers(t, path, tc.content)
			}
			u, err := AwaitUsersFile(path)
			if u == nil || err == nil {
				t.Fatalf("AwaitUsersFile = %v, %v; want a Users and the file's problem", u, err)
			}
			if _, err := u.Authenticate(context.Background(), "demo", "pw"); err == nil || errors.Is(err, ErrBadLogin) {
				t.Errorf("Authenticate before a good file = %v, want an error other than ErrBadLogin", err)
			}
			rewriteUsers(t, path, good)
			login(t, u, "demo", "pw", Identity{Name: "demo"})
		})
	}
	if u, err := AwaitUsersFile(usersFileFor(t, good)); err != nil || u == nil {
		t.Errorf("AwaitUsersFile of a good file = %v, %v", u, err)
	}
}

func TestUsersConcurrent(t *testing.T) {
	entry := func(name string) string {
		return fmt.Sprintf("  - name: %s\n    passwordHash: %q\n", name, testHash(t, "pw", bcrypt.MinCost))
	}
	u, path := newTestUsers(t, "users:\n"+entry("demo"))
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			for range 20 {
				login(t, u, "demo", "pw", Identity{Name: "demo"})
			}
		})
	}
	for i := range 20 {
		rewriteUsers(t, path, "users:\n"+entry("demo")+entry(fmt.Sprintf("u%d", i)))
	}
	wg.Wait()
}

func TestNewUsersFileRefuses(t *testing.T) {
	h := testHash(t, "pw", bcrypt.MinCost)
	entry := func(name string) string { return fmt.Sprintf("  - name: %s\n    passwordHash: %q\n", name, h) }
	var tooManyUsers, tooManyGroups strings.Builder
	tooManyUsers.WriteString("users:\n")
	for i := range MaxUsers + 1 {
		tooManyUsers.WriteString(entry(fmt.Sprintf("u%d", i)))
	}
	tooManyGroups.WriteString("users:\n" + entry("demo") + "    groups:\n")
	for i := range MaxGroups + 1 {
		fmt.Fprintf(&tooManyGroups, "      - g%d\n", i)
	}
	for _, c := range []struct{ what, content, want string }{
		{"unknown top field", "users: []\nuser: []\n", `unknown field "user"`},
		{"unknown entry field", "users:\n" + entry("demo") + "    password: pw\n", `unknown field "password"`},
		{"duplicate key", "users:\n  - name: demo\n    name: demo\n", `"name"`},
		{"duplicate name", "users:\n" + entry("demo") + entry("other") + entry("demo"), `users[2].name "demo": listed more than once`},
		{"invalid name", "users:\n" + entry("x") + entry(`"system:admin"`), `users[1].name "system:admin"`},
		{"empty name", "users:\n  - passwordHash: " + h + "\n", `users[0].name ""`},
		{"missing hash", "users:\n  - name: demo\n", `users[0].passwordHash`},
		{"bad hash", "users:\n" + entry("demo") + "  - name: other\n    passwordHash: secret\n", `users[1].passwordHash (user "other"): not a bcrypt hash`},
		{"bad cost", "users:\n  - name: demo\n    passwordHash: \"$2a$03$" + h[7:] + "\"\n", `users[0].passwordHash`},
		{"truncated hash", "users:\n  - name: demo\n    passwordHash: \"" + h[:59] + "\"\n", `users[0].passwordHash`},
		{"bad group", "users:\n" + entry("demo") + "    groups: [ok, \"system:masters\"]\n", `users[0].groups[1] "system:masters"`},
		{"empty group", "users:\n" + entry("demo") + "    groups: [\"\"]\n", `users[0].groups[0] ""`},
		{"too many groups", tooManyGroups.String(), `users[0].groups (user "demo"): 101 groups`},
		{"empty file", "", `no "users" list`},
		{"null users", "users:\n", `no "users" list`},
		{"too many users", tooManyUsers.String(), "10001 users, more than 10000"},
		{"too large", "users: []\n#" + strings.Repeat("x", MaxUsersFileSize), "larger than 1048576 bytes"},
	} {
		t.Run(c.what, func(t *testing.T) {
			path := usersFileFor(t, c.content)
			u, err := NewUsersFile(path)
			if err == nil {
				t.Fatalf("NewUsersFile = %v, want an error", u)
			}
			if !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), c.want) {
				t.Errorf("NewUsersFile: %v; want an error naming %s and holding %s", err, path, c.want)
			}
		})
	}
	t.Run("missing file", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "missing.yaml")
		_, err := NewUsersFile(path)
		if !errors.Is(err, fs.ErrNotExist) || !strings.Contains(err.Error(), path) {
			t.Errorf("NewUsersFile: %v; want an error naming %s that is fs.ErrNotExist", err, path)
		}
	})
	t.Run("no users", func(t *testing.T) {
		u, err := NewUsersFile(usersFileFor(t, "users: []\n"))
		if err != nil {
			t.Fatal(err)
		}
		refused(t, u, "demo", "pw", ErrBadLogin)
	})
}

func TestHashPassword(t *testing.T) {
	h, err := HashPassword("s3cret")
	if err != nil {
		t.Fatal(err)
	}
	if cost, err := bcrypt.Cost([]byte(h)); err != nil || cost != DefaultCost {
		t.Errorf("cost of %q = %d, %v; want %d", h, cost, err, DefaultCost)
	}
	u, _ := newTestUsers(t, fmt.Sprintf("users:\n  - name: demo\n    passwordHash: %q\n", h))
	login(t, u, "demo", "s3cret", Identity{Name: "demo"})
	refused(t, u, "demo", "s3cret2", ErrBadLogin)

	if h, err := HashPassword(""); err == nil {
		t.Errorf("HashPassword(\"\") = %q, want an error", h)
	}
	if h, err := HashPassword(strings.Repeat("p", 73)); !errors.Is(err, bcrypt.ErrPasswordTooLong) {
		t.Errorf("HashPassword of 73 bytes = %q, %v; want bcrypt.ErrPasswordTooLong", h, err)
	}
}
