package directory

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"time"

	"github.com/go-ldap/ldap/v3"
)

// LDAP is a Directory backed by an LDAP server. It dials the server for
// each call and keeps no connection between calls.
type LDAP struct {
	cfg   LDAPConfig
	addr  string
	ldaps bool
	tls   *tls.Config // nil without ldaps:// or StartTLS
}

var _ Directory = (*LDAP)(nil)

// NewLDAP validates c, fills in its defaults and reads its CA file. An
// error names the field of LDAPConfig that is wrong.
func NewLDAP(c LDAPConfig) (*LDAP, error) {
	c = c.withDefaults()
	if err := c.check(); err != nil {
		return nil, err
	}
	addr, ldaps, err := c.parseURL()
	if err != nil {
		return nil, err
	}
	l := &LDAP{cfg: c, addr: addr, ldaps: ldaps}
	if ldaps || c.StartTLS {
		host, _, _ := net.SplitHostPort(addr)
		if l.tls, err = c.tlsConfig(host); err != nil {
			return nil, err
		}
	}
	return l, nil
}

// dial connects to the server, upgrades the connection with StartTLS if
// configured, and binds as dn with password unless dn is empty. Every
// exchange on the connection ends by ctx's deadline, and at once when
// ctx is done.
func (l *LDAP) dial(ctx context.Context, dn, password string) (*ldap.Conn, error) {
	deadline, _ := ctx.Deadline()
	var c net.Conn
	var err error
	if l.ldaps {
		c, err = (&tls.Dialer{Config: l.tls}).DialContext(ctx, "tcp", l.addr)
	} else {
		c, err = (&net.Dialer{}).DialContext(ctx, "tcp", l.addr)
	}
	if err != nil {
		return nil, fmt.Errorf("connecting to %s: %w", l.cfg.URL, err)
	}
	if err := c.SetDeadline(deadline); err != nil {
		c.Close()
		return nil, fmt.Errorf("connecting to %s: %w", l.cfg.URL, err)
	}
	context.AfterFunc(ctx, func() { _ = c.SetDeadline(time.Now()) })
	conn := ldap.NewConn(c, l.ldaps)
	conn.Start()
	conn.SetTimeout(time.Until(deadline))
	if l.cfg.StartTLS {
		if err := conn.StartTLS(l.tls); err != nil {
			_ = conn.Close()
			return nil, fmt.Errorf("StartTLS with %s: %w", l.cfg.URL, err)
		}
	}
	if dn != "" {
		if err := conn.Bind(dn, password); err != nil {
			_ = conn.Close()
			return nil, fmt.Errorf("binding to %s as %q: %w", l.cfg.URL, dn, err)
		}
	}
	return conn, nil
}

// Authenticate checks name and password against the directory and returns
// the user's identity. It refuses an invalid name (ErrInvalidName) and an
// empty password (ErrBadLogin) before connecting: a simple bind with an
// empty password is an unauthenticated bind, which servers accept.
func (l *LDAP) Authenticate(ctx context.Context, name, password string) (Identity, error) {
	if err := checkName(name); err != nil {
		return Identity{}, fmt.Errorf("%w: %w", ErrInvalidName, err)
	}
	if password == "" {
		return Identity{}, fmt.Errorf("%w: empty password", ErrBadLogin)
	}
	ctx, cancel := context.WithTimeout(ctx, l.cfg.Timeout)
	defer cancel()
	id, err := l.authenticate(ctx, name, password)
	return id, withContextError(ctx, err)
}

// withContextError adds to err why ctx ended, if it has: the connection's
// own deadline may fire a moment before the context's.
func withContextError(ctx context.Context, err error) error {
	if err == nil || errors.Is(err, ErrBadLogin) {
		return err
	}
	if cerr := ctx.Err(); cerr != nil {
		return fmt.Errorf("%w (%w)", err, cerr)
	}
	if deadline, ok := ctx.Deadline(); ok && !time.Now().Before(deadline) {
		return fmt.Errorf("%w (%w)", err, context.DeadlineExceeded)
	}
	return err
}

// authenticate is Authenticate once name and password passed the checks.
func (l *LDAP) authenticate(ctx context.Context, name, password string) (Identity, error) {
	conn, err := l.dial(ctx, l.cfg.BindDN, l.cfg.BindPassword)
	if err != nil {
		return Identity{}, err
	}
	defer func() { _ = conn.Close() }()
	dn, canonical, err := l.findUser(ctx, conn, name)
	if err != nil {
		return Identity{}, err
	}
	if dn == "" {
		// No such user: bind all the same, as for a user who exists, so
		// that the time a refusal takes does not tell which users exist.
		_ = l.checkPassword(ctx, "cn=accelstack-no-such-user,"+l.cfg.UserBaseDN, password)
		return Identity{}, ErrBadLogin
	}
	if err := l.checkPassword(ctx, dn, password); err != nil {
		return Identity{}, err
	}
	groups, err := l.groups(ctx, conn, dn)
	if err != nil {
		return Identity{}, err
	}
	return Identity{Name: canonical, Groups: groups}, nil
}

// checkPassword binds as dn with password on a connection of its own, so
// that the service account's connection keeps its rights.
func (l *LDAP) checkPassword(ctx context.Context, dn, password string) error {
	conn, err := l.dial(ctx, "", "")
	if err != nil {
		return err
	}
	defer func() { _ = conn.Close() }()
	err = conn.Bind(dn, password)
	switch {
	case err == nil:
		return nil
	case ldap.IsErrorAnyOf(err, ldap.LDAPResultInvalidCredentials, ldap.LDAPResultInappropriateAuthentication,
		ldap.LDAPResultUnwillingToPerform, ldap.LDAPResultInsufficientAccessRights):
		return ErrBadLogin
	}
	return fmt.Errorf("binding to %s as the user: %w", l.cfg.URL, err)
}

// timeLimit is the server-side limit of a search, in whole seconds.
func (l *LDAP) timeLimit() int {
	return int((l.cfg.Timeout + time.Second - 1) / time.Second)
}
