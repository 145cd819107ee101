package governed

import (
	"context"
	"errors"
	"strings"
	"testing"

	"gotest.tools/v3/assert"

	"github.com/lancecat/lancecat/authz"
	"github.com/lancecat/lancecat/catalog"
	nserr "github.com/lancecat/lancecat/errors"
	"github.com/lancecat/lancecat/ident"
)

var (
	errProtected        = errors.New("protected")
	errTrashed          = errors.New("trashed")
	errNamespaceTrashed = errors.New("namespace trashed")
)

// conflictDoor is one creating, destroying or moving operation of the decorator, with the conflict
// checks it asks the records, in order, when none refuses (force unset), and the inner call it
// then makes.
type conflictDoor struct {
	name    string
	run     func(context.Context, *Catalog, ...catalog.Option) error
	checks  []string
	inner   string
	authzed bool // a denied caller is refused before any check (a takeover or a rename)
}

func conflictDoors() []conflictDoor {
	a, at := ident.ID{"a"}, ident.ID{"a", "t"}
	return []conflictDoor{
		{name: "CreateNamespace overwrite", authzed: true, run: func(ctx context.Context, g *Catalog, opts ...catalog.Option) error {
			_, err := g.CreateNamespace(ctx, a, nil, catalog.ModeOverwrite, opts...)
			return err
		}, checks: []string{"ns-trashed a", "protected namespace a force=false"}, inner: "create-namespace a"},
		{name: "CreateNamespace create", run: func(ctx context.Context, g *Catalog, opts ...catalog.Option) error {
			_, err := g.CreateNamespace(ctx, ident.ID{"b"}, nil, catalog.ModeCreate, opts...)
			return err
		}, checks: []string{"ns-trashed b"}, inner: "create-namespace b"},
		{name: "CreateTable overwrite", authzed: true, run: func(ctx context.Context, g *Catalog, opts ...catalog.Option) error {
			_, _, err := g.CreateTable(ctx, at, catalog.NewTable{Mode: catalog.ModeOverwrite}, opts...)
			return err
		}, checks: []string{"trashed a$t", "ns-trashed a", "protected table a$t force=false"}, inner: "create-table a$t"},
		{name: "CreateTable create", run: func(ctx context.Context, g *Catalog, opts ...catalog.Option) error {
			_, _, err := g.CreateTable(ctx, ident.ID{"a", "n"}, catalog.NewTable{Mode: catalog.ModeCreate}, opts...)
			return err
		}, checks: []string{"trashed a$n", "ns-trashed a"}, inner: "create-table a$n"},
		{name: "DeclareTable", run: func(ctx context.Context, g *Catalog, opts ...catalog.Option) error {
			_, err := g.DeclareTable(ctx, ident.ID{"a", "n"}, "", nil) // a declare takes no options: it replaces nothing
			return err
		}, checks: []string{"trashed a$n", "ns-trashed a"}, inner: "declare-table a$n"},
		{name: "RegisterTable overwrite", authzed: true, run: func(ctx context.Context, g *Catalog, opts ...catalog.Option) error {
			_, err := g.RegisterTable(ctx, at, "s3://b/t", catalog.ModeOverwrite, nil, opts...)
			return err
		}, checks: []string{"trashed a$t", "ns-trashed a", "protected table a$t force=false"}, inner: "register-table a$t"},
		{name: "DropTable", run: func(ctx context.Context, g *Catalog, opts ...catalog.Option) error {
			_, err := g.DropTable(ctx, at, opts...)
			return err
		}, checks: []string{"protected table a$t force=false"}, inner: "drop-table a$t"},
		{name: "DeregisterTable", run: func(ctx context.Context, g *Catalog, opts ...catalog.Option) error {
			_, err := g.DeregisterTable(ctx, at, opts...)
			return err
		}, checks: []string{"protected table a$t force=false"}, inner: "deregister-table a$t"},
		{name: "DropNamespace restrict", run: func(ctx context.Context, g *Catalog, opts ...catalog.Option) error {
			_, err := g.DropNamespace(ctx, ident.ID{"c"}, catalog.ModeFail, catalog.BehaviorRestrict, opts...)
			return err
		}, checks: []string{"protected namespace c force=false"}, inner: "drop-namespace c"},
		{name: "DropNamespace cascade", run: func(ctx context.Context, g *Catalog, opts ...catalog.Option) error {
			_, err := g.DropNamespace(ctx, a, catalog.ModeFail, catalog.BehaviorCascade, opts...)
			return err
		}, checks: []string{"subtree-protected a force=false"}, inner: "drop-namespace a"},
		{name: "RenameTable", authzed: true, run: func(ctx context.Context, g *Catalog, opts ...catalog.Option) error {
			_, err := g.RenameTable(ctx, at, ident.ID{"c"}, "u", opts...)
			return err
		}, checks: []string{"protected table a$t force=false", "trashed c$u", "ns-trashed c"}, inner: "rename-table a$t"},
	}
}

