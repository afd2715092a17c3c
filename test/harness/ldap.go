package harness

import (
	"context"
	"crypto/rand"
	"crypto/sha1" //nolint:gosec // {SSHA}, the scheme slapd verifies without extra modules
	"encoding/base64"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/go-ldap/ldap/v3"

	"github.com/accelstack/accelstack/test/testutil"
)

// LDAPUser is a user StartLDAP puts in the directory.
type LDAPUser struct {
	// Name is the user's uid; Password is stored as {SSHA}.
	Name, Password string
	// Groups are the groupOfNames entries that list the user as a member.
	Groups []string
}

// LDAP is an OpenLDAP server (Debian's slapd) started for a test.
type LDAP struct {
	// URL is the server's address, ldap://127.0.0.1:<port>.
	URL string
	// BaseDN is the directory's suffix, dc=example,dc=org.
	BaseDN string
	// BindDN and BindPassword are the root account, which may read all.
	BindDN, BindPassword string
	// UserBaseDN holds the users, uid=<name>,ou=people,<BaseDN>
	// (inetOrgPerson).
	UserBaseDN string
	// GroupBaseDN holds the groups, cn=<group>,ou=groups,<BaseDN>
	// (groupOfNames, member holding the users' DNs).
	GroupBaseDN string
}

// UserDN returns the DN of the user name.
func (l *LDAP) UserDN(name string) string {
	return "uid=" + ldap.EscapeDN(name) + "," + l.UserBaseDN
}

// slapdBinary returns the path of slapd and of slapadd, which Debian
// installs in /usr/sbin, outside many users' $PATH.
func slapdBinary(name string) (string, error) {
	if p, err := exec.LookPath(name); err == nil {
		return p, nil
	}
	p := filepath.Join("/usr/sbin", name)
	if _, err := os.Stat(p); err != nil {
		return "", fmt.Errorf("%s not found in $PATH or /usr/sbin; install Debian's slapd: "+
			"DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends slapd ldap-utils", name)
	}
	return p, nil
}

