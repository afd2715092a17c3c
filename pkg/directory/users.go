package directory

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"regexp"
	"slices"
	"sync"
	"time"

	"github.com/go-logr/logr"
	"golang.org/x/crypto/bcrypt"
	"sigs.k8s.io/yaml"
)

// Limits of the users file, and the cost of the hashes HashPassword makes.
const (
	// DefaultCost is the bcrypt cost of the hashes HashPassword makes. The
	// users file accepts hashes of any valid bcrypt cost.
	DefaultCost = 10
	// MaxUsersFileSize is the largest users file read, in bytes.
	MaxUsersFileSize = 1 << 20
	// MaxUsers is the most users a users file may list.
	MaxUsers = 10000
)

// maxPasswordLen is the longest password bcrypt operates on, in bytes;
// bcrypt would ignore the bytes after it.
const maxPasswordLen = 72

// bcryptHashRE matches the form of a bcrypt hash; bcrypt.Cost checks the
// version and the cost.
var bcryptHashRE = regexp.MustCompile(`^\$2[a-z]?\$[0-9]{2}\$[./A-Za-z0-9]{53}$`)

// dummyHashTail is the salt and hash of a bcrypt hash that no password
// given to Authenticate is expected to match.
const dummyHashTail = "bfnvqugJ1SAg8B3/TPdLoe4EMal7qeFEgvJM4o6i4TsVuDdlVJwzG"

// dummyHash is a bcrypt hash of the given cost that an unknown user's
// password is compared with, so that the refusal takes as long as for a
// user who exists.
func dummyHash(cost int) []byte {
	return fmt.Appendf(nil, "$2a$%02d$%s", cost, dummyHashTail)
}

// usersFile is the users file's content.
type usersFile struct {
	// Users is nil if the file has no list of users, as an empty file or
	// one caught while being written in place.
	Users *[]userEntry `json:"users"`
}

// userEntry is one user of the users file.
type userEntry struct {
	Name         string   `json:"name"`
	PasswordHash string   `json:"passwordHash"`
	Groups       []string `json:"groups,omitempty"`
}

// user is a checked entry of the users file.
type user struct {
	hash   []byte
	groups []string // cleaned: sorted, without duplicates; nil if none
}

// userList is a checked users file: the users by name, and the hash an
// unknown user's password is compared with.
type userList struct {
	users map[string]user
	dummy []byte
}

// fileStamp tells whether a file changed since it was read.
type fileStamp struct {
	modTime time.Time
	size    int64
}

// stampOf returns the stamp of the file fi describes.
func stampOf(fi os.FileInfo) fileStamp {
	return fileStamp{modTime: fi.ModTime(), size: fi.Size()}
}

// Users is a Directory backed by a static list of users in a YAML file, for
// small sites and the local cluster:
//
//	users:
//	  - name: demo
//	    passwordHash: "$2y$10$..."  # htpasswd -nbBC 10 "" PASSWORD | tr -d ':\n'
//	    groups: [demo-team]
//
// Unknown fields are refused. The file holds at most MaxUsersFileSize
// bytes and MaxUsers users. Each name must be allowed (see ErrInvalidName)
// and unique; names are matched exactly, case included. Each passwordHash
// must be a bcrypt hash, of any cost (see HashPassword). A user lists at
// most MaxGroups groups, whose names follow the rule of LDAP's groups (the
// rule of user names); where LDAP drops a group whose name is not allowed
// and keeps the first MaxGroups groups, since its directory is not this
// program's to fix, the file is refused instead, since its author can fix
// it. Groups are sorted and deduplicated as LDAP's are. The "users" key is
// required, so that an empty file is refused: "users: []" lists none.
//
// Authenticate reads the file again when its modification time or size
// changed since it was last read, so that an update of a mounted
// Kubernetes Secret takes effect without a restart. If that read fails, it
// keeps serving the last list read well, and reads the file again only
// once it changes again; nothing is logged. Users is safe for concurrent
// use.
type Users struct {
	path string

	mu    sync.Mutex
	stamp fileStamp // of the last read, good or not
	list  *userList // the last good list; nil if none
}

var _ Directory = (*Users)(nil)

// NewUsersFile reads and checks the users file at path. An error names the
// path and, for a bad entry, the entry's index and field.
func NewUsersFile(path string) (*Users, error) {
	u := &Users{path: path}
	if err := u.reloadLocked(); err != nil { // u is not shared yet
		return nil, err
	}
	return u, nil
}

// AwaitUsersFile is NewUsersFile for a file that may be missing or bad for
// now, such as one from an optional Secret volume that an admin writes
// later. It returns a Users in any case, which refuses every login, with
// an error other than ErrBadLogin, until a good file is there, and the
// file's problem now, if any, for the caller to report.
func AwaitUsersFile(path string) (*Users, error) {
	u, err := NewUsersFile(path)
	if err != nil {
		return &Users{path: path}, err
	}
	return u, nil
}

