package authz

import (
	"context"
	_ "embed"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	neturl "net/url"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	openfga "github.com/openfga/go-sdk"
	"golang.org/x/sync/errgroup"
	"gotest.tools/v3/assert"

	nserr "github.com/lancecat/lancecat/errors"
	"github.com/lancecat/lancecat/ident"
	"github.com/lancecat/lancecat/internal/testenv"
)

// childWalkModel is the model as it was before navigator: containers' can_get_metadata was
// `reads or can_get_metadata from child` (the reference TestNavigatorMatchesChildWalk compares with).
//
//go:embed testdata/model_child_walk.json
var childWalkModel []byte

var quietAudit = WithAuditLog(slog.New(slog.NewTextHandler(io.Discard, nil)))

// newTestStore makes a fresh store holding modelJSON and returns an authorizer pinned to it.
func newTestStore(t *testing.T, url string, modelJSON []byte) *OpenFGA {
	t.Helper()
	ctx := context.Background()
	o := buildOptions([]Option{quietAudit})
	api, err := newAPIClient(url, o)
	assert.NilError(t, err)
	st, _, err := api.OpenFgaApi.CreateStore(ctx).Body(openfga.CreateStoreRequest{Name: "lancecat-nav-ref"}).Execute()
	assert.NilError(t, err)
	var req openfga.WriteAuthorizationModelRequest
	assert.NilError(t, json.Unmarshal(modelJSON, &req))
	m, _, err := api.OpenFgaApi.WriteAuthorizationModel(ctx, st.Id).Body(req).Execute()
	assert.NilError(t, err)
	f, err := New(url, Store{ID: st.Id, ModelID: m.AuthorizationModelId}, quietAudit)
	assert.NilError(t, err)
	return f
}

func allTuples(t *testing.T, f *OpenFGA) []Tuple {
	t.Helper()
	var out []Tuple
	token := ""
	for {
		page, next, err := f.readPage(context.Background(), openfga.ReadRequestTupleKey{}, token)
		assert.NilError(t, err)
		out = append(out, page...)
		if next == "" {
			return out
		}
		token = next
	}
}

func navigatorTuplesOf(t *testing.T, f *OpenFGA) []string {
	var out []string
	for _, tu := range allTuples(t, f) {
		if tu.Relation == navigatorRelation {
			out = append(out, tu.String())
		}
	}
	sort.Strings(out)
	return out
}

