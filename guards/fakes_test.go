package guards

import (
	"context"

	"github.com/lancecat/lancecat/authz"
	nserr "github.com/lancecat/lancecat/errors"
	"github.com/lancecat/lancecat/ident"
)

// fakeAuthz allows the (principal, action, object) triples in allow and denies the rest; down
// makes every check fail as an outage would.
type fakeAuthz struct {
	authz.Authorizer // only Enabled, Check and AdoptOrphan are used
	allow            map[string]bool
	down             bool
	adoptable        map[authz.Object]bool
	checks           int
}

func grant(p authz.Principal, a authz.Action, o authz.Object) string {
	return string(p) + " " + string(a) + " " + o.String()
}

func (f *fakeAuthz) Enabled() bool { return true }

func (f *fakeAuthz) Check(_ context.Context, p authz.Principal, a authz.Action, o authz.Object) error {
	f.checks++
	if f.down {
		return nserr.ServiceUnavailablef("authorization is unavailable")
	}
	if f.allow[grant(p, a, o)] {
		return nil
	}
	return nserr.PermissionDeniedf("%s may not %s %s", p, a, o)
}

// adoptingAuthz is a fakeAuthz that can attach orphans: adopting one grants the table reader.
type adoptingAuthz struct {
	*fakeAuthz
	onAdopt func(object authz.Object)
}

func (a adoptingAuthz) AdoptOrphan(_ context.Context, object, _ authz.Object) (bool, error) {
	if !a.adoptable[object] {
		return false, nil
	}
	delete(a.adoptable, object)
	a.onAdopt(object)
	return true, nil
}

// fakeCatalog holds the ids that exist; broken makes existence unanswerable.
type fakeCatalog struct {
	tables, namespaces map[string]bool
	broken             bool
}

func (c fakeCatalog) NamespaceExists(_ context.Context, id ident.ID) error {
	if c.broken {
		return nserr.ServiceUnavailablef("storage is down")
	}
	if id.IsRoot() || c.namespaces[id.Join("$")] {
		return nil
	}
	return nserr.NamespaceNotFoundf("namespace %s not found", id.Join("$"))
}

func (c fakeCatalog) TableExists(_ context.Context, id ident.ID) error {
	if c.broken {
		return nserr.ServiceUnavailablef("storage is down")
	}
	if c.tables[id.Join("$")] {
		return nil
	}
	return nserr.TableNotFoundf("table %s not found", id.Join("$"))
}
