package handlers

import (
	"context"
	"net/http"
	"testing"

	"gotest.tools/v3/assert"

	"github.com/lancecat/lancecat/authz"
	nserr "github.com/lancecat/lancecat/errors"
	"github.com/lancecat/lancecat/gen/nsapi"
	"github.com/lancecat/lancecat/ident"
	"github.com/lancecat/lancecat/namespace"
)

// racingCatalog is a catalog where namespace ids are free when a guard first asks and taken when
// the create lands (and from then on): another caller's create won the race in between. Any other call panics (nil
// Catalog).
type racingCatalog struct {
	Catalog
	modes []string // the modes CreateNamespace was asked for
}

func (r *racingCatalog) NamespaceExists(context.Context, ident.ID) error {
	if len(r.modes) == 0 {
		return nserr.NamespaceNotFoundf("not yet")
	}
	return nil
}

func (r *racingCatalog) CreateNamespace(_ context.Context, _ ident.ID, props map[string]string, mode string) (map[string]string, error) {
	r.modes = append(r.modes, mode)
	if mode == namespace.ModeCreate {
		return nil, nserr.NamespaceAlreadyExistsf("created concurrently")
	}
	return props, nil
}

// recordingAuthorizer allows every door but the denied ones and records what it was asked.
type recordingAuthorizer struct {
	authz.Disabled
	denied  map[authz.Action]bool
	checked []authz.Action
	written int // SeedCreate and RevokeAll calls
}

func (a *recordingAuthorizer) Enabled() bool { return true }

func (a *recordingAuthorizer) Check(_ context.Context, _ authz.Principal, action authz.Action, _ authz.Object) error {
	a.checked = append(a.checked, action)
	if a.denied[action] {
		return nserr.PermissionDeniedf("%s denied", action)
	}
	return nil
}

func (a *recordingAuthorizer) SeedCreate(context.Context, authz.Principal, authz.Object, authz.Object) error {
	a.written++
	return nil
}

func (a *recordingAuthorizer) RevokeAll(context.Context, authz.Object) ([]authz.Tuple, error) {
	a.written++
	return nil, nil
}

// TestTakeoverLosingARace: a takeover asked of an id that was free when checked runs as a plain
// create; when a concurrent create took the id meanwhile, the request is checked as a takeover of
// what now exists (Overwrite: the destroy right, ExistOk: reading) and never seeds or revokes
// tuples: an object that appeared under the guard is not replaced or adopted on rights checked on
// nothing.
func TestTakeoverLosingARace(t *testing.T) {
	for _, tc := range []struct {
		mode      string
		wantCode  nserr.Code // 0: success
		wantModes []string
		wantCheck authz.Action
	}{
		{"over-write", nserr.PermissionDenied, []string{namespace.ModeCreate}, authz.NamespaceDrop},
		{"Exist Ok", 0, []string{namespace.ModeCreate, namespace.ModeExistOk}, authz.NamespaceDescribe},
	} {
		t.Run(tc.mode, func(t *testing.T) {
			cat := &racingCatalog{}
			a := &recordingAuthorizer{denied: map[authz.Action]bool{authz.NamespaceDrop: true}}
			g := governedDoors{New(Options{Catalog: cat, Authorizer: a})}
			c, rec := newContext(`{"mode":"`+tc.mode+`"}`, http.Header{"Content-Type": {"text/plain"}}, "n1$victim")
			err := g.CreateNamespace(c, "n1$victim", nsapi.CreateNamespaceParams{})
			if tc.wantCode == 0 {
				assert.NilError(t, err)
				assert.Equal(t, rec.Code, 200)
			} else {
				assert.Equal(t, nserr.CodeOf(err), tc.wantCode, "%v", err)
			}
			assert.DeepEqual(t, cat.modes, tc.wantModes)
			assert.DeepEqual(t, a.checked, []authz.Action{tc.wantCheck})
			assert.Equal(t, a.written, 0, "a lost race seeded or revoked tuples")
		})
	}
}
