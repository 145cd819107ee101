package app

// The guard chain of the create doors and of every door on an object id, with real OpenFGA: the
// mode a guard decides on is the mode the handler acts on, whatever its spelling, content type or
// place; an overwrite needs the destroy right and passes protection; a caller denied a door learns
// nothing about whether its object exists.

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"sort"
	"strings"
	"testing"

	"gotest.tools/v3/assert"

	"github.com/lancecat/lancecat/authz"
	"github.com/lancecat/lancecat/client/controlclient"
	"github.com/lancecat/lancecat/client/nsclient"
	nserr "github.com/lancecat/lancecat/errors"
	"github.com/lancecat/lancecat/ident"
	"github.com/lancecat/lancecat/server"
)

// newGuardedSpecEnv is newSpecEnv with authorization on (OpenFGA, a store of its own) and alice
// the estate admin.
func newGuardedSpecEnv(t *testing.T) *specEnv {
	t.Helper()
	cfg := openFGAConfig(t, "lancecat-test")
	return newSpecEnv(t, cfg)
}

// keyOf is a fresh API key of p.
func (e *specEnv) keyOf(t *testing.T, p authz.Principal) string {
	t.Helper()
	key, _, err := e.keys.Create(context.Background(), p, "test")
	assert.NilError(t, err)
	return key
}

// call sends one raw request with the API key (none if empty) and answers status and body:
// the bytes, content type and query exactly as a hostile client would send them.
func (e *specEnv) call(t *testing.T, key, method, path, contentType string, body []byte) (int, []byte) {
	t.Helper()
	return send(t, method, e.url+path, contentType, body, withAPIKey(key))
}

// codeOf is a problem body's code (-1 for a success or a body that is not a problem).
func codeOf(status int, body []byte) int {
	if status < 400 {
		return -1
	}
	var p nserr.Problem
	if json.Unmarshal(body, &p) != nil {
		return -1
	}
	return p.Code
}

func jsonBody(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	assert.NilError(t, err)
	return b
}

// takeoverFixture: alice (estate admin) owns namespace n1, table n1$t (with data) and namespace
// n1$victim; bob holds writer on n1; carol holds reader on the table and on the victim namespace.
type takeoverFixture struct {
	e                  *specEnv
	alice, bob, carol  string // API keys
	tableLoc           string
	table, victimNS    ident.ID
	aliceC             *nsclient.ClientWithResponses
	carolC             *nsclient.ClientWithResponses
	authorizer         authz.Authorizer
	bobP, carolP, zedP authz.Principal
}

func newTakeoverFixture(t *testing.T) *takeoverFixture {
	t.Helper()
	e := newGuardedSpecEnv(t)
	ctx := context.Background()
	f := &takeoverFixture{e: e, alice: e.keyOf(t, authz.User("alice")), bob: e.keyOf(t, authz.User("bob")),
		carol: e.keyOf(t, authz.User("carol")), table: ident.ID{"n1", "t"}, victimNS: ident.ID{"n1", "victim"},
		aliceC: e.as(t, authz.User("alice")), carolC: e.as(t, authz.User("carol")), authorizer: e.gov.authorizer,
		bobP: authz.User("bob"), carolP: authz.User("carol"), zedP: authz.User("zed")}
	for _, ns := range []string{"n1", "n1$victim"} {
		r, err := f.aliceC.CreateNamespaceWithResponse(ctx, ns, nil, nsclient.CreateNamespaceRequest{})
		assert.NilError(t, err)
		expect(t, r.StatusCode(), r.Body, 200, 0)
	}
	cr, err := f.aliceC.CreateTableWithBodyWithResponse(ctx, "n1$t", nil, "application/vnd.apache.arrow.stream", bytes.NewReader(int64Stream(t, 3)))
	assert.NilError(t, err)
	expect(t, cr.StatusCode(), cr.Body, 200, 0)
	f.tableLoc = *cr.JSON200.Location
	assert.NilError(t, f.authorizer.Grant(ctx, f.bobP.Subject(), "writer", authz.NamespaceObject(ident.ID{"n1"})))
	assert.NilError(t, f.authorizer.Grant(ctx, f.carolP.Subject(), "reader", authz.TableObject(f.table)))
	assert.NilError(t, f.authorizer.Grant(ctx, f.carolP.Subject(), "reader", authz.NamespaceObject(f.victimNS)))
	return f
}

