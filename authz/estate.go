package authz

import (
	"context"
	"slices"
	"strings"

	nserr "github.com/lancecat/lancecat/errors"
)

// Estate admins are the subjects holding admin on the Catalog (catalog:lancecat): they mint
// projects, read the event stream, administer raw access and own what hangs from the Catalog.
// `lancecat serve --estate-admins` grants its list at every start (a bootstrap: it never revokes);
// `lancecat admin estate list|grant|revoke` is how they are listed, added and removed. The last
// estate admin cannot be revoked: nobody could mint a project or grant one again.

// ParseSubject reads a grant subject: user:<id>, team:<id>#member or role:<id>#assignee (user:*,
// everyone, is accepted here; whether a relation takes it is the model's call).
func ParseSubject(s string) (Subject, error) {
	sub := Subject(strings.TrimSpace(s))
	if err := sub.validate(); err != nil {
		return "", err
	}
	return sub, nil
}

// EstateAdmins lists the estate admins (the Catalog's admin tuples), sorted.
func (f *OpenFGA) EstateAdmins(ctx context.Context) ([]Subject, error) {
	tuples, err := f.Grants(ctx, "admin", Catalog)
	if err != nil {
		return nil, err
	}
	out := make([]Subject, 0, len(tuples))
	for _, t := range tuples {
		out = append(out, Subject(t.User))
	}
	slices.Sort(out)
	return slices.Compact(out), nil
}

// GrantEstateAdminTo makes subject (a user, or every member of a team or assignee of a role) an
// estate admin. Granting what is held is a no-op.
func (f *OpenFGA) GrantEstateAdminTo(ctx context.Context, subject Subject) error {
	return f.Grant(ctx, subject, "admin", Catalog)
}

// RevokeEstateAdmin takes estate admin from subject; revoking a subject that is not one is a
// no-op. It refuses (InvalidInput) to remove the last estate admin. Two operators revoking the last two admins at the same moment can
// both pass the count; the command is an operator tool run by hand, and either can grant again.
func (f *OpenFGA) RevokeEstateAdmin(ctx context.Context, subject Subject) error {
	if _, err := grantTuple(subject, "admin", Catalog); err != nil {
		return err
	}
	admins, err := f.EstateAdmins(ctx)
	if err != nil {
		return err
	}
	if !slices.Contains(admins, subject) {
		return nil
	}
	if len(admins) == 1 {
		return nserr.InvalidInputf("%s is the last estate admin: grant another one first (lancecat admin estate grant <subject>)", string(subject))
	}
	return f.Revoke(ctx, subject, "admin", Catalog)
}