// innerCalled reports whether the fake catalog was asked op ("name id"; its calls are
// "name id" or "name:mode id").
func innerCalled(f *fakeCatalog, op string) bool {
	name, id, _ := strings.Cut(op, " ")
	for _, c := range f.calls {
		n, i, _ := strings.Cut(c, " ")
		n, _, _ = strings.Cut(n, ":")
		if n == name && i == id {
			return true
		}
	}
	return false
}

// TestConflictChecksInOrder: every creating, destroying and moving operation runs its conflict
// checks (live trash of the id, then of its namespace, then protection of what an Overwrite
// replaces; protection of the source, then the live trash of a rename's destination) before the
// catalog, in the order the spec doors always ran them; the first refusal is the answer and the
// catalog is not called.
func TestConflictChecksInOrder(t *testing.T) {
	for _, d := range conflictDoors() {
		t.Run(d.name, func(t *testing.T) {
			cat := newFake([]string{"a", "c"}, []string{"a$t"})
			rec := &fakeRecords{}
			g := New(cat, Options{Authorizer: &recordingAuthorizer{}, Records: rec})
			err := d.run(context.Background(), g)
			assert.NilError(t, err)
			assert.DeepEqual(t, rec.checks, d.checks)
			assert.Assert(t, innerCalled(cat, d.inner), "calls %v", cat.calls)
		})
		// Each check in turn refuses: the answer is its error, nothing after it is asked, and
		// the catalog is untouched.
		for i := range d.checks {
			t.Run(d.name+" refused by "+d.checks[i], func(t *testing.T) {
				cat := newFake([]string{"a", "c"}, []string{"a$t"})
				rec := &fakeRecords{}
				want := refuse(rec, d.checks[i])
				g := New(cat, Options{Authorizer: &recordingAuthorizer{}, Records: rec})
				err := d.run(context.Background(), g)
				assert.Assert(t, errors.Is(err, want), "got %v", err)
				assert.DeepEqual(t, rec.checks, d.checks[:i+1])
				assert.Assert(t, !innerCalled(cat, d.inner), "calls %v", cat.calls)
			})
		}
	}
}

// refuse makes rec refuse the check named by s (its first word) and answers the error it gives.
func refuse(rec *fakeRecords, s string) error {
	switch {
	case len(s) >= 8 && s[:8] == "trashed ":
		rec.errTrashed = errTrashed
		return errTrashed
	case len(s) >= 11 && s[:11] == "ns-trashed ":
		rec.errNamespaceTrashed = errNamespaceTrashed
		return errNamespaceTrashed
	default:
		rec.errProtected = errProtected
		return errProtected
	}
}