// assertNoTakeover: the objects still have their owner and their grants, and bob owns neither.
func (f *takeoverFixture) assertNoTakeover(t *testing.T, what string) {
	t.Helper()
	ctx := context.Background()
	assert.NilError(t, f.authorizer.Check(ctx, f.carolP, authz.TableDescribe, authz.TableObject(f.table)), "%s: carol's grant on the table was revoked", what)
	assert.NilError(t, f.authorizer.Check(ctx, f.carolP, authz.NamespaceDescribe, authz.NamespaceObject(f.victimNS)), "%s: carol's grant on the namespace was revoked", what)
	err := f.authorizer.Check(ctx, f.bobP, authz.TableDrop, authz.TableObject(f.table))
	assert.Equal(t, nserr.CodeOf(err), nserr.PermissionDenied, "%s: bob may drop the table", what)
	err = f.authorizer.Check(ctx, f.bobP, authz.NamespaceDrop, authz.NamespaceObject(f.victimNS))
	assert.Equal(t, nserr.CodeOf(err), nserr.PermissionDenied, "%s: bob may drop the namespace", what)
	d, err := f.carolC.DescribeTableWithResponse(ctx, "n1$t", nil, nsclient.DescribeTableRequest{})
	assert.NilError(t, err)
	expect(t, d.StatusCode(), d.Body, 200, 0)
	assert.Equal(t, *d.JSON200.Version, int64(1), "%s: the table was rewritten", what)
}

// spellings are spellings of one mode the decoder accepts (any casing, `_`, `-` or spaces between
// the words); each must be the mode itself to every guard.
func spellings(words ...string) []string {
	joined := func(sep string, f func(string) string) string {
		parts := make([]string, len(words))
		for i, w := range words {
			parts[i] = f(w)
		}
		return strings.Join(parts, sep)
	}
	title := func(s string) string { return strings.ToUpper(s[:1]) + s[1:] }
	set := map[string]bool{}
	for _, sep := range []string{"", "_", "-", " "} {
		for _, f := range []func(string) string{strings.ToLower, strings.ToUpper, title} {
			set[joined(sep, f)] = true
		}
	}
	// The decoder also folds separators anywhere, mixed casing and one pair of surrounding quotes.
	lower := joined("", strings.ToLower)
	var sparse, mixed []string
	for i, r := range lower {
		sparse = append(sparse, string(r))
		if i%2 == 0 {
			mixed = append(mixed, strings.ToUpper(string(r)))
		} else {
			mixed = append(mixed, string(r))
		}
	}
	set[`"`+lower+`"`] = true
	set[strings.Join(sparse, "-_ ")] = true
	set[strings.Join(mixed, "")] = true
	out := make([]string, 0, len(set))
	for s := range set {
		out = append(out, s)
	}
	sort.Strings(out)
	return out
}