// Authenticate checks name and password against the users file and returns
// the user's identity. It refuses an invalid name (ErrInvalidName), an
// empty password and a password longer than the 72 bytes bcrypt operates
// on (ErrBadLogin) before looking the user up. For an unknown user it
// compares the password with a dummy hash all the same, so that the time
// a refusal takes does not tell which users exist. It returns an error
// other than ErrBadLogin only if no good list of users was ever read.
func (u *Users) Authenticate(_ context.Context, name, password string) (Identity, error) {
	if err := checkName(name); err != nil {
		return Identity{}, fmt.Errorf("%w: %w", ErrInvalidName, err)
	}
	switch {
	case password == "":
		return Identity{}, fmt.Errorf("%w: empty password", ErrBadLogin)
	case len(password) > maxPasswordLen:
		return Identity{}, fmt.Errorf("%w: password longer than %d bytes", ErrBadLogin, maxPasswordLen)
	}
	list, err := u.current()
	if err != nil {
		return Identity{}, err
	}
	usr, ok := list.users[name]
	if !ok {
		_ = bcrypt.CompareHashAndPassword(list.dummy, []byte(password))
		return Identity{}, ErrBadLogin
	}
	if err := bcrypt.CompareHashAndPassword(usr.hash, []byte(password)); err != nil {
		return Identity{}, ErrBadLogin
	}
	return Identity{Name: name, Groups: slices.Clone(usr.groups)}, nil
}

// current reads the file again if it changed since it was last read, and
// returns the last good list.
func (u *Users) current() (*userList, error) {
	u.mu.Lock()
	defer u.mu.Unlock()
	fi, err := os.Stat(u.path)
	if err == nil && stampOf(fi) != u.stamp {
		err = u.reloadLocked()
	}
	if u.list == nil {
		if err == nil {
			err = fmt.Errorf("users file %q: not read", u.path)
		}
		return nil, fmt.Errorf("no good users file was read: %w", err)
	}
	return u.list, nil
}

// reloadLocked reads and checks the file, keeping the list if it is good;
// u.mu is held.
func (u *Users) reloadLocked() error {
	data, stamp, err := readUsersFile(u.path)
	u.stamp = stamp
	if err != nil {
		return fmt.Errorf("users file %q: %w", u.path, err)
	}
	list, err := parseUsers(data)
	if err != nil {
		return fmt.Errorf("users file %q: %w", u.path, err)
	}
	u.list = list
	return nil
}

// readUsersFile returns the content of the file at path, at most
// MaxUsersFileSize bytes, and the stamp of the file read.
func readUsersFile(path string) ([]byte, fileStamp, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fileStamp{}, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, fileStamp{}, err
	}
	stamp := stampOf(fi)
	if !fi.Mode().IsRegular() {
		return nil, stamp, errors.New("not a regular file")
	}
	data, err := io.ReadAll(io.LimitReader(f, MaxUsersFileSize+1))
	if err != nil {
		return nil, stamp, err
	}
	if len(data) > MaxUsersFileSize {
		return nil, stamp, fmt.Errorf("larger than %d bytes", MaxUsersFileSize)
	}
	return data, stamp, nil
}

// parseUsers checks the content of a users file and returns its users.
func parseUsers(data []byte) (*userList, error) {
	var f usersFile
	if err := yaml.UnmarshalStrict(data, &f); err != nil {
		return nil, err
	}
	if f.Users == nil {
		return nil, errors.New(`no "users" list (write "users: []" for none)`)
	}
	users := *f.Users
	if len(users) > MaxUsers {
		return nil, fmt.Errorf("%d users, more than %d", len(users), MaxUsers)
	}
	list := &userList{users: make(map[string]user, len(users)), dummy: dummyHash(DefaultCost)}
	costs := map[int]int{}
	for i, e := range users {
		if err := checkName(e.Name); err != nil {
			return nil, fmt.Errorf("users[%d].name %q: %w", i, e.Name, err)
		}
		if _, dup := list.users[e.Name]; dup {
			return nil, fmt.Errorf("users[%d].name %q: listed more than once", i, e.Name)
		}
		cost, err := checkHash(e.PasswordHash)
		if err != nil {
			return nil, fmt.Errorf("users[%d].passwordHash (user %q): %w", i, e.Name, err)
		}
		costs[cost]++
		if len(e.Groups) > MaxGroups {
			return nil, fmt.Errorf("users[%d].groups (user %q): %d groups, more than %d", i, e.Name, len(e.Groups), MaxGroups)
		}
		for j, g := range e.Groups {
			if err := checkName(g); err != nil {
				return nil, fmt.Errorf("users[%d].groups[%d] %q (user %q): %w", i, j, g, e.Name, err)
			}
		}
		// All allowed and few enough: cleanGroups drops and logs nothing.
		groups := cleanGroups(logr.Discard(), e.Groups)
		list.users[e.Name] = user{hash: []byte(e.PasswordHash), groups: groups}
	}
	if cost, ok := commonest(costs); ok {
		list.dummy = dummyHash(cost)
	}
	return list, nil
}

// checkHash returns the cost of the bcrypt hash h, or why h is not one.
func checkHash(h string) (int, error) {
	if !bcryptHashRE.MatchString(h) {
		return 0, errors.New("not a bcrypt hash")
	}
	cost, err := bcrypt.Cost([]byte(h))
	if err != nil {
		return 0, fmt.Errorf("not a bcrypt hash: %w", err)
	}
	return cost, nil
}

// commonest returns the cost the most hashes have, the highest of those
// tied; false if there are none.
func commonest(costs map[int]int) (int, bool) {
	best, ok := 0, false
	for c, n := range costs {
		if !ok || n > costs[best] || n == costs[best] && c > best {
			best, ok = c, true
		}
	}
	return best, ok
}

// HashPassword returns the bcrypt hash of password at DefaultCost, for the
// passwordHash field of the users file. It refuses an empty password and
// one longer than the 72 bytes bcrypt operates on.
func HashPassword(password string) (string, error) {
	if password == "" {
		return "", errors.New("hashing a password: empty password")
	}
	h, err := bcrypt.GenerateFromPassword([]byte(password), DefaultCost)
	if err != nil {
		return "", fmt.Errorf("hashing a password: %w", err)
	}
	return string(h), nil
}