// TestNavigatorMatchesChildWalk proves the navigator relation decides can_get_metadata exactly as
// the `from child` walk it replaces: over an estate with every rung on tables and namespaces at
// every depth, under the Catalog and under a warehouse, granted to users, teams and roles, and
// created by several users, every caller's can_get_metadata on every namespace, warehouse and
// table is compared with a second store holding the previous model (child walk) and the same
// tuples minus navigator — after the grants, after revokes (one where another grant below still
// navigates, one where nothing does), after drops (RevokeAll), after a team member leaves, and
// after ReconcileNavigators rebuilt a store whose navigator tuples were lost (and pruned a stale
// one).
func TestNavigatorMatchesChildWalk(t *testing.T) {
	url := testenv.OpenFGA(t)
	ctx := context.Background()
	f := newTestStore(t, url, modelJSON)
	ns := func(parts ...string) Object { return NamespaceObject(ident.ID(parts)) }
	tb := func(parts ...string) Object { return TableObject(ident.ID(parts)) }
	project, warehouse := ProjectObject("p"), WarehouseObject("w")
	creator, other := User("creator"), User("other-creator")
	assert.NilError(t, f.SeedCreate(ctx, creator, project, Object{}))
	assert.NilError(t, f.SeedCreate(ctx, creator, warehouse, project))

	type node struct {
		obj, parent Object
		by          Principal
	}
	nodes := []node{
		{ns("a"), Catalog, creator},
		{ns("w1"), warehouse, creator},
		{ns("a", "n1"), ns("a"), creator},
		{ns("a", "n2"), ns("a"), other},
		{ns("a", "n1", "deep"), ns("a", "n1"), creator},
		{ns("w1", "x"), ns("w1"), other},
		{tb("root"), Catalog, creator},
		{tb("a", "t1"), ns("a"), creator},
		{tb("a", "t2"), ns("a"), creator},
		{tb("a", "n1", "t"), ns("a", "n1"), other},
		{tb("a", "n1", "deep", "t"), ns("a", "n1", "deep"), creator},
		{tb("a", "n2", "t"), ns("a", "n2"), creator},
		{tb("w1", "t"), ns("w1"), creator},
		{tb("w1", "x", "t1"), ns("w1", "x"), other},
		{tb("w1", "x", "t2"), ns("w1", "x"), other},
	}
	for _, n := range nodes {
		assert.NilError(t, f.SeedCreate(ctx, n.by, n.obj, n.parent))
	}
	callers := []Principal{creator, other, User("stranger"), User("teamie"), User("roley")}
	grant := func(who string, rung string, obj Object) {
		p := User(who)
		assert.NilError(t, f.Grant(ctx, p.Subject(), rung, obj))
		if !slices.Contains(callers, p) {
			callers = append(callers, p)
		}
	}
	for _, rung := range []string{"owner", "writer", "reader", "validator", "maintainer", "manage_grants", "pass_grants"} {
		grant("deep-table-"+rung, rung, tb("a", "n1", "deep", "t"))
		grant("w-table-"+rung, rung, tb("w1", "x", "t1"))
		grant("ns-"+rung, rung, ns("a", "n1"))
		grant("wns-"+rung, rung, ns("w1", "x"))
		grant("warehouse-"+rung, rung, warehouse)
	}
	grant("two-tables", "reader", tb("a", "t1"))
	grant("two-tables", "reader", tb("a", "n1", "t"))
	grant("table-and-ns", "reader", tb("a", "n2", "t"))
	grant("table-and-ns", "writer", ns("a", "n2"))
	grant("root-table", "reader", tb("root"))
	grant("project-member", "member", project)
	assert.NilError(t, f.Grant(ctx, User("teamie").Subject(), "member", TeamObject("t")))
	assert.NilError(t, f.Grant(ctx, TeamMembers("t"), "reader", tb("w1", "x", "t2")))
	assert.NilError(t, f.Grant(ctx, User("roley").Subject(), "assignee", RoleObject("r")))
	assert.NilError(t, f.Grant(ctx, RoleAssignees("r"), "writer", ns("a", "n1", "deep")))
	assert.NilError(t, GrantEstateAdmin(ctx, f, User("estate-admin")))
	callers = append(callers, User("estate-admin"))

	objects := []Object{warehouse}
	for _, n := range nodes {
		objects = append(objects, n.obj)
	}
	compare := func(phase string) {
		t.Helper()
		ref := newTestStore(t, url, childWalkModel)
		var copied []Tuple
		for _, tu := range allTuples(t, f) {
			if tu.Relation != navigatorRelation {
				copied = append(copied, tu)
			}
		}
		for chunk := range slices.Chunk(copied, maxTuplesPerWrite) {
			assert.NilError(t, ref.writeIdempotent(ctx, chunk, nil, "copying"))
		}
		g, gctx := errgroup.WithContext(ctx)
		g.SetLimit(8)
		differ := make(chan string, len(callers)*len(objects))
		seen := 0
		for _, p := range callers {
			for _, o := range objects {
				g.Go(func() error {
					want, err := ref.checkRemote(gctx, p, "can_get_metadata", o)
					if err != nil {
						return err
					}
					got, err := f.checkRemote(gctx, p, "can_get_metadata", o)
					if err != nil {
						return err
					}
					if got != want {
						differ <- fmt.Sprintf("%s on %s: navigator %v, child walk %v", p, o, got, want)
					}
					return nil
				})
				seen++
			}
		}
		assert.NilError(t, g.Wait())
		close(differ)
		var diffs []string
		for d := range differ {
			diffs = append(diffs, d)
		}
		sort.Strings(diffs)
		assert.Assert(t, len(diffs) == 0, "%s: %d of %d decisions differ:\n%v", phase, len(diffs), seen, diffs)
	}
	compare("after the grants")

	// Spot checks, so the comparison is known to cover both answers.
	assert.NilError(t, f.Check(ctx, User("deep-table-reader"), NamespaceDescribe, ns("a")))
	assert.NilError(t, f.Check(ctx, User("w-table-reader"), WarehouseListEntry, warehouse))
	assert.NilError(t, f.Check(ctx, User("teamie"), NamespaceDescribe, ns("w1")))
	assert.Equal(t, nserr.CodeOf(f.Check(ctx, User("deep-table-validator"), NamespaceDescribe, ns("a"))), nserr.PermissionDenied)
	assert.Equal(t, nserr.CodeOf(f.Check(ctx, User("deep-table-reader"), NamespaceDescribe, ns("a", "n2"))), nserr.PermissionDenied)
	assert.Equal(t, nserr.CodeOf(f.Check(ctx, User("stranger"), NamespaceDescribe, ns("a"))), nserr.PermissionDenied)

	// Revokes: two-tables keeps a$n1's table (still navigates a), table-and-ns loses its table
	// but keeps its namespace rung (still navigates a), deep-table-reader loses everything.
	assert.NilError(t, f.Revoke(ctx, User("two-tables").Subject(), "reader", tb("a", "t1")))
	assert.NilError(t, f.Revoke(ctx, User("table-and-ns").Subject(), "reader", tb("a", "n2", "t")))
	assert.NilError(t, f.Revoke(ctx, User("deep-table-reader").Subject(), "reader", tb("a", "n1", "deep", "t")))
	assert.NilError(t, f.Revoke(ctx, RoleAssignees("r"), "writer", ns("a", "n1", "deep")))
	// Revoking what is not held changes nothing.
	assert.NilError(t, f.Revoke(ctx, User("stranger").Subject(), "reader", tb("a", "t2")))
	compare("after the revokes")
	assert.NilError(t, f.Check(ctx, User("two-tables"), NamespaceDescribe, ns("a")))
	assert.Equal(t, nserr.CodeOf(f.Check(ctx, User("deep-table-reader"), NamespaceDescribe, ns("a"))), nserr.PermissionDenied)

	// Drops: the deep table (its creator and grantees lose a$n1$deep, a$n1, a unless something
	// else below grants) and the whole w1$x namespace, its tables first.
	for _, o := range []Object{tb("a", "n1", "deep", "t"), tb("w1", "x", "t1"), tb("w1", "x", "t2"), ns("w1", "x")} {
		_, err := f.RevokeAll(ctx, o)
		assert.NilError(t, err)
	}
	compare("after the drops")
	assert.Equal(t, nserr.CodeOf(f.Check(ctx, User("w-table-owner"), WarehouseListEntry, warehouse)), nserr.PermissionDenied)

	// A team member leaves: the team's navigator tuple no longer reaches them.
	assert.NilError(t, f.Revoke(ctx, User("teamie").Subject(), "member", TeamObject("t")))
	compare("after a member left")

	// A store from before navigator: every navigator tuple lost, plus a stale one.
	want := navigatorTuplesOf(t, f)
	assert.Assert(t, len(want) > 10)
	var nav []Tuple
	for _, tu := range allTuples(t, f) {
		if tu.Relation == navigatorRelation {
			nav = append(nav, tu)
		}
	}
	assert.NilError(t, f.deleteTuples(ctx, nav, "test"))
	stale := Tuple{User: "user:stranger", Relation: navigatorRelation, Object: ns("a").String()}
	assert.NilError(t, f.writeTuples(ctx, []Tuple{stale}, "test"))
	rep, err := f.ReconcileNavigators(ctx, false)
	assert.NilError(t, err)
	assert.Equal(t, rep.Written, len(want))
	assert.Equal(t, rep.Stale, 1)
	assert.Equal(t, rep.Pruned, 0)
	rep, err = f.ReconcileNavigators(ctx, true)
	assert.NilError(t, err)
	assert.Equal(t, rep.Written, 0, "idempotent")
	assert.Equal(t, rep.Pruned, 1)
	assert.DeepEqual(t, navigatorTuplesOf(t, f), want)
	compare("after the backfill")
}