// TestCreateModeSpellingMatrix: every spelling of ExistOk and Overwrite the decoder accepts, sent
// with every content type (JSON, text/plain, none) to create table, register and namespace create
// by bob, a writer on the namespace: an overwrite of alice's objects is 403 (it needs the destroy
// right), an ExistOk is accepted by reading alone; neither makes bob an owner nor revokes a grant.
// Issue 11 item 1, issue 10 item 3: bob used to take over with `exist-ok`, `over-write`, `Over
// Write`, or a JSON body sent as text/plain or without a content type.
func TestCreateModeSpellingMatrix(t *testing.T) {
	f := newTakeoverFixture(t)
	contentTypes := []string{"application/json", "text/plain", ""}
	stream := int64Stream(t, 1)
	for _, mode := range spellings("exist", "ok") {
		for _, ct := range contentTypes {
			what := "create ?mode=" + mode + " " + ct
			st, body := f.e.call(t, f.bob, http.MethodPost, "/v1/table/n1%24t/create?mode="+url.QueryEscape(mode), ct, stream)
			assert.Equal(t, st, 200, "%s: %s", what, body)
			f.assertNoTakeover(t, what)

			what = "namespace create " + mode + " " + ct
			st, body = f.e.call(t, f.bob, http.MethodPost, "/v1/namespace/n1%24victim/create", ct, jsonBody(t, map[string]string{"mode": mode}))
			assert.Equal(t, st, 200, "%s: %s", what, body)
			f.assertNoTakeover(t, what)

			what = "register " + mode + " " + ct // register has no ExistOk: refused, whatever the spelling
			st, body = f.e.call(t, f.bob, http.MethodPost, "/v1/table/n1%24t/register", ct, jsonBody(t, map[string]string{"mode": mode, "location": f.tableLoc}))
			assert.Equal(t, codeOf(st, body), int(nserr.InvalidInput), "%s: %d %s", what, st, body)
			f.assertNoTakeover(t, what)
		}
	}
	for _, mode := range spellings("over", "write") {
		for _, ct := range contentTypes {
			what := "create ?mode=" + mode + " " + ct
			st, body := f.e.call(t, f.bob, http.MethodPost, "/v1/table/n1%24t/create?mode="+url.QueryEscape(mode), ct, stream)
			assert.Equal(t, codeOf(st, body), int(nserr.PermissionDenied), "%s: %d %s", what, st, body)
			f.assertNoTakeover(t, what)

			what = "namespace create " + mode + " " + ct
			st, body = f.e.call(t, f.bob, http.MethodPost, "/v1/namespace/n1%24victim/create", ct, jsonBody(t, map[string]string{"mode": mode}))
			assert.Equal(t, codeOf(st, body), int(nserr.PermissionDenied), "%s: %d %s", what, st, body)
			f.assertNoTakeover(t, what)

			what = "register " + mode + " " + ct
			st, body = f.e.call(t, f.bob, http.MethodPost, "/v1/table/n1%24t/register", ct, jsonBody(t, map[string]string{"mode": mode, "location": f.tableLoc}))
			assert.Equal(t, codeOf(st, body), int(nserr.PermissionDenied), "%s: %d %s", what, st, body)
			f.assertNoTakeover(t, what)
		}
	}
	// A mode in the query of a door that takes it in the body is refused, not ignored: the query
	// must not be a second place a guard or a handler could read it from.
	for _, path := range []string{"/v1/namespace/n1%24victim/create", "/v1/table/n1%24t/register", "/v1/table/n1%24t/declare"} {
		st, body := f.e.call(t, f.bob, http.MethodPost, path+"?mode=create", "application/json", jsonBody(t, map[string]string{"mode": "overwrite", "location": f.tableLoc}))
		assert.Equal(t, codeOf(st, body), int(nserr.InvalidInput), "%s: %d %s", path, st, body)
	}
	f.assertNoTakeover(t, "query modes")
}

