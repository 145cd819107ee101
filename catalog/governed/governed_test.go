package governed

import (
	"context"
	"errors"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"gotest.tools/v3/assert"

	"github.com/lancecat/lancecat/authz"
	"github.com/lancecat/lancecat/catalog"
	nserr "github.com/lancecat/lancecat/errors"
	"github.com/lancecat/lancecat/governance"
	"github.com/lancecat/lancecat/ident"
	"github.com/lancecat/lancecat/registry"
)

// racingCatalog is a catalog where namespace ids are free when a guard first asks and taken when
// the create lands (and from then on): another caller's create won the race in between. Any other call panics (nil
// Inner).
type racingCatalog struct {
	Inner
	modes []string // the modes CreateNamespace was asked for
}

func (r *racingCatalog) NamespaceExists(context.Context, ident.ID) error {
	if len(r.modes) == 0 {
		return nserr.NamespaceNotFoundf("not yet")
	}
	return nil
}

func (r *racingCatalog) CreateNamespace(_ context.Context, _ ident.ID, props map[string]string, mode string, _ ...catalog.Option) (map[string]string, error) {
	r.modes = append(r.modes, mode)
	if mode == catalog.ModeCreate {
		return nil, nserr.NamespaceAlreadyExistsf("created concurrently")
	}
	return props, nil
}

// recordingAuthorizer allows every door but the denied ones and records what it was asked. It is
// a fake for fault injection (OpenFGA itself is not the point here): seedErr and revokeErr make
// the tuple writes fail, as an OpenFGA outage after the catalog committed would; hidden objects
// are filtered out of listings.
type recordingAuthorizer struct {
	authz.Disabled
	denied  map[authz.Action]bool
	checked []authz.Action
	written int // SeedCreate and RevokeAll calls

	seedErr, revokeErr error
	seeded, revoked    []authz.Object
	hidden             map[authz.Object]bool
}

func (a *recordingAuthorizer) Enabled() bool { return true }

func (a *recordingAuthorizer) Check(_ context.Context, _ authz.Principal, action authz.Action, _ authz.Object) error {
	a.checked = append(a.checked, action)
	if a.denied[action] {
		return nserr.PermissionDeniedf("%s denied", action)
	}
	return nil
}

func (a *recordingAuthorizer) Filter(_ context.Context, _ authz.Principal, _ authz.Action, objects []authz.Object) ([]authz.Object, error) {
	var out []authz.Object
	for _, o := range objects {
		if !a.hidden[o] {
			out = append(out, o)
		}
	}
	return out, nil
}

func (a *recordingAuthorizer) SeedCreate(_ context.Context, _ authz.Principal, object, _ authz.Object) error {
	a.written++
	if a.seedErr != nil {
		return a.seedErr
	}
	a.seeded = append(a.seeded, object)
	return nil
}

func (a *recordingAuthorizer) RevokeAll(_ context.Context, object authz.Object) ([]authz.Tuple, error) {
	a.written++
	if a.revokeErr != nil {
		return nil, a.revokeErr
	}
	a.revoked = append(a.revoked, object)
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
		{catalog.ModeOverwrite, nserr.PermissionDenied, []string{catalog.ModeCreate}, authz.NamespaceDrop},
		{catalog.ModeExistOk, 0, []string{catalog.ModeCreate, catalog.ModeExistOk}, authz.NamespaceDescribe},
	} {
		t.Run(tc.mode, func(t *testing.T) {
			cat := &racingCatalog{}
			a := &recordingAuthorizer{denied: map[authz.Action]bool{authz.NamespaceDrop: true}}
			g := New(cat, Options{Authorizer: a})
			_, err := g.CreateNamespace(context.Background(), ident.ID{"n1", "victim"}, nil, tc.mode)
			if tc.wantCode == 0 {
				assert.NilError(t, err)
			} else {
				assert.Equal(t, nserr.CodeOf(err), tc.wantCode, "%v", err)
			}
			assert.DeepEqual(t, cat.modes, tc.wantModes)
			assert.DeepEqual(t, a.checked, []authz.Action{tc.wantCheck})
			assert.Equal(t, a.written, 0, "a lost race seeded or revoked tuples")
		})
	}
}

// fakeCatalog is an in-memory catalog of namespaces and tables keyed by their "$"-joined ids,
// recording the mutating calls it was asked for. It is a fake for fault injection: failDeregister,
// failDrop and failUndo make those calls fail. Any call it does not implement panics (nil Inner).
type fakeCatalog struct {
	Inner
	namespaces map[string]bool
	tables     map[string]bool
	calls      []string
	options    []catalog.Options // what each lifecycle call was given, resolved

	failDeregister, failDrop error
}

func newFake(namespaces, tables []string) *fakeCatalog {
	f := &fakeCatalog{namespaces: map[string]bool{}, tables: map[string]bool{}}
	for _, n := range namespaces {
		f.namespaces[n] = true
	}
	for _, t := range tables {
		f.tables[t] = true
	}
	return f
}

func key(id ident.ID) string { return id.Join("$") }

func (f *fakeCatalog) call(op string, id ident.ID) { f.calls = append(f.calls, op+" "+key(id)) }

// given records the options of a lifecycle call.
func (f *fakeCatalog) given(opts []catalog.Option) {
	f.options = append(f.options, catalog.Resolve(opts...))
}

func (f *fakeCatalog) table(id ident.ID) *catalog.Entry {
	return &catalog.Entry{URI: "mem://" + key(id), Location: key(id), Properties: map[string]string{}}
}

func (f *fakeCatalog) NamespaceExists(_ context.Context, id ident.ID) error {
	if id.IsRoot() || f.namespaces[key(id)] {
		return nil
	}
	return nserr.NamespaceNotFoundf("namespace %s not found", key(id))
}