// TestDenialDoesNotWalkTheNamespace: a caller who sees nothing in a namespace of 1,000 tables is
// refused (403), and one holding a grant on one of them admitted, without OpenFGA visiting the
// tables: under the child walk the denial outlasted the request timeout and answered 503.
func TestDenialDoesNotWalkTheNamespace(t *testing.T) {
	url := testenv.OpenFGA(t)
	ctx := context.Background()
	f := newTestStore(t, url, modelJSON)
	nsObj := NamespaceObject(ident.ID{"big"})
	creator := User("creator")
	assert.NilError(t, f.SeedCreate(ctx, creator, nsObj, Catalog))
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(8)
	for i := range 1000 {
		g.Go(func() error {
			return f.SeedCreate(gctx, creator, TableObject(ident.ID{"big", fmt.Sprintf("t%04d", i)}), nsObj)
		})
	}
	assert.NilError(t, g.Wait())
	assert.NilError(t, f.Grant(ctx, User("one").Subject(), "reader", TableObject(ident.ID{"big", "t0500"})))
	// A tight timeout: a walk of 1,000 children does not fit in it, two lookups do.
	tight, err := New(url, f.store, quietAudit, WithTimeout(300*time.Millisecond))
	assert.NilError(t, err)
	start := time.Now()
	assert.Equal(t, nserr.CodeOf(tight.Check(ctx, User("stranger"), NamespaceDescribe, nsObj)), nserr.PermissionDenied)
	t.Logf("denial: %s", time.Since(start))
	start = time.Now()
	assert.NilError(t, tight.Check(ctx, User("one"), NamespaceDescribe, nsObj))
	t.Logf("allow through one table grant: %s", time.Since(start))
}