// TestCreateDoorsEveryMode: door by door (create, register, declare, namespace create, rename),
// every mode, aimed by bob (writer on the namespace) at objects alice owns: only ExistOk passes
// (by reading), a plain create is the catalog's 409, an overwrite is 403, a rename onto a taken id
// is 409; nothing changes hands. The owner's own overwrite passes. Issue 10 item 3.
func TestCreateDoorsEveryMode(t *testing.T) {
	f := newTakeoverFixture(t)
	ctx := context.Background()
	stream := int64Stream(t, 1)
	bobC := f.e.as(t, authz.User("bob"))
	// bob's own table, to rename onto alice's ids.
	r, err := bobC.CreateTableWithBodyWithResponse(ctx, "n1$mine", nil, "application/vnd.apache.arrow.stream", bytes.NewReader(stream))
	assert.NilError(t, err)
	expect(t, r.StatusCode(), r.Body, 200, 0)

	type door struct {
		name, path string
		body       func(mode string) []byte
		ct         string
		want       map[string]nserr.Code // mode ("" = absent) → code; -1: success
	}
	const ok nserr.Code = -1
	arrow := func(string) []byte { return stream }
	doors := []door{
		{"create", "/v1/table/n1%24t/create", arrow, "application/vnd.apache.arrow.stream",
			map[string]nserr.Code{"": nserr.TableAlreadyExists, "Create": nserr.TableAlreadyExists, "ExistOk": ok, "Overwrite": nserr.PermissionDenied}},
		{"register", "/v1/table/n1%24t/register", func(m string) []byte {
			return jsonBody(t, map[string]string{"mode": m, "location": f.tableLoc})
		}, "application/json",
			map[string]nserr.Code{"": nserr.TableAlreadyExists, "Create": nserr.TableAlreadyExists, "ExistOk": nserr.InvalidInput, "Overwrite": nserr.PermissionDenied}},
		// Declare has no mode: a mode in its body is not a field of the request (400), and
		// without one it only creates.
		{"declare", "/v1/table/n1%24t/declare", func(m string) []byte {
			if m == "" {
				return []byte(`{}`)
			}
			return jsonBody(t, map[string]string{"mode": m})
		}, "application/json",
			map[string]nserr.Code{"": nserr.TableAlreadyExists, "Create": nserr.InvalidInput, "ExistOk": nserr.InvalidInput, "Overwrite": nserr.InvalidInput}},
		{"namespace create", "/v1/namespace/n1%24victim/create", func(m string) []byte { return jsonBody(t, map[string]string{"mode": m}) }, "application/json",
			map[string]nserr.Code{"": nserr.NamespaceAlreadyExists, "Create": nserr.NamespaceAlreadyExists, "ExistOk": ok, "Overwrite": nserr.PermissionDenied}},
	}
	for _, d := range doors {
		for _, mode := range []string{"", "Create", "ExistOk", "Overwrite"} {
			path := d.path
			if d.name == "create" && mode != "" {
				path += "?mode=" + mode
			}
			body := d.body(mode)
			if mode == "" && d.name == "register" {
				body = jsonBody(t, map[string]string{"location": f.tableLoc})
			}
			st, out := f.e.call(t, f.bob, http.MethodPost, path, d.ct, body)
			want := d.want[mode]
			if want == ok {
				assert.Assert(t, st < 300, "%s %q: %d %s", d.name, mode, st, out)
			} else {
				assert.Equal(t, codeOf(st, out), int(want), "%s %q: %d %s", d.name, mode, st, out)
			}
			f.assertNoTakeover(t, d.name+" "+mode)
		}
	}
	// Rename has no mode: onto a taken id it is 409, whoever asks.
	rn, err := bobC.RenameTableWithResponse(ctx, "n1$mine", nil, nsclient.RenameTableRequest{NewTableName: "t"})
	assert.NilError(t, err)
	expect(t, rn.StatusCode(), rn.Body, 409, nserr.TableAlreadyExists)
	f.assertNoTakeover(t, "rename")

	// The owner may overwrite what she owns; the grants on it stay.
	st, out := f.e.call(t, f.alice, http.MethodPost, "/v1/namespace/n1%24victim/create", "text/plain", []byte(`{"mode":"over-write"}`))
	assert.Equal(t, st, 200, string(out))
	st, out = f.e.call(t, f.alice, http.MethodPost, "/v1/table/n1%24t/create?mode=Over%20Write", "", stream)
	assert.Equal(t, st, 200, string(out))
	assert.NilError(t, f.authorizer.Check(ctx, f.carolP, authz.TableDescribe, authz.TableObject(f.table)))
	assert.NilError(t, f.authorizer.Check(ctx, f.carolP, authz.NamespaceDescribe, authz.NamespaceObject(f.victimNS)))
}