func (f *fakeCatalog) DescribeNamespace(ctx context.Context, id ident.ID) (map[string]string, error) {
	if err := f.NamespaceExists(ctx, id); err != nil {
		return nil, err
	}
	return map[string]string{"k": "v"}, nil
}

func (f *fakeCatalog) TableExists(_ context.Context, id ident.ID) error {
	if f.tables[key(id)] {
		return nil
	}
	return nserr.TableNotFoundf("table %s not found", key(id))
}

func (f *fakeCatalog) DescribeTable(ctx context.Context, id ident.ID) (*catalog.Entry, error) {
	if err := f.TableExists(ctx, id); err != nil {
		return nil, err
	}
	return f.table(id), nil
}

func (f *fakeCatalog) CreateNamespace(_ context.Context, id ident.ID, props map[string]string, mode string, opts ...catalog.Option) (map[string]string, error) {
	f.given(opts)
	f.call("create-namespace:"+mode, id)
	if f.namespaces[key(id)] && mode == catalog.ModeCreate {
		return nil, nserr.NamespaceAlreadyExistsf("namespace %s exists", key(id))
	}
	f.namespaces[key(id)] = true
	return props, nil
}

func (f *fakeCatalog) create(id ident.ID, mode string) (*catalog.Entry, error) {
	if f.tables[key(id)] && mode == catalog.ModeCreate {
		return nil, nserr.TableAlreadyExistsf("table %s exists", key(id))
	}
	f.tables[key(id)] = true
	return f.table(id), nil
}

func (f *fakeCatalog) CreateTable(_ context.Context, id ident.ID, nt catalog.NewTable, opts ...catalog.Option) (*catalog.Entry, uint64, error) {
	f.given(opts)
	f.call("create-table:"+nt.Mode, id)
	t, err := f.create(id, nt.Mode)
	return t, 1, err
}

func (f *fakeCatalog) DeclareTable(_ context.Context, id ident.ID, _ string, _ map[string]string) (*catalog.Entry, error) {
	f.call("declare-table", id)
	return f.create(id, catalog.ModeCreate)
}

func (f *fakeCatalog) RegisterTable(_ context.Context, id ident.ID, _, mode string, _ map[string]string, opts ...catalog.Option) (*catalog.Entry, error) {
	f.given(opts)
	f.call("register-table:"+mode, id)
	return f.create(id, mode)
}

func (f *fakeCatalog) gone(id ident.ID, fail error) (*catalog.Entry, error) {
	if fail != nil {
		return nil, fail
	}
	if !f.tables[key(id)] {
		return nil, nserr.TableNotFoundf("table %s not found", key(id))
	}
	delete(f.tables, key(id))
	return f.table(id), nil
}

func (f *fakeCatalog) DropTable(_ context.Context, id ident.ID, opts ...catalog.Option) (*catalog.Entry, error) {
	f.given(opts)
	f.call("drop-table", id)
	return f.gone(id, f.failDrop)
}

func (f *fakeCatalog) DeregisterTable(_ context.Context, id ident.ID, opts ...catalog.Option) (*catalog.Entry, error) {
	f.given(opts)
	f.call("deregister-table", id)
	return f.gone(id, f.failDeregister)
}

func (f *fakeCatalog) DropNamespace(_ context.Context, id ident.ID, _, behavior string, opts ...catalog.Option) (map[string]string, error) {
	f.given(opts)
	f.call("drop-namespace:"+behavior, id)
	if f.failDrop != nil {
		return nil, f.failDrop
	}
	prefix := key(id) + "$"
	for _, m := range []map[string]bool{f.tables, f.namespaces} {
		for k := range m {
			if strings.HasPrefix(k, prefix) {
				if behavior != catalog.BehaviorCascade {
					return nil, nserr.NamespaceNotEmptyf("namespace %s is not empty", key(id))
				}
				delete(m, k)
			}
		}
	}
	delete(f.namespaces, key(id))
	return map[string]string{"k": "v"}, nil
}

func (f *fakeCatalog) RenameTable(_ context.Context, id ident.ID, newNamespace ident.ID, newName string, opts ...catalog.Option) (*catalog.Entry, error) {
	f.given(opts)
	f.call("rename-table", id)
	dest := newNamespace
	if dest == nil {
		dest = id.Parent()
	}
	to := dest.Child(newName)
	if f.tables[key(to)] {
		return nil, nserr.TableAlreadyExistsf("table %s exists", key(to))
	}
	if _, err := f.gone(id, nil); err != nil {
		return nil, err
	}
	f.tables[key(to)] = true
	return f.table(to), nil
}

// children lists the direct children of id in m, sorted, paged two at a time (the token is the
// last name given), so the decorator's readers must follow pages.
func children(m map[string]bool, id ident.ID, token string, limit int) catalog.Page {
	var names []string
	for k := range m {
		kid := ident.ID(strings.Split(k, "$"))
		if len(kid) == len(id)+1 && kid.Parent().Equal(id) && kid.Name() > token {
			names = append(names, kid.Name())
		}
	}
	sort.Strings(names)
	if limit <= 0 || limit > 2 {
		limit = 2
	}
	if len(names) > limit {
		return catalog.Page{Names: names[:limit], NextToken: names[limit-1]}
	}
	return catalog.Page{Names: names}
}

func (f *fakeCatalog) ListNamespaces(_ context.Context, id ident.ID, token string, limit int) (catalog.Page, error) {
	return children(f.namespaces, id, token, limit), nil
}