// TestNavigatingRungsAreReads derives navigatingRungs from the model: the directly assignable
// relations a table's and a namespace's can_get_metadata reach on the object itself (through
// computed relations and unions, not through the parent) are exactly those rungs; and every
// container's can_get_metadata is `reads or navigator`, with nothing walking `child` any more.
func TestNavigatingRungsAreReads(t *testing.T) {
	defs := map[string]map[string]openfga.Userset{}
	for _, td := range theModel.request.TypeDefinitions {
		if td.Relations != nil {
			defs[td.Type] = *td.Relations
		}
	}
	var direct func(typ, rel string, seen map[string]bool) []string
	direct = func(typ, rel string, seen map[string]bool) []string {
		if seen[rel] {
			return nil
		}
		seen[rel] = true
		var out []string
		var walk func(u openfga.Userset)
		walk = func(u openfga.Userset) {
			switch {
			case u.This != nil:
				out = append(out, rel)
			case u.ComputedUserset != nil:
				out = append(out, direct(typ, u.ComputedUserset.GetRelation(), seen)...)
			case u.Union != nil:
				for _, c := range u.Union.Child {
					walk(c)
				}
			case u.TupleToUserset != nil:
				// from parent: the container's own reads, decided there
			default:
				t.Fatalf("%s#%s: an intersection or difference on the way to can_get_metadata", typ, rel)
			}
		}
		walk(defs[typ][rel])
		return out
	}
	for _, typ := range []string{TypeTable, TypeNamespace} {
		got := direct(typ, "can_get_metadata", map[string]bool{})
		got = slices.DeleteFunc(got, func(r string) bool { return r == navigatorRelation })
		slices.Sort(got)
		want := slices.Clone(navigatingRungs)
		slices.Sort(want)
		assert.DeepEqual(t, got, want)
	}
	for typ, rels := range defs {
		for rel, u := range rels {
			b, err := json.Marshal(u)
			assert.NilError(t, err)
			assert.Assert(t, !jsonContainsChildWalk(b), "%s#%s still walks child", typ, rel)
		}
		if carriesNavigator(typ) {
			u := rels["can_get_metadata"]
			assert.Assert(t, u.Union != nil && len(u.Union.Child) == 2, typ)
			var names []string
			for _, c := range u.Union.Child {
				assert.Assert(t, c.ComputedUserset != nil, typ)
				names = append(names, c.ComputedUserset.GetRelation())
			}
			assert.DeepEqual(t, names, []string{"reads", navigatorRelation})
			assert.Assert(t, !theModel.grantable[typ][navigatorRelation], "navigator is never granted by hand")
		}
	}
	assert.Assert(t, carriesNavigator(TypeNamespace) && carriesNavigator(TypeWarehouse))
	assert.Assert(t, !carriesNavigator(TypeTable) && !carriesNavigator(TypeCatalog) && !carriesNavigator(TypeProject))
}