// TestRenameClearsDestinationTuples: a rename onto an id that still holds tuples (a grant left by
// an earlier object there) gives the moved table exactly the tuples a new object gets, as a create
// does: the old grant does not carry over. Issue 11 item 3 (the rename part).
func TestRenameClearsDestinationTuples(t *testing.T) {
	f := newTakeoverFixture(t)
	ctx := context.Background()
	dest := ident.ID{"n1", "t4"}
	// A grant left on a free id, as a purged table's used to be.
	assert.NilError(t, f.authorizer.Grant(ctx, f.zedP.Subject(), "owner", authz.TableObject(dest)))
	rn, err := f.aliceC.RenameTableWithResponse(ctx, "n1$t", nil, nsclient.RenameTableRequest{NewTableName: "t4"})
	assert.NilError(t, err)
	expect(t, rn.StatusCode(), rn.Body, 200, 0)
	err = f.authorizer.Check(ctx, f.zedP, authz.TableDescribe, authz.TableObject(dest))
	assert.Equal(t, nserr.CodeOf(err), nserr.PermissionDenied, "zed's old grant carried over to the renamed table: %v", err)
	err = f.authorizer.Check(ctx, f.zedP, authz.TableDrop, authz.TableObject(dest))
	assert.Equal(t, nserr.CodeOf(err), nserr.PermissionDenied)
	zed := f.e.as(t, f.zedP)
	d, err := zed.DescribeTableWithResponse(ctx, "n1$t4", nil, nsclient.DescribeTableRequest{})
	assert.NilError(t, err)
	expect(t, d.StatusCode(), d.Body, 403, nserr.PermissionDenied)
	// The renamer owns it, and it still hangs from its namespace.
	assert.NilError(t, f.authorizer.Check(ctx, authz.User("alice"), authz.TableDrop, authz.TableObject(dest)))
	assert.NilError(t, f.authorizer.Check(ctx, f.bobP, authz.TableInsert, authz.TableObject(dest)))
}

// TestRenameToEmptyNamespaceIsRoot pins the decision on `new_namespace_id`: absent or null keeps
// the table in its namespace (the spec: "if not specified the table stays in the same namespace");
// the empty list is the root namespace, which is how the spec writes the root's identifier ("an
// empty or null list"). With authorization on, a move to the root is a create there: it needs
// can_create_table on the catalog.
func TestRenameToEmptyNamespaceIsRoot(t *testing.T) {
	f := newTakeoverFixture(t)
	ctx := context.Background()
	bobC := f.e.as(t, authz.User("bob"))
	r, err := bobC.CreateTableWithBodyWithResponse(ctx, "n1$mine", nil, "application/vnd.apache.arrow.stream", bytes.NewReader(int64Stream(t, 1)))
	assert.NilError(t, err)
	expect(t, r.StatusCode(), r.Body, 200, 0)
	// bob may not create at the root.
	st, out := f.e.call(t, f.bob, http.MethodPost, "/v1/table/n1%24mine/rename", "application/json", []byte(`{"new_table_name":"m2","new_namespace_id":[]}`))
	assert.Equal(t, codeOf(st, out), int(nserr.PermissionDenied), "%d %s", st, out)
	// null: same namespace.
	st, out = f.e.call(t, f.bob, http.MethodPost, "/v1/table/n1%24mine/rename", "application/json", []byte(`{"new_table_name":"m2","new_namespace_id":null}`))
	assert.Equal(t, st, 200, string(out))
	ex, err := bobC.TableExistsWithResponse(ctx, "n1$m2", nil, nsclient.TableExistsRequest{})
	assert.NilError(t, err)
	expect(t, ex.StatusCode(), ex.Body, 200, 0)
	// The estate admin moves it to the root.
	st, out = f.e.call(t, f.alice, http.MethodPost, "/v1/table/n1%24m2/rename", "application/json", []byte(`{"new_table_name":"m3","new_namespace_id":[]}`))
	assert.Equal(t, st, 200, string(out))
	ex, err = f.aliceC.TableExistsWithResponse(ctx, "m3", nil, nsclient.TableExistsRequest{})
	assert.NilError(t, err)
	expect(t, ex.StatusCode(), ex.Body, 200, 0)
}