func (f *fakeCatalog) ListTables(_ context.Context, id ident.ID, token string, limit int) (catalog.Page, error) {
	return children(f.tables, id, token, limit), nil
}

// fakeRecords is the governance records, trash and events, recording what they were asked. It is
// a fake for fault injection: failClear and failDiscard make those calls fail.
type fakeRecords struct {
	grace   time.Duration
	calls   []string
	events  []string
	trashed []string

	failClear, failDiscard error

	checks                                        []string
	errProtected, errTrashed, errNamespaceTrashed error
}

func (r *fakeRecords) note(s string, err error) error {
	r.calls = append(r.calls, s)
	return err
}

func (r *fakeRecords) ClearProtection(_ context.Context, kind string, id ident.ID) error {
	return r.note("clear-protection "+kind+" "+key(id), r.failClear)
}

func (r *fakeRecords) ClearPolicy(_ context.Context, kind string, id ident.ID) error {
	return r.note("clear-policy "+kind+" "+key(id), nil)
}

func (r *fakeRecords) ClearSubtreeProtection(_ context.Context, ns ident.ID) error {
	return r.note("clear-subtree-protection "+key(ns), r.failClear)
}

func (r *fakeRecords) ClearSubtreePolicies(_ context.Context, ns ident.ID) error {
	return r.note("clear-subtree-policies "+key(ns), nil)
}

func (r *fakeRecords) MoveTableRecords(_ context.Context, from, to ident.ID) error {
	return r.note("move "+key(from)+" "+key(to), nil)
}

func (r *fakeRecords) TrashGrace() time.Duration { return r.grace }

func (r *fakeRecords) TrashTable(_ context.Context, _ authz.Principal, id ident.ID, _ string, _ map[string]string, _ string) (registry.Trash, error) {
	r.trashed = append(r.trashed, "table "+key(id))
	return registry.Trash{}, nil
}

func (r *fakeRecords) DiscardTrash(_ context.Context, id ident.ID) error {
	return r.note("discard "+key(id), r.failDiscard)
}

func (r *fakeRecords) TrashNamespace(_ context.Context, _ authz.Principal, id ident.ID, _ map[string]string, _ string) (registry.Trash, error) {
	r.trashed = append(r.trashed, "namespace "+key(id))
	return registry.Trash{}, nil
}

func (r *fakeRecords) DiscardNamespaceTrash(_ context.Context, id ident.ID) error {
	return r.note("discard-namespace "+key(id), r.failDiscard)
}

// The conflict checks: each is noted in checks (not calls, which the after-effect tests compare)
// and refuses with its err* field when set.
func (r *fakeRecords) check(s string, err error) error {
	r.checks = append(r.checks, s)
	return err
}

func (r *fakeRecords) CheckNotProtected(_ context.Context, kind string, id ident.ID, force bool) error {
	return r.check("protected "+kind+" "+key(id)+" force="+strconv.FormatBool(force), r.errProtected)
}

func (r *fakeRecords) CheckSubtreeNotProtected(_ context.Context, ns ident.ID, force bool) error {
	return r.check("subtree-protected "+key(ns)+" force="+strconv.FormatBool(force), r.errProtected)
}

func (r *fakeRecords) CheckNotTrashed(_ context.Context, id ident.ID) error {
	return r.check("trashed "+key(id), r.errTrashed)
}

func (r *fakeRecords) CheckNamespaceNotTrashed(_ context.Context, id ident.ID) error {
	return r.check("ns-trashed "+key(id), r.errNamespaceTrashed)
}

func (r *fakeRecords) Changed(_ context.Context, _ authz.Principal, event, _ string, id ident.ID, _ map[string]string) {
	r.events = append(r.events, event+" "+key(id))
}

// errOutage is OpenFGA failing (fault injection): its text names an internal address, which no
// answer may show.
var errOutage = nserr.ServiceUnavailablef("authorization service at %s unavailable", internalAddr)

const internalAddr = "http://10.0.0.7:8081"

// assertCommitted checks the answer a caller sees for an operation that committed but whose
// follow-up failed: 500 code 18 of the committed type, a detail saying what stands (want, in the
// catalog's words) and not to retry, and nothing of the cause (no internal address).
func assertCommitted(t *testing.T, err error, want ...string) {
	t.Helper()
	p := nserr.ProblemFor(err, "/v1/x", "rid")
	assert.Equal(t, p.Status, 500, "%v", err)
	assert.Equal(t, p.Code, int(nserr.Internal))
	assert.Equal(t, p.Type, nserr.CommittedType)
	assert.Equal(t, p.Context["committed"], "true")
	for _, w := range append(want, "Do not retry the request: it committed") {
		assert.Assert(t, strings.Contains(p.Detail, w), "detail %q lacks %q", p.Detail, w)
	}
	for _, leak := range []string{internalAddr, "storage down"} {
		assert.Assert(t, !strings.Contains(p.Detail, leak), "detail %q shows the cause", p.Detail)
	}
}