// TestConflictDeniedFirst: a takeover or a rename the caller may not make is refused before any
// conflict check, so a denied caller learns nothing from protection or the trash (the decorator
// counterpart of TestRenameDeniedBeforeConflicts and TestOverwriteDeniedBeforeProtection).
func TestConflictDeniedFirst(t *testing.T) {
	for _, d := range conflictDoors() {
		if !d.authzed {
			continue
		}
		t.Run(d.name, func(t *testing.T) {
			cat := newFake([]string{"a", "c"}, []string{"a$t"})
			rec := &fakeRecords{errProtected: errProtected, errTrashed: errTrashed, errNamespaceTrashed: errNamespaceTrashed}
			a := &recordingAuthorizer{denied: map[authz.Action]bool{
				authz.NamespaceDrop: true, authz.TableDrop: true, authz.TableCreate: true,
			}}
			g := New(cat, Options{Authorizer: a, Records: rec})
			err := d.run(context.Background(), g)
			assert.Assert(t, err != nil)
			code := nserr.CodeOf(err)
			assert.Assert(t, code == nserr.PermissionDenied || code == nserr.NamespaceNotFound, "got %v", err)
			assert.Assert(t, len(rec.checks) == 0, "asked %v", rec.checks)
			assert.Assert(t, !innerCalled(cat, d.inner), "calls %v", cat.calls)
		})
	}
}

// TestConflictForce: force (catalog.WithForce) reaches every protection check, and nothing else.
func TestConflictForce(t *testing.T) {
	for _, d := range conflictDoors() {
		t.Run(d.name, func(t *testing.T) {
			cat := newFake([]string{"a", "c"}, []string{"a$t"})
			rec := &fakeRecords{}
			g := New(cat, Options{Authorizer: &recordingAuthorizer{}, Records: rec})
			assert.NilError(t, d.run(context.Background(), g, catalog.WithForce()))
			want := make([]string, len(d.checks))
			for i, c := range d.checks {
				if n := len(c); n > 11 && c[n-11:] == "force=false" {
					c = c[:n-11] + "force=true"
				}
				want[i] = c
			}
			assert.DeepEqual(t, rec.checks, want)
		})
	}
}

// TestOptionsReachInner: a call's options are handed on to the inner catalog as they came (a
// governed catalog over a remote one sends them on), whatever the decorator read of them.
func TestOptionsReachInner(t *testing.T) {
	for _, d := range conflictDoors() {
		if d.name == "DeclareTable" {
			continue // a declare takes no options
		}
		t.Run(d.name, func(t *testing.T) {
			cat := newFake([]string{"a", "c"}, []string{"a$t"})
			g := New(cat, Options{Authorizer: &recordingAuthorizer{}, Records: &fakeRecords{}})
			assert.NilError(t, d.run(context.Background(), g, catalog.WithForce(), catalog.WithPurge()))
			assert.DeepEqual(t, cat.options, []catalog.Options{{Force: true, Purge: true}})
		})
	}
	t.Run("CommitTableVersions", func(t *testing.T) {
		cat := newFake([]string{"a"}, []string{"a$t"})
		g := New(cat, Options{Authorizer: &recordingAuthorizer{}, Records: &fakeRecords{}})
		_, _, err := g.CommitTableVersions(context.Background(), catalog.TxnBatchCommitTables,
			[]catalog.VersionEntry{{Table: ident.ID{"a", "t"}, Deregister: true}}, catalog.WithForce())
		assert.NilError(t, err)
		assert.DeepEqual(t, cat.options, []catalog.Options{{Force: true}})
	})
}

// TestConflictWithoutTrash: records that keep no trash (no CheckNotTrashed: the governance
// service alone) refuse no create for the trash; protection is still asked.
func TestConflictWithoutTrash(t *testing.T) {
	cat := newFake([]string{"a"}, []string{"a$t"})
	rec := &protectionOnly{fakeRecords: &fakeRecords{}}
	g := New(cat, Options{Authorizer: &recordingAuthorizer{}, Records: rec})
	_, _, err := g.CreateTable(context.Background(), ident.ID{"a", "t"}, catalog.NewTable{Mode: catalog.ModeOverwrite})
	assert.NilError(t, err)
	assert.DeepEqual(t, rec.checks, []string{"protected table a$t force=false"})
}

// protectionOnly is fakeRecords without the live-trash checks.
type protectionOnly struct{ *fakeRecords }

func (p *protectionOnly) CheckNotTrashed()          {}
func (p *protectionOnly) CheckNamespaceNotTrashed() {}