// TestBodyIdentityIsNoCredential pins the decision on a body `identity`: with authorization on the
// principal is settled from the headers before any body is read, so a body identity alone is 401
// code 16 (the README says so), and it never overrides the header's principal.
func TestBodyIdentityIsNoCredential(t *testing.T) {
	f := newTakeoverFixture(t)
	body := []byte(`{"identity":{"api_key":"` + f.alice + `"}}`)
	st, out := f.e.call(t, "", http.MethodPost, "/v1/namespace/n1/describe", "application/json", body)
	assert.Equal(t, codeOf(st, out), int(nserr.Unauthenticated), "%d %s", st, out)
	// zed (no grant) with alice's key in the body is still zed.
	st, out = f.e.call(t, f.e.keyOf(t, f.zedP), http.MethodPost, "/v1/namespace/n1/describe", "application/json", body)
	assert.Equal(t, codeOf(st, out), int(nserr.PermissionDenied), "%d %s", st, out)
}

// oracleCase is one door aimed at an object that exists and at one that does not.
type oracleCase struct {
	op              string
	method          string
	present, absent string // request paths
	presentID       ident.ID
	absentID        ident.ID
}

// normalized is a problem body with the object's id written out of it and the per-request fields
// dropped: what a caller could compare between two answers.
func normalized(t *testing.T, body []byte, id ident.ID) nserr.Problem {
	t.Helper()
	var p nserr.Problem
	assert.NilError(t, json.Unmarshal(body, &p), string(body))
	p.Instance, p.RequestID = "", ""
	var names []string
	for cur := id; !cur.IsRoot(); cur = cur.Parent() {
		names = append(names, authz.TableObject(cur).String(), authz.NamespaceObject(cur).String(), cur.Join("$"), cur.PathSegment("$"))
	}
	sort.Slice(names, func(i, j int) bool { return len(names[i]) > len(names[j]) })
	for _, n := range names {
		p.Detail = strings.ReplaceAll(p.Detail, n, "<id>")
		p.Error = strings.ReplaceAll(p.Error, n, "<id>")
	}
	return p
}