// TestCreateSeedsOrUndoes: every creating operation seeds the new object's tuples (after revoking
// what its id still held) and records its event; when OpenFGA fails after the catalog committed,
// the create is undone and no event is recorded, and when the undo fails too the create stands:
// its event is recorded and the answer is the committed problem, saying what to do.
func TestCreateSeedsOrUndoes(t *testing.T) {
	ctx := context.Background()
	type op struct {
		name   string
		run    func(*Catalog) error
		object authz.Object
		undo   string
		event  string
	}
	nsID, tID := ident.ID{"ns", "new"}, ident.ID{"ns", "t"}
	ops := []op{
		{"namespace", func(g *Catalog) error {
			_, err := g.CreateNamespace(ctx, nsID, nil, catalog.ModeCreate)
			return err
		}, authz.NamespaceObject(nsID), "drop-namespace:" + catalog.BehaviorRestrict + " ns$new", governance.EventNamespaceCreated + " ns$new"},
		{"table", func(g *Catalog) error {
			_, _, err := g.CreateTable(ctx, tID, catalog.NewTable{})
			return err
		}, authz.TableObject(tID), "drop-table ns$t", governance.EventTableCreated + " ns$t"},
		{"declare", func(g *Catalog) error {
			_, err := g.DeclareTable(ctx, tID, "", nil)
			return err
		}, authz.TableObject(tID), "drop-table ns$t", governance.EventTableDeclared + " ns$t"},
		{"register", func(g *Catalog) error {
			_, err := g.RegisterTable(ctx, tID, "somewhere", catalog.ModeCreate, nil)
			return err
		}, authz.TableObject(tID), "deregister-table ns$t", governance.EventTableRegistered + " ns$t"},
	}
	for _, o := range ops {
		for _, fault := range []string{"none", "seed fails after the commit", "seed and undo fail"} {
			t.Run(o.name+"/"+fault, func(t *testing.T) {
				cat := newFake([]string{"ns"}, nil)
				a := &recordingAuthorizer{}
				rec := &fakeRecords{}
				if fault != "none" {
					a.seedErr = errOutage
				}
				undoErr := nserr.ServiceUnavailablef("storage down")
				if fault == "seed and undo fail" {
					cat.failDrop, cat.failDeregister = undoErr, undoErr
				}
				err := o.run(New(cat, Options{Authorizer: a, Records: rec}))
				switch fault {
				case "none":
					assert.NilError(t, err)
					assert.DeepEqual(t, a.revoked, []authz.Object{o.object})
					assert.DeepEqual(t, a.seeded, []authz.Object{o.object})
					assert.DeepEqual(t, rec.events, []string{o.event})
					return
				case "seed fails after the commit":
					assert.Equal(t, err, errOutage)
					assert.Assert(t, cat.NamespaceExists(ctx, nsID) != nil && cat.TableExists(ctx, tID) != nil, "the create was not undone")
				default:
					// Created, unowned, not undone: the caller is told it stands and not to
					// retry (a retry would only hear "already exists"); the log keeps both causes.
					what := "the table ns$t"
					if o.name == "namespace" {
						what = "the namespace ns$new"
					}
					assertCommitted(t, err, what+" was created", "its owner could not be recorded, and undoing the create failed too",
						"ask one to drop it")
					assert.Assert(t, errors.Is(err, errOutage) && errors.Is(err, undoErr), "the causes are kept for the log")
					assert.Assert(t, cat.NamespaceExists(ctx, nsID) == nil || cat.TableExists(ctx, tID) == nil, "the created object is not there")
					assert.Equal(t, cat.calls[len(cat.calls)-1], o.undo)
					// It stands, so its event is recorded like any change's.
					assert.DeepEqual(t, rec.events, []string{o.event})
					return
				}
				assert.Equal(t, cat.calls[len(cat.calls)-1], o.undo)
				assert.Equal(t, len(rec.events), 0, "an undone create recorded events: %v", rec.events)
			})
		}
	}
}