func jsonContainsChildWalk(b []byte) bool {
	var v any
	_ = json.Unmarshal(b, &v)
	var walk func(any) bool
	walk = func(x any) bool {
		switch t := x.(type) {
		case map[string]any:
			if ts, ok := t["tupleset"].(map[string]any); ok && ts["relation"] == "child" {
				return true
			}
			for _, e := range t {
				if walk(e) {
					return true
				}
			}
		case []any:
			for _, e := range t {
				if walk(e) {
					return true
				}
			}
		}
		return false
	}
	return walk(v)
}

// TestListingDoorPrefetchesTheCover: a listing door's check (ListTables, ListNamespaces) asks the
// listing's parent short-circuit in the same batch check, so the listing that follows asks OpenFGA
// nothing more for a caller the parent covers, and only its ListObjects for one it does not; the
// answers are the ones a Check of each gives.
func TestListingDoorPrefetchesTheCover(t *testing.T) {
	url := testenv.OpenFGA(t)
	var calls sync.Map // path suffix -> *atomic.Int64
	count := func(suffix string) int64 {
		v, _ := calls.LoadOrStore(suffix, new(atomic.Int64))
		return v.(*atomic.Int64).Swap(0)
	}
	target, err := neturl.Parse(url)
	assert.NilError(t, err)
	proxy := httputil.NewSingleHostReverseProxy(target)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		for _, s := range []string{"/check", "/batch-check", "/list-objects"} {
			if strings.HasSuffix(r.URL.Path, s) {
				v, _ := calls.LoadOrStore(s, new(atomic.Int64))
				v.(*atomic.Int64).Add(1)
			}
		}
		proxy.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	seeded := newTestStore(t, url, modelJSON)
	f, err := New(srv.URL, seeded.store, quietAudit)
	assert.NilError(t, err)
	ctx := context.Background()
	nsObj := NamespaceObject(ident.ID{"ns"})
	assert.NilError(t, f.SeedCreate(ctx, User("creator"), nsObj, Catalog))
	var items []Listed
	for i := range 40 {
		tbl := TableObject(ident.ID{"ns", fmt.Sprintf("t%02d", i)})
		assert.NilError(t, f.SeedCreate(ctx, User("creator"), tbl, nsObj))
		items = append(items, Listed{Object: tbl, Parent: nsObj})
	}
	assert.NilError(t, f.Grant(ctx, User("reader").Subject(), "reader", nsObj))
	assert.NilError(t, f.Grant(ctx, User("one").Subject(), "reader", items[7].Object))
	for _, c := range []struct {
		who                 Principal
		listed              int
		batch, list, checks int64
	}{
		{User("reader"), 40, 1, 0, 0},
		{User("one"), 1, 1, 1, 0},
	} {
		count("/check")
		count("/batch-check")
		count("/list-objects")
		rctx := WithDecisions(ctx)
		assert.NilError(t, f.Check(rctx, c.who, NamespaceListTables, nsObj))
		got, err := FilterListing(rctx, f, c.who, TableListEntry, items)
		assert.NilError(t, err)
		assert.Equal(t, len(got), c.listed)
		assert.Equal(t, count("/batch-check"), c.batch, "%s", c.who)
		assert.Equal(t, count("/list-objects"), c.list, "%s", c.who)
		assert.Equal(t, count("/check"), c.checks, "%s", c.who)
	}
	// The stranger is refused at the door; nothing is remembered wrongly for the next request.
	assert.Equal(t, nserr.CodeOf(f.Check(WithDecisions(ctx), User("stranger"), NamespaceListTables, nsObj)), nserr.PermissionDenied)
}
