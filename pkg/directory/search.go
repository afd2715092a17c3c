package directory

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/go-ldap/ldap/v3"
	"github.com/go-logr/logr"
)

// maxGroupEntries bounds the entries a group search reads; the server may
// bound them lower.
const maxGroupEntries = 1000

// userFilter is the filter that finds the user name.
func (l *LDAP) userFilter(name string) string {
	return strings.Replace(l.cfg.UserFilter, "%s", ldap.EscapeFilter(name), 1)
}

// groupFilter is the filter that finds the groups of the entry dn.
func (l *LDAP) groupFilter(dn string) string {
	return strings.Replace(l.cfg.GroupFilter, "%s", ldap.EscapeFilter(dn), 1)
}

// findUser returns the DN and the directory's name of the one entry that
// matches name; no DN if none does, and ErrBadLogin if more than one does.
func (l *LDAP) findUser(ctx context.Context, conn *ldap.Conn, name string) (dn, canonical string, err error) {
	log := logr.FromContextOrDiscard(ctx).WithValues("user", name)
	req := ldap.NewSearchRequest(l.cfg.UserBaseDN, ldap.ScopeWholeSubtree, ldap.NeverDerefAliases,
		2, l.timeLimit(), false, l.userFilter(name), []string{l.cfg.NameAttribute}, nil)
	res, err := conn.Search(req)
	if err != nil && !ldap.IsErrorWithCode(err, ldap.LDAPResultSizeLimitExceeded) {
		return "", "", fmt.Errorf("searching %q for the user: %w", l.cfg.UserBaseDN, err)
	}
	switch {
	case len(res.Entries) == 0:
		return "", "", nil
	case len(res.Entries) > 1 || err != nil:
		log.Info("Directory problem: more than one entry matches the user; refusing the login",
			"filter", req.Filter, "entries", []string{res.Entries[0].DN, res.Entries[len(res.Entries)-1].DN})
		return "", "", ErrBadLogin
	}
	e := res.Entries[0]
	names := e.GetEqualFoldAttributeValues(l.cfg.NameAttribute)
	if e.DN == "" || len(names) != 1 {
		log.Info("Directory problem: the user's entry has no DN or not exactly one name; refusing the login",
			"dn", e.DN, "attribute", l.cfg.NameAttribute, "values", len(names))
		return "", "", ErrBadLogin
	}
	if err := checkName(names[0]); err != nil {
		log.Info("Directory problem: the user's name in the directory is not allowed; refusing the login",
			"dn", e.DN, "reason", err.Error())
		return "", "", ErrBadLogin
	}
	return e.DN, names[0], nil
}

// groups returns the names of the groups of the entry dn.
func (l *LDAP) groups(ctx context.Context, conn *ldap.Conn, dn string) ([]string, error) {
	if l.cfg.GroupBaseDN == "" {
		return nil, nil
	}
	log := logr.FromContextOrDiscard(ctx).WithValues("dn", dn)
	req := ldap.NewSearchRequest(l.cfg.GroupBaseDN, ldap.ScopeWholeSubtree, ldap.NeverDerefAliases,
		maxGroupEntries, l.timeLimit(), false, l.groupFilter(dn), []string{l.cfg.GroupNameAttribute}, nil)
	res, err := conn.Search(req)
	switch {
	case ldap.IsErrorWithCode(err, ldap.LDAPResultSizeLimitExceeded):
		log.Info("Directory problem: the user is in more group entries than are read; using those read",
			"read", len(res.Entries))
	case err != nil:
		return nil, fmt.Errorf("searching %q for the user's groups: %w", l.cfg.GroupBaseDN, err)
	}
	var names []string
	for _, e := range res.Entries {
		names = append(names, e.GetEqualFoldAttributeValues(l.cfg.GroupNameAttribute)...)
	}
	return cleanGroups(log, names), nil
}

// cleanGroups drops the names that are not allowed (logging each), sorts
// and deduplicates the rest, and keeps the first MaxGroups; nil if none.
func cleanGroups(log logr.Logger, names []string) []string {
	var kept []string
	for _, n := range names {
		if err := checkName(n); err != nil {
			log.Info("Dropping a group whose name is not allowed", "group", n, "reason", err.Error())
			continue
		}
		kept = append(kept, n)
	}
	slices.Sort(kept)
	kept = slices.Compact(kept)
	if len(kept) > MaxGroups {
		log.Info("Keeping the first groups of the user's, in sorted order", "kept", MaxGroups, "groups", len(kept))
		kept = kept[:MaxGroups]
	}
	return kept
}