// TestTakeoverChecks: a takeover of an object that exists is checked on that object (Overwrite:
// its destroy right; ExistOk: seeing it; the root: the catalog's properties) and leaves its tuples
// as they are; a denied one reaches no catalog write.
func TestTakeoverChecks(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		name      string
		run       func(*Catalog) error
		wantCheck authz.Action
		wantCall  string
	}{
		{"namespace overwrite", func(g *Catalog) error {
			_, err := g.CreateNamespace(ctx, ident.ID{"ns"}, nil, catalog.ModeOverwrite)
			return err
		}, authz.NamespaceDrop, "create-namespace:" + catalog.ModeOverwrite + " ns"},
		{"namespace exist-ok", func(g *Catalog) error {
			_, err := g.CreateNamespace(ctx, ident.ID{"ns"}, nil, catalog.ModeExistOk)
			return err
		}, authz.NamespaceDescribe, "create-namespace:" + catalog.ModeExistOk + " ns"},
		{"root", func(g *Catalog) error {
			_, err := g.CreateNamespace(ctx, ident.ID{}, nil, catalog.ModeExistOk)
			return err
		}, authz.CatalogPropertiesSet, "create-namespace:" + catalog.ModeExistOk + " " + key(ident.ID{})},
		{"table overwrite", func(g *Catalog) error {
			_, _, err := g.CreateTable(ctx, ident.ID{"ns", "t"}, catalog.NewTable{Mode: catalog.ModeOverwrite})
			return err
		}, authz.TableDrop, "create-table:" + catalog.ModeOverwrite + " ns$t"},
		{"table exist-ok", func(g *Catalog) error {
			_, _, err := g.CreateTable(ctx, ident.ID{"ns", "t"}, catalog.NewTable{Mode: catalog.ModeExistOk})
			return err
		}, authz.TableDescribe, "create-table:" + catalog.ModeExistOk + " ns$t"},
		{"register overwrite", func(g *Catalog) error {
			_, err := g.RegisterTable(ctx, ident.ID{"ns", "t"}, "elsewhere", catalog.ModeOverwrite, nil)
			return err
		}, authz.TableDrop, "register-table:" + catalog.ModeOverwrite + " ns$t"},
	} {
		for _, denied := range []bool{false, true} {
			name := tc.name
			if denied {
				name += " denied"
			}
			t.Run(name, func(t *testing.T) {
				cat := newFake([]string{"ns"}, []string{"ns$t"})
				a := &recordingAuthorizer{denied: map[authz.Action]bool{}}
				if denied {
					a.denied[tc.wantCheck] = true
				}
				err := tc.run(New(cat, Options{Authorizer: a}))
				assert.DeepEqual(t, a.checked, []authz.Action{tc.wantCheck})
				assert.Equal(t, a.written, 0, "a takeover seeded or revoked tuples")
				if denied {
					assert.Equal(t, nserr.CodeOf(err), nserr.PermissionDenied)
					assert.Equal(t, len(cat.calls), 0, "a denied takeover reached the catalog: %v", cat.calls)
					return
				}
				assert.NilError(t, err)
				assert.DeepEqual(t, cat.calls, []string{tc.wantCall})
			})
		}
	}
	// No takeover, no takeover check: an overwrite or exist-ok of a free id is a create, and a
	// plain create of an id that exists is the catalog's conflict; with authorization off nothing
	// is checked at all. (Every door denies, so a check asked would fail the call.)
	for _, tc := range []struct {
		name string
		run  func(*Catalog) error
		code *nserr.Code // nil: succeeds
	}{
		{"table overwrite of a free id", func(g *Catalog) error {
			_, _, err := g.CreateTable(ctx, ident.ID{"ns", "free"}, catalog.NewTable{Mode: catalog.ModeOverwrite})
			return err
		}, nil},
		{"namespace exist-ok of a free id", func(g *Catalog) error {
			_, err := g.CreateNamespace(ctx, ident.ID{"free"}, nil, catalog.ModeExistOk)
			return err
		}, nil},
		{"plain create of a table that exists", func(g *Catalog) error {
			_, _, err := g.CreateTable(ctx, ident.ID{"ns", "t"}, catalog.NewTable{Mode: catalog.ModeCreate})
			return err
		}, ptr(nserr.TableAlreadyExists)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a := &recordingAuthorizer{denied: map[authz.Action]bool{authz.TableDrop: true, authz.TableDescribe: true,
				authz.NamespaceDrop: true, authz.NamespaceDescribe: true}}
			outcome := func(err error) {
				t.Helper()
				if tc.code == nil {
					assert.NilError(t, err)
					return
				}
				assert.Equal(t, nserr.CodeOf(err), *tc.code, "%v", err)
			}
			outcome(tc.run(New(newFake([]string{"ns"}, []string{"ns$t"}), Options{Authorizer: a})))
			assert.DeepEqual(t, a.checked, []authz.Action(nil))
			outcome(tc.run(New(newFake([]string{"ns"}, []string{"ns$t"}), Options{Authorizer: authz.Disabled{}})))
		})
	}
}