// StartLDAP starts slapd on a free loopback port, with an mdb database in
// a temp dir holding users and their groups, and waits until it accepts a
// bind. It runs as the test's user and is stopped when the test ends.
func StartLDAP(t testutil.T, users ...LDAPUser) *LDAP {
	t.Helper()
	slapd, err := slapdBinary("slapd")
	if err != nil {
		t.Fatal(err)
	}
	slapadd, err := slapdBinary("slapadd")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	l := &LDAP{
		URL:          "ldap://127.0.0.1:" + strconv.Itoa(freePort(t)),
		BaseDN:       "dc=example,dc=org",
		BindDN:       "cn=admin,dc=example,dc=org",
		BindPassword: "accelstack-ldap-admin",
	}
	l.UserBaseDN, l.GroupBaseDN = "ou=people,"+l.BaseDN, "ou=groups,"+l.BaseDN
	conf := filepath.Join(dir, "slapd.conf")
	if err := os.MkdirAll(filepath.Join(dir, "data"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(conf, []byte(slapdConf(dir, l)), 0o600); err != nil {
		t.Fatal(err)
	}
	entries, err := l.ldif(users)
	if err != nil {
		t.Fatal(err)
	}
	ldifPath := filepath.Join(dir, "entries.ldif")
	if err := os.WriteFile(ldifPath, []byte(entries), 0o600); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command(slapadd, "-f", conf, "-l", ldifPath).CombinedOutput(); err != nil {
		t.Fatalf("slapadd: %v\n%s", err, out)
	}
	// -d keeps slapd in the foreground (logging to stderr), so that Stop ends it.
	p := StartProcess(t, "slapd", slapd, []string{"-f", conf, "-h", l.URL + "/", "-d", "stats"})
	err = p.WaitReady(30*time.Second, func(ctx context.Context) error {
		deadline, _ := ctx.Deadline()
		conn, err := ldap.DialURL(l.URL, ldap.DialWithDialer(&net.Dialer{Deadline: deadline}))
		if err != nil {
			return err
		}
		defer func() { _ = conn.Close() }()
		conn.SetTimeout(time.Until(deadline))
		return conn.Bind(l.BindDN, l.BindPassword)
	})
	if err != nil {
		t.Fatal(err)
	}
	return l
}

// slapdConf is the configuration of one mdb database under dir. Anyone
// may bind with a password and read all but passwords.
func slapdConf(dir string, l *LDAP) string {
	var b strings.Builder
	for _, s := range []string{"core", "cosine", "inetorgperson"} {
		fmt.Fprintf(&b, "include /etc/ldap/schema/%s.schema\n", s)
	}
	fmt.Fprintf(&b, "pidfile %s\nargsfile %s\n", filepath.Join(dir, "slapd.pid"), filepath.Join(dir, "slapd.args"))
	if _, err := os.Stat("/usr/lib/ldap/back_mdb.la"); err == nil {
		b.WriteString("modulepath /usr/lib/ldap\nmoduleload back_mdb\n")
	}
	fmt.Fprintf(&b, "database mdb\nmaxsize 16777216\nsuffix %q\nrootdn %q\nrootpw %s\ndirectory %s\n",
		l.BaseDN, l.BindDN, ssha(l.BindPassword), filepath.Join(dir, "data"))
	b.WriteString("access to attrs=userPassword by anonymous auth by * none\naccess to * by * read\n")
	return b.String()
}

// ldif returns the directory's entries: the suffix, the two units, the
// users and their groups.
func (l *LDAP) ldif(users []LDAPUser) (string, error) {
	var b strings.Builder
	entry := func(dn string, attrs ...string) {
		b.WriteString(ldifLine("dn", dn))
		for i := 0; i < len(attrs); i += 2 {
			b.WriteString(ldifLine(attrs[i], attrs[i+1]))
		}
		b.WriteString("\n")
	}
	entry(l.BaseDN, "objectClass", "dcObject", "objectClass", "organization", "dc", "example", "o", "Example")
	entry(l.UserBaseDN, "objectClass", "organizationalUnit", "ou", "people")
	entry(l.GroupBaseDN, "objectClass", "organizationalUnit", "ou", "groups")
	members := map[string][]string{}
	for _, u := range users {
		if u.Name == "" || u.Password == "" {
			return "", fmt.Errorf("LDAP user %q: a name and a password are required", u.Name)
		}
		entry(l.UserDN(u.Name), "objectClass", "inetOrgPerson", "uid", u.Name, "cn", u.Name, "sn", u.Name,
			"userPassword", ssha(u.Password))
		for _, g := range u.Groups {
			members[g] = append(members[g], l.UserDN(u.Name))
		}
	}
	groups := make([]string, 0, len(members))
	for g := range members {
		groups = append(groups, g)
	}
	slices.Sort(groups)
	for _, g := range groups {
		attrs := []string{"objectClass", "groupOfNames", "cn", g}
		for _, m := range members[g] {
			attrs = append(attrs, "member", m)
		}
		entry("cn="+ldap.EscapeDN(g)+","+l.GroupBaseDN, attrs...)
	}
	return b.String(), nil
}

// ldifLine is one attribute line, base64 where LDIF requires it.
func ldifLine(attr, value string) string {
	safe := value == "" || !strings.ContainsAny(value[:1], " :<") && !strings.HasSuffix(value, " ")
	for _, r := range value {
		if r < 0x20 || r > 0x7e {
			safe = false
		}
	}
	if safe {
		return attr + ": " + value + "\n"
	}
	return attr + ":: " + base64.StdEncoding.EncodeToString([]byte(value)) + "\n"
}

// ssha returns password as an {SSHA} userPassword value.
func ssha(password string) string {
	salt := make([]byte, 8)
	_, _ = rand.Read(salt)
	sum := sha1.Sum(append([]byte(password), salt...)) //nolint:gosec // see the import
	return "{SSHA}" + base64.StdEncoding.EncodeToString(append(sum[:], salt...))
}
