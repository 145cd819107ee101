package guards

import (
	"context"
	"testing"

	"gotest.tools/v3/assert"

	"github.com/lancecat/lancecat/authz"
	nserr "github.com/lancecat/lancecat/errors"
	"github.com/lancecat/lancecat/ident"
)

// errAdoptOutage is what a failing OpenFGA answers an adoption.
var errAdoptOutage = nserr.ServiceUnavailablef("authorization service unavailable")

// adoptingAuthorizer attaches the objects listed as orphans (and records what it attached); any
// other object already has its parent edge. Fault injection: fail makes AdoptOrphan fail.
type adoptingAuthorizer struct {
	authz.Disabled
	orphans  map[authz.Object]bool
	attached []string
	fail     error
}

func (a *adoptingAuthorizer) AdoptOrphan(_ context.Context, object, parent authz.Object) (bool, error) {
	if a.fail != nil {
		return false, a.fail
	}
	if !a.orphans[object] {
		return false, nil
	}
	a.attached = append(a.attached, object.String()+" -> "+parent.String())
	return true, nil
}

// TestAdoptOrphans: an object written behind the catalog's back is attached to its parent, and so
// is each ancestor up to the first that already hangs from its own; nothing is attached when the
// object has its edge or the authorizer cannot adopt (or fails).
func TestAdoptOrphans(t *testing.T) {
	ctx := context.Background()
	tab := authz.TableObject(ident.ID{"a", "b", "t"})
	nsB, nsA := authz.NamespaceObject(ident.ID{"a", "b"}), authz.NamespaceObject(ident.ID{"a"})
	for _, tc := range []struct {
		name    string
		orphans []authz.Object
		fail    error
		want    []string
	}{
		{"table and its namespace", []authz.Object{tab, nsB}, nil,
			[]string{tab.String() + " -> " + nsB.String(), nsB.String() + " -> " + nsA.String()}},
		{"whole chain to the catalog", []authz.Object{tab, nsB, nsA}, nil,
			[]string{tab.String() + " -> " + nsB.String(), nsB.String() + " -> " + nsA.String(), nsA.String() + " -> " + authz.Catalog.String()}},
		{"stops at the first edge", []authz.Object{tab, nsA}, nil, []string{tab.String() + " -> " + nsB.String()}},
		{"not an orphan", nil, nil, nil},
		{"OpenFGA fails", []authz.Object{tab}, errAdoptOutage, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a := &adoptingAuthorizer{orphans: map[authz.Object]bool{}, fail: tc.fail}
			for _, o := range tc.orphans {
				a.orphans[o] = true
			}
			got := Oracle{Authorizer: a}.adoptOrphans(ctx, KindTable, ident.ID{"a", "b", "t"})
			assert.Equal(t, got, len(tc.want) > 0)
			assert.DeepEqual(t, a.attached, tc.want)
		})
	}
	assert.Assert(t, !(Oracle{Authorizer: authz.Disabled{}}).adoptOrphans(ctx, KindTable, ident.ID{"a", "t"}), "an authorizer that cannot adopt adopted")
}