// TestDestroyRevokes: a destroying drop clears the records of what it destroyed, records its event
// and then revokes every tuple on it (a cascade: the subtree, enumerated before the drop through
// every page, deepest first); a recoverable drop files the objects in the trash and revokes
// nothing; a drop the catalog refuses touches nothing; OpenFGA failing after the commit is the
// answer, naming what was left.
func TestDestroyRevokes(t *testing.T) {
	ctx := context.Background()
	namespaces := []string{"ns", "ns$a", "ns$b", "ns$c", "ns$a$x"}
	tables := []string{"ns$t1", "ns$t2", "ns$t3", "ns$a$u", "ns$a$x$v"}
	tab := func(s string) authz.Object { return authz.TableObject(ident.ID(strings.Split(s, "$"))) }
	nsObj := func(s string) authz.Object { return authz.NamespaceObject(ident.ID(strings.Split(s, "$"))) }
	cascade := []authz.Object{
		tab("ns$a$x$v"), nsObj("ns$a$x"), tab("ns$a$u"), nsObj("ns$a"), nsObj("ns$b"), nsObj("ns$c"),
		tab("ns$t1"), tab("ns$t2"), tab("ns$t3"), nsObj("ns"),
	}
	for _, tc := range []struct {
		name        string
		grace       time.Duration
		purge       bool
		revokeErr   error
		clearErr    error
		run         func(context.Context, *Catalog, ...catalog.Option) error
		wantRevoked []authz.Object
		wantRecords []string
		wantEvent   string
		wantTrashed []string
		wantCode    nserr.Code
	}{
		{name: "drop table", run: func(ctx context.Context, g *Catalog, opts ...catalog.Option) error {
			_, err := g.DropTable(ctx, ident.ID{"ns", "t1"}, opts...)
			return err
		},
			wantRevoked: []authz.Object{tab("ns$t1")}, wantRecords: []string{"clear-protection table ns$t1", "clear-policy table ns$t1"},
			wantEvent: governance.EventTableDropped + " ns$t1"},
		{name: "purged drop table", grace: time.Hour, purge: true, run: func(ctx context.Context, g *Catalog, opts ...catalog.Option) error {
			_, err := g.DropTable(ctx, ident.ID{"ns", "t1"}, opts...)
			return err
		},
			wantRevoked: []authz.Object{tab("ns$t1")}, wantRecords: []string{"clear-protection table ns$t1", "clear-policy table ns$t1"},
			wantEvent: governance.EventTableDropped + " ns$t1"},
		{name: "recoverable drop table", grace: time.Hour, run: func(ctx context.Context, g *Catalog, opts ...catalog.Option) error {
			_, err := g.DropTable(ctx, ident.ID{"ns", "t1"}, opts...)
			return err
		},
			wantRecords: []string{"clear-protection table ns$t1"}, wantEvent: governance.EventTableDropped + " ns$t1",
			wantTrashed: []string{"table ns$t1"}},
		{name: "deregister table", grace: time.Hour, run: func(ctx context.Context, g *Catalog, opts ...catalog.Option) error {
			_, err := g.DeregisterTable(ctx, ident.ID{"ns", "t1"}, opts...)
			return err
		},
			wantRevoked: []authz.Object{tab("ns$t1")}, wantRecords: []string{"clear-protection table ns$t1", "clear-policy table ns$t1"},
			wantEvent: governance.EventTableDeregistered + " ns$t1"},
		{name: "drop missing table", run: func(ctx context.Context, g *Catalog, opts ...catalog.Option) error {
			_, err := g.DropTable(ctx, ident.ID{"ns", "nope"}, opts...)
			return err
		},
			wantCode: nserr.TableNotFound},
		{name: "cascade", run: func(ctx context.Context, g *Catalog, opts ...catalog.Option) error {
			_, err := g.DropNamespace(ctx, ident.ID{"ns"}, catalog.ModeFail, catalog.BehaviorCascade, opts...)
			return err
		}, wantRevoked: cascade, wantRecords: []string{"clear-subtree-protection ns", "clear-subtree-policies ns"},
			wantEvent: governance.EventNamespaceDropped + " ns"},
		{name: "recoverable cascade", grace: time.Hour, run: func(ctx context.Context, g *Catalog, opts ...catalog.Option) error {
			_, err := g.DropNamespace(ctx, ident.ID{"ns"}, catalog.ModeFail, catalog.BehaviorCascade, opts...)
			return err
		}, wantRecords: []string{"clear-subtree-protection ns"}, wantEvent: governance.EventNamespaceDropped + " ns",
			wantTrashed: []string{"namespace ns", "table ns$a$x$v", "table ns$a$u", "table ns$t1", "table ns$t2", "table ns$t3",
				"namespace ns$a$x", "namespace ns$a", "namespace ns$b", "namespace ns$c"}},
		{name: "restrict drop of a full namespace", grace: time.Hour, run: func(ctx context.Context, g *Catalog, opts ...catalog.Option) error {
			_, err := g.DropNamespace(ctx, ident.ID{"ns"}, catalog.ModeFail, catalog.BehaviorRestrict, opts...)
			return err
		}, wantCode: nserr.NamespaceNotEmpty},
		{name: "OpenFGA fails after the drop", revokeErr: errOutage, run: func(ctx context.Context, g *Catalog, opts ...catalog.Option) error {
			_, err := g.DropTable(ctx, ident.ID{"ns", "t1"}, opts...)
			return err
		},
			wantRecords: []string{"clear-protection table ns$t1", "clear-policy table ns$t1"},
			wantEvent:   governance.EventTableDropped + " ns$t1", wantCode: nserr.Internal},
		// The records cannot be cleared: the drop stands, its event is recorded and its tuples
		// are still revoked; the answer says what is left.
		{name: "records fail after the drop", clearErr: errOutage, run: func(ctx context.Context, g *Catalog, opts ...catalog.Option) error {
			_, err := g.DropTable(ctx, ident.ID{"ns", "t1"}, opts...)
			return err
		},
			wantRevoked: []authz.Object{tab("ns$t1")}, wantRecords: []string{"clear-protection table ns$t1"},
			wantEvent: governance.EventTableDropped + " ns$t1", wantCode: nserr.Internal},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cat := newFake(namespaces, tables)
			a := &recordingAuthorizer{revokeErr: tc.revokeErr}
			rec := &fakeRecords{grace: tc.grace, failClear: tc.clearErr}
			var opts []catalog.Option
			if tc.purge {
				opts = append(opts, catalog.WithPurge())
			}
			err := tc.run(ctx, New(cat, Options{Authorizer: a, Records: rec}), opts...)
			if tc.wantCode != 0 {
				assert.Equal(t, nserr.CodeOf(err), tc.wantCode, "%v", err)
			} else {
				assert.NilError(t, err)
			}
			if tc.revokeErr != nil {
				// The drop stands: the caller is told so (a retried drop would hear "not found").
				assertCommitted(t, err, "table ns$t1 was dropped and that stands, but its authorization tuples could not all be removed")
				assert.Assert(t, cat.TableExists(ctx, ident.ID{"ns", "t1"}) != nil, "the drop did not stand")
			}
			if tc.clearErr != nil {
				assertCommitted(t, err, "table ns$t1 was dropped and that stands, but its protection or policy records could not be cleared",
					"disarm its protection")
			}
			assert.DeepEqual(t, a.revoked, tc.wantRevoked)
			assert.DeepEqual(t, rec.calls, tc.wantRecords)
			assert.DeepEqual(t, rec.trashed, tc.wantTrashed)
			if tc.wantEvent == "" {
				assert.Equal(t, len(rec.events), 0)
			} else {
				assert.DeepEqual(t, rec.events, []string{tc.wantEvent})
			}
		})
	}
}