// TestNoExistenceOracleThroughSiblingGrant: bob, reader on ns6$a only (which lets him see ns6
// itself through navigator), aims every spec door and every control door on a table or
// namespace id at an object that exists and at one that does not, and at objects under a namespace
// that exists and one that does not: each pair answers the same status, code and body. Issue 10
// item 9 (describe ns6$b was 403, ns6$nosuch 404). A caller who reads all of ns6 sees the 404.
func TestNoExistenceOracleThroughSiblingGrant(t *testing.T) {
	e := newGuardedSpecEnv(t)
	ctx := context.Background()
	alice := e.as(t, authz.User("alice"))
	for _, ns := range []string{"ns6", "ns6$sub", "ns7"} {
		r, err := alice.CreateNamespaceWithResponse(ctx, ns, nil, nsclient.CreateNamespaceRequest{})
		assert.NilError(t, err)
		expect(t, r.StatusCode(), r.Body, 200, 0)
	}
	for _, tbl := range []string{"ns6$a", "ns6$b", "ns6$sub$c"} {
		r, err := alice.CreateTableWithBodyWithResponse(ctx, tbl, nil, "application/vnd.apache.arrow.stream", bytes.NewReader(int64Stream(t, 2)))
		assert.NilError(t, err)
		expect(t, r.StatusCode(), r.Body, 200, 0)
	}
	assert.NilError(t, e.gov.authorizer.Grant(ctx, authz.User("bob").Subject(), "reader", authz.TableObject(ident.ID{"ns6", "a"})))
	bob := e.keyOf(t, authz.User("bob"))
	// bob does see ns6 (through navigator): the oracle was that this leaked its other ids.
	st, out := e.call(t, bob, http.MethodPost, "/v1/namespace/ns6/describe", "application/json", []byte(`{}`))
	assert.Equal(t, st, 200, string(out))

	spec, err := server.SpecOperations()
	assert.NilError(t, err)
	control, err := server.ControlOperations()
	assert.NilError(t, err)
	pairs := map[string][2]ident.ID{ // door kind → (present, absent)
		"table":              {{"ns6", "b"}, {"ns6", "nosuch"}},
		"table-in-ns":        {{"ns6", "sub", "c"}, {"ns6", "nosub", "c"}},
		"namespace":          {{"ns6", "sub"}, {"ns6", "nosub"}},
		"namespace-in-ns":    {{"ns6", "sub", "x"}, {"ns6", "nosub", "x"}},
		"table-at-root":      {{"ns6", "b"}, {"nosuchns", "b"}},
		"namespace-at-root":  {{"ns7"}, {"nosuchns"}},
		"namespace-deep":     {{"ns6", "sub"}, {"nosuchns", "sub"}},
		"table-in-ns-create": {{"ns6", "sub", "new"}, {"ns6", "nosub", "new"}},
	}
	var cases []oracleCase
	for _, o := range append(spec, control...) {
		var kinds []string
		switch {
		case strings.HasPrefix(o.Path, "/v1/table/{id}/"):
			kinds = []string{"table", "table-in-ns", "table-at-root", "table-in-ns-create"}
		case strings.HasPrefix(o.Path, "/v1/namespace/{id}/"):
			kinds = []string{"namespace", "namespace-in-ns", "namespace-at-root", "namespace-deep"}
		default:
			continue
		}
		for _, k := range kinds {
			p := pairs[k]
			path := func(id ident.ID) string {
				return strings.NewReplacer("{id}", id.PathSegment("$"), "{index_name}", "idx").Replace(o.Path)
			}
			cases = append(cases, oracleCase{op: o.ID + " " + k, method: o.Method, present: path(p[0]), absent: path(p[1]), presentID: p[0], absentID: p[1]})
		}
	}
	assert.Assert(t, len(cases) > 4*54, "only %d cases", len(cases))
	for _, c := range cases {
		body := []byte(`{}`)
		ct := "application/json"
		if c.method == http.MethodGet {
			body, ct = nil, ""
		}
		st1, out1 := e.call(t, bob, c.method, c.present, ct, body)
		st2, out2 := e.call(t, bob, c.method, c.absent, ct, body)
		assert.Equal(t, st1, st2, "%s: %s → %d %s, %s → %d %s", c.op, c.present, st1, out1, c.absent, st2, out2)
		if st1 >= 400 {
			assert.DeepEqual(t, normalized(t, out1, c.presentID), normalized(t, out2, c.absentID))
		}
	}

	// The access doors name their object in the body.
	for _, kind := range []string{"table", "namespace"} {
		ids := pairs[kind]
		var answers [2]nserr.Problem
		for i, id := range ids {
			req := controlclient.AccessGrant{ObjectType: controlclient.AccessGrantObjectType(kind), ObjectId: id.Join("$"), Subject: "user:bob", Relation: "owner"}
			st, out := e.call(t, bob, http.MethodPost, "/v1/access/grant", "application/json", jsonBody(t, req))
			assert.Assert(t, st >= 400, "%s %s: %d %s", kind, id, st, out)
			answers[i] = normalized(t, out, id)
		}
		assert.DeepEqual(t, answers[0], answers[1])
	}

	// Whoever reads everything in ns6 is told what is missing there.
	assert.NilError(t, e.gov.authorizer.Grant(ctx, authz.User("dora").Subject(), "reader", authz.NamespaceObject(ident.ID{"ns6"})))
	dora := e.keyOf(t, authz.User("dora"))
	st, out = e.call(t, dora, http.MethodPost, "/v1/table/ns6%24nosuch/describe", "application/json", []byte(`{}`))
	assert.Equal(t, codeOf(st, out), int(nserr.TableNotFound), "%d %s", st, out)
	st, out = e.call(t, dora, http.MethodPost, "/v1/namespace/ns6%24nosub/describe", "application/json", []byte(`{}`))
	assert.Equal(t, codeOf(st, out), int(nserr.NamespaceNotFound), "%d %s", st, out)
	st, out = e.call(t, dora, http.MethodPost, "/v1/table/ns6%24nosub%24t/declare", "application/json", []byte(`{}`))
	assert.Equal(t, codeOf(st, out), int(nserr.NamespaceNotFound), "%d %s", st, out)
	st, out = e.call(t, dora, http.MethodPost, "/v1/table/ns6%24b/drop", "application/json", []byte(`{}`))
	assert.Equal(t, codeOf(st, out), int(nserr.PermissionDenied), "%d %s", st, out)
}