// TestRename: a rename is checked as a create in the destination's namespace; the destination is
// given exactly the tuples a new object gets (what an earlier object there left is revoked, the
// caller seeded owner), the source's are revoked, and the records move. Denied: nothing moves.
// OpenFGA failing after the commit is the answer, saying the table was renamed.
func TestRename(t *testing.T) {
	ctx := context.Background()
	from, to := ident.ID{"ns", "t1"}, ident.ID{"other", "t9"}
	for _, tc := range []struct {
		name        string
		denied      bool
		seedErr     error
		wantCode    nserr.Code
		wantRevoked []authz.Object
		wantSeeded  []authz.Object
		wantRecords []string
		wantEvents  []string
	}{
		{name: "moved", wantRevoked: []authz.Object{authz.TableObject(to), authz.TableObject(from)},
			wantSeeded: []authz.Object{authz.TableObject(to)}, wantRecords: []string{"move ns$t1 other$t9"},
			wantEvents: []string{governance.EventTableRenamed + " other$t9"}},
		{name: "denied create at the destination", denied: true, wantCode: nserr.PermissionDenied},
		// The rename stands: the source's tuples are still revoked (they name nothing now).
		{name: "OpenFGA fails after the rename", seedErr: errOutage, wantCode: nserr.Internal,
			wantRevoked: []authz.Object{authz.TableObject(to), authz.TableObject(from)}, wantRecords: []string{"move ns$t1 other$t9"},
			wantEvents: []string{governance.EventTableRenamed + " other$t9"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cat := newFake([]string{"ns", "other"}, []string{"ns$t1"})
			a := &recordingAuthorizer{denied: map[authz.Action]bool{authz.TableCreate: tc.denied}, seedErr: tc.seedErr}
			rec := &fakeRecords{}
			_, err := New(cat, Options{Authorizer: a, Records: rec}).RenameTable(ctx, from, ident.ID{"other"}, "t9")
			if tc.wantCode != 0 {
				assert.Equal(t, nserr.CodeOf(err), tc.wantCode, "%v", err)
			} else {
				assert.NilError(t, err)
			}
			assert.DeepEqual(t, a.checked, []authz.Action{authz.TableCreate})
			assert.DeepEqual(t, a.revoked, tc.wantRevoked)
			assert.DeepEqual(t, a.seeded, tc.wantSeeded)
			assert.DeepEqual(t, rec.calls, tc.wantRecords)
			assert.DeepEqual(t, rec.events, tc.wantEvents)
			assert.Equal(t, cat.TableExists(ctx, from) == nil, tc.denied, "the table moved (or not) against the decision")
			if tc.seedErr != nil {
				// A retried rename would hear "not found": the caller is told it stands.
				assertCommitted(t, err, "table ns$t1 was renamed to other$t9 and that stands, but its owner could not be recorded at its new id",
					"ask one to drop it")
				assert.NilError(t, cat.TableExists(ctx, to), "the renamed table is not at its new id")
			}
		})
	}
}

// TestListingFiltered: listings keep what the caller may see and paginate after filtering: a
// page is full while visible names remain, the token is the last name given, and hidden names
// never show (nor shorten a page).
func TestListingFiltered(t *testing.T) {
	ctx := context.Background()
	cat := newFake([]string{"ns", "ns$a", "ns$b", "ns$c", "ns$d", "ns$e"}, []string{"ns$t1", "ns$t2", "ns$t3", "ns$t4", "ns$t5"})
	hidden := map[authz.Object]bool{
		authz.NamespaceObject(ident.ID{"ns", "b"}): true, authz.NamespaceObject(ident.ID{"ns", "c"}): true,
		authz.TableObject(ident.ID{"ns", "t1"}): true, authz.TableObject(ident.ID{"ns", "t4"}): true,
	}
	g := New(cat, Options{Authorizer: &recordingAuthorizer{hidden: hidden}})
	type page struct {
		Names []string
		Next  string
	}
	read := func(list func(token string) (catalog.Page, error)) []page {
		var out []page
		token := ""
		for {
			p, err := list(token)
			assert.NilError(t, err)
			out = append(out, page{p.Names, p.NextToken})
			if p.NextToken == "" {
				return out
			}
			token = p.NextToken
		}
	}
	assert.DeepEqual(t, read(func(tok string) (catalog.Page, error) { return g.ListNamespaces(ctx, ident.ID{"ns"}, tok, 2) }),
		[]page{{[]string{"a", "d"}, "d"}, {[]string{"e"}, ""}})
	assert.DeepEqual(t, read(func(tok string) (catalog.Page, error) { return g.ListTables(ctx, ident.ID{"ns"}, tok, 2) }),
		[]page{{[]string{"t2", "t3"}, "t3"}, {[]string{"t5"}, ""}})
	all, err := g.ListTables(ctx, ident.ID{"ns"}, "", 0)
	assert.NilError(t, err)
	assert.DeepEqual(t, all.Names, []string{"t2", "t3", "t5"})

	// Without authorization the catalog's listing is the answer.
	plain, err := New(cat, Options{}).ListTables(ctx, ident.ID{"ns"}, "", 0)
	assert.NilError(t, err)
	assert.DeepEqual(t, plain.Names, []string{"t1", "t2"})
}

// TestTrashSagaUndo: a recoverable drop whose deregister fails takes its trash record back (the
// table stays where it was); when that fails too, the answer says both. A recoverable cascade that
// fails before detaching anything takes its own record back; once something is detached, the
// answer says how far it got and how to resume.
func TestTrashSagaUndo(t *testing.T) {
	ctx := context.Background()
	down := nserr.ServiceUnavailablef("storage down")
	for _, tc := range []struct {
		name         string
		failDiscard  error
		run          func(*Catalog) error
		wantContains string
		wantCalls    []string
	}{
		{name: "table", run: func(g *Catalog) error { _, err := g.DropTable(ctx, ident.ID{"ns", "t1"}); return err },
			wantCalls: []string{"discard ns$t1"}},
		{name: "table, discard fails", failDiscard: errOutage,
			run:          func(g *Catalog) error { _, err := g.DropTable(ctx, ident.ID{"ns", "t1"}); return err },
			wantContains: "its trash record could not be removed", wantCalls: []string{"discard ns$t1"}},
		{name: "cascade", run: func(g *Catalog) error {
			_, err := g.DropNamespace(ctx, ident.ID{"ns"}, catalog.ModeFail, catalog.BehaviorCascade)
			return err
		}, wantCalls: []string{"discard ns$t1", "discard-namespace ns"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cat := newFake([]string{"ns"}, []string{"ns$t1"})
			cat.failDeregister = down
			a := &recordingAuthorizer{}
			rec := &fakeRecords{grace: time.Hour, failDiscard: tc.failDiscard}
			err := tc.run(New(cat, Options{Authorizer: a, Records: rec}))
			assert.Equal(t, nserr.CodeOf(err), nserr.ServiceUnavailable, "%v", err)
			if tc.wantContains != "" {
				assert.ErrorContains(t, err, tc.wantContains)
			}
			assert.DeepEqual(t, rec.calls, tc.wantCalls)
			assert.Equal(t, len(rec.events), 0)
			assert.Equal(t, a.written, 0, "a failed recoverable drop touched tuples")
			assert.NilError(t, cat.TableExists(ctx, ident.ID{"ns", "t1"}))
		})
	}

	// Part way: the first table is detached, the second fails.
	cat := newFake([]string{"ns"}, []string{"ns$t1", "ns$t2"})
	rec := &fakeRecords{grace: time.Hour}
	g := New(cat, Options{Records: rec})
	failing := &failSecondDeregister{fakeCatalog: cat}
	g.Inner = failing
	_, err := g.DropNamespace(ctx, ident.ID{"ns"}, catalog.ModeFail, catalog.BehaviorCascade)
	assert.ErrorContains(t, err, "stopped part way")
	assert.ErrorContains(t, err, "/v1/namespace/ns/undrop")
	assert.DeepEqual(t, rec.calls, []string{"discard ns$t2"})
}

// failSecondDeregister fails every deregister after the first (fault injection).
type failSecondDeregister struct {
	*fakeCatalog
	n int
}

func (f *failSecondDeregister) DeregisterTable(ctx context.Context, id ident.ID, opts ...catalog.Option) (*catalog.Entry, error) {
	f.n++
	if f.n > 1 {
		return nil, nserr.ServiceUnavailablef("storage down")
	}
	return f.fakeCatalog.DeregisterTable(ctx, id, opts...)
}

// TestWithoutAuthorization: with authorization off the decorator keeps records, trash and events
// and asks nothing of the authorizer; a takeover runs in the mode asked.
func TestWithoutAuthorization(t *testing.T) {
	ctx := context.Background()
	cat := newFake([]string{"ns"}, []string{"ns$t1"})
	rec := &fakeRecords{}
	g := New(cat, Options{Authorizer: authz.Disabled{}, Records: rec})
	_, err := g.CreateNamespace(ctx, ident.ID{"ns2"}, nil, catalog.ModeExistOk)
	assert.NilError(t, err)
	_, err = g.DropTable(ctx, ident.ID{"ns", "t1"})
	assert.NilError(t, err)
	assert.DeepEqual(t, cat.calls, []string{"create-namespace:" + catalog.ModeExistOk + " ns2", "drop-table ns$t1"})
	// ExistOk records no event.
	assert.DeepEqual(t, rec.events, []string{governance.EventTableDropped + " ns$t1"})
	assert.DeepEqual(t, rec.calls, []string{"clear-protection table ns$t1", "clear-policy table ns$t1"})
}

// TestRenameIntoMissingNamespace: a rename's destination follows the guard chain's oracle rule: a
// caller denied the create right in a namespace that does not exist learns it is missing (404)
// only when it reads everything where that namespace would be; anyone else gets the same 403 as
// for a namespace that exists.
func TestRenameIntoMissingNamespace(t *testing.T) {
	ctx := context.Background()
	cat := newFake([]string{"ns"}, []string{"ns$t"})
	for _, tc := range []struct {
		name   string
		denied map[authz.Action]bool
		want   nserr.Code
	}{
		{"reads everything above", map[authz.Action]bool{authz.TableCreate: true}, nserr.NamespaceNotFound},
		{"reads nothing above", map[authz.Action]bool{authz.TableCreate: true, authz.NamespaceContentsRead: true}, nserr.PermissionDenied},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a := &recordingAuthorizer{denied: tc.denied}
			err := New(cat, Options{Authorizer: a}).AuthorizeRename(ctx, ident.ID{"ns", "t"}, ident.ID{"other", "t"})
			assert.Equal(t, nserr.CodeOf(err), tc.want, "%v", err)
			assert.DeepEqual(t, a.checked, []authz.Action{authz.TableCreate, authz.NamespaceContentsRead})
		})
	}
}

// TestPreAuthorization: AuthorizeRename, the check RenameTable asks before its conflict checks,
// decides the create right at a rename's destination; nothing at all with authorization off. (The
// takeover checks of a create are TestTakeoverChecks'.)
func TestPreAuthorization(t *testing.T) {
	ctx := context.Background()
	cat := newFake([]string{"ns"}, []string{"ns$t"})
	for _, tc := range []struct {
		name string
		run  func(*Catalog) error
		want []authz.Action
	}{
		{"rename", func(g *Catalog) error {
			return g.AuthorizeRename(ctx, ident.ID{"ns", "t"}, ident.ID{"ns", "t2"})
		}, []authz.Action{authz.TableCreate}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a := &recordingAuthorizer{denied: map[authz.Action]bool{authz.TableDrop: true, authz.NamespaceDescribe: true, authz.TableCreate: true}}
			err := tc.run(New(cat, Options{Authorizer: a}))
			assert.DeepEqual(t, a.checked, tc.want)
			if tc.want == nil {
				assert.NilError(t, err)
			} else {
				assert.Equal(t, nserr.CodeOf(err), nserr.PermissionDenied)
			}
			assert.NilError(t, tc.run(New(cat, Options{Authorizer: authz.Disabled{}})))
		})
	}
}

func ptr[T any](v T) *T { return &v }
