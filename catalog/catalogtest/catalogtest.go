// Package catalogtest is the conformance suite of the Catalog contract (catalog.Catalog and its
// table handle): one set of assertions every implementation passes, whether it is the directory
// namespace over local disk or S3, the router with a bound warehouse, the governed decorator, or
// a remote catalog over HTTP. Adding a configuration is one call:
//
//	catalogtest.Run(t, func(t *testing.T) catalog.Catalog { return … })
package catalogtest

import (
	"context"
	"maps"
	"slices"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"gotest.tools/v3/assert"

	"github.com/lancecat/lancecat/catalog"
	"github.com/lancecat/lancecat/dml"
	nserr "github.com/lancecat/lancecat/errors"
	"github.com/lancecat/lancecat/ident"
	"github.com/lancecat/lancecat/lance"
	"github.com/lancecat/lancecat/namespace"
)

// Option tunes a run.
type Option func(*config)

type config struct {
	base ident.ID
	ctx  context.Context
}

// Within runs the suite inside namespace base, which must exist (e.g. a namespace bound to a
// warehouse, so that everything the suite makes lives in the warehouse's root). Default: the root.
func Within(base ident.ID) Option { return func(c *config) { c.base = base } }

// Context makes every call of the suite carry ctx (e.g. the caller's principal, for the governed
// decorator, which seeds and checks tuples for it). Default: context.Background().
func Context(ctx context.Context) Option { return func(c *config) { c.ctx = ctx } }

// Run runs the suite against the catalog open returns. open is called once; each case works in
// a namespace of its own, so the catalog may be shared with other tests.
func Run(t *testing.T, open func(t *testing.T) catalog.Catalog, opts ...Option) {
	cfg := config{ctx: context.Background()}
	for _, o := range opts {
		o(&cfg)
	}
	c := open(t)
	s := &suite{c: c, base: cfg.base, ctx: cfg.ctx}
	for _, tc := range []struct {
		name string
		run  func(t *testing.T, s *suite, ns ident.ID)
	}{
		{"Namespaces", testNamespaces},
		{"TableLifecycle", testTableLifecycle},
		{"DeclareRegisterDeregister", testDeclareRegister},
		{"Rename", testRename},
		{"Versions", testVersions},
		{"Tags", testTags},
		{"Restore", testRestore},
		{"Schema", testSchema},
		{"MissingParents", testMissingParents},
		{"Data", testData},
		{"Indices", testIndices},
		{"Branches", testBranches},
		{"Batch", testBatch},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ns := s.id("cs_" + tc.name)
			_, err := c.CreateNamespace(s.ctx, ns, map[string]string{"suite": tc.name}, catalog.ModeCreate)
			assert.NilError(t, err)
			tc.run(t, s, ns)
		})
	}
}

type suite struct {
	c    catalog.Catalog
	base ident.ID
	ctx  context.Context
}

// id is an id under the suite's base.
func (s *suite) id(parts ...string) ident.ID {
	return append(slices.Clone(s.base), parts...)
}

func child(ns ident.ID, name string) ident.ID { return append(slices.Clone(ns), name) }

// code asserts err carries the spec error code want.
func code(t *testing.T, err error, want nserr.Code) {
	t.Helper()
	assert.Assert(t, err != nil, "want code %v, got no error", want)
	assert.Equal(t, nserr.CodeOf(err), want, "%v", err)
}

func schema(names ...string) *arrow.Schema {
	fields := make([]arrow.Field, len(names))
	for i, n := range names {
		fields[i] = arrow.Field{Name: n, Type: arrow.PrimitiveTypes.Int64, Nullable: true}
	}
	return arrow.NewSchema(fields, nil)
}

// create makes table id with columns (no rows): version 1.
func (s *suite) create(t *testing.T, id ident.ID, columns ...string) *catalog.Entry {
	t.Helper()
	tbl, v, err := s.c.CreateTable(s.ctx, id, catalog.NewTable{Schema: schema(columns...)})
	assert.NilError(t, err)
	assert.Equal(t, v, uint64(1))
	assert.Assert(t, tbl.Location != "" && tbl.URI != "", "%+v", tbl)
	return tbl
}

func (s *suite) load(t *testing.T, id ident.ID) catalog.Table {
	t.Helper()
	h, err := s.c.LoadTable(s.ctx, id)
	assert.NilError(t, err)
	assert.DeepEqual(t, h.Meta().ID, id)
	return h
}

func drain(t *testing.T, list func(token string) (catalog.Page, error)) []string {
	t.Helper()
	var out []string
	token := ""
	for range 1000 {
		p, err := list(token)
		assert.NilError(t, err)
		out = append(out, p.Names...)
		if p.NextToken == "" {
			return out
		}
		token = p.NextToken
	}
	t.Fatal("listing does not end")
	return nil
}

func fieldNames(st *catalog.TableState) []string {
	var out []string
	for _, f := range st.Schema.Fields {
		out = append(out, f.Name)
	}
	return out
}

// testNamespaces: create (and its modes), describe, exists, list, drop (and its modes).
func testNamespaces(t *testing.T, s *suite, ns ident.ID) {
	ctx := s.ctx
	c := s.c
	props, err := c.DescribeNamespace(ctx, ns)
	assert.NilError(t, err)
	assert.Equal(t, props["suite"], "Namespaces")
	assert.NilError(t, c.NamespaceExists(ctx, ns))

	_, err = c.CreateNamespace(ctx, ns, nil, catalog.ModeCreate)
	code(t, err, nserr.NamespaceAlreadyExists)
	props, err = c.CreateNamespace(ctx, ns, map[string]string{"other": "x"}, catalog.ModeExistOk)
	assert.NilError(t, err)
	assert.Equal(t, props["suite"], "Namespaces", "ExistOk leaves the namespace as it was")

	kids := []string{"a", "b", "c"}
	for _, k := range kids {
		_, err := c.CreateNamespace(ctx, child(ns, k), map[string]string{"k": k}, "")
		assert.NilError(t, err)
	}
	for _, limit := range []int{0, 1, 2} {
		got := drain(t, func(tok string) (catalog.Page, error) { return c.ListNamespaces(ctx, ns, tok, limit) })
		assert.DeepEqual(t, got, kids)
	}
	top := drain(t, func(tok string) (catalog.Page, error) { return c.ListNamespaces(ctx, s.base, tok, 0) })
	assert.Assert(t, slices.Contains(top, ns[len(ns)-1]), "%v", top)

	s.create(t, child(child(ns, "a"), "t"), "x")
	_, err = c.DropNamespace(ctx, child(ns, "a"), catalog.ModeFail, catalog.BehaviorRestrict)
	code(t, err, nserr.NamespaceNotEmpty)
	_, err = c.DropNamespace(ctx, ns, catalog.ModeFail, catalog.BehaviorRestrict)
	code(t, err, nserr.NamespaceNotEmpty)

	_, err = c.DropNamespace(ctx, child(ns, "b"), catalog.ModeFail, catalog.BehaviorRestrict)
	assert.NilError(t, err)
	code(t, c.NamespaceExists(ctx, child(ns, "b")), nserr.NamespaceNotFound)
	_, err = c.DescribeNamespace(ctx, child(ns, "b"))
	code(t, err, nserr.NamespaceNotFound)
	_, err = c.DropNamespace(ctx, child(ns, "b"), catalog.ModeFail, catalog.BehaviorRestrict)
	code(t, err, nserr.NamespaceNotFound)
	_, err = c.DropNamespace(ctx, child(ns, "b"), catalog.ModeSkip, catalog.BehaviorRestrict)
	assert.NilError(t, err, "Skip drops a missing namespace quietly")
	_, err = c.ListNamespaces(ctx, child(ns, "b"), "", 0)
	code(t, err, nserr.NamespaceNotFound)
	got := drain(t, func(tok string) (catalog.Page, error) { return c.ListNamespaces(ctx, ns, tok, 0) })
	assert.DeepEqual(t, got, []string{"a", "c"})
}

// testTableLifecycle: create, describe, exists, list, load, drop, and the codes for a table that
// exists or does not.
func testTableLifecycle(t *testing.T, s *suite, ns ident.ID) {
	ctx := s.ctx
	c := s.c
	id := child(ns, "t")
	created := s.create(t, id, "a", "b")

	_, _, err := c.CreateTable(ctx, id, catalog.NewTable{Schema: schema("a")})
	code(t, err, nserr.TableAlreadyExists)
	_, v, err := c.CreateTable(ctx, id, catalog.NewTable{Schema: schema("z"), Mode: catalog.ModeExistOk})
	assert.NilError(t, err)
	assert.Equal(t, v, uint64(1), "ExistOk answers the existing table's version")

	got, err := c.DescribeTable(ctx, id)
	assert.NilError(t, err)
	assert.DeepEqual(t, got.ID, id)
	assert.Equal(t, got.URI, created.URI)
	assert.NilError(t, c.TableExists(ctx, id))

	h := s.load(t, id)
	assert.Equal(t, h.Meta().URI, created.URI)
	st, err := h.State(ctx, catalog.DescribeOptions{Detailed: true})
	assert.NilError(t, err)
	assert.Equal(t, st.Version, uint64(1))
	assert.DeepEqual(t, fieldNames(st), []string{"a", "b"})
	assert.Assert(t, st.Stats != nil)

	for _, n := range []string{"u", "v"} {
		s.create(t, child(ns, n), "a")
	}
	for _, limit := range []int{0, 1, 2} {
		names := drain(t, func(tok string) (catalog.Page, error) { return c.ListTables(ctx, ns, tok, limit) })
		assert.DeepEqual(t, names, []string{"t", "u", "v"})
	}
	all := drain(t, func(tok string) (catalog.Page, error) { return c.ListAllTables(ctx, tok, 0) })
	oid := namespace.Delimiter
	for i, p := range id {
		if i == 0 {
			oid = p
		} else {
			oid += namespace.Delimiter + p
		}
	}
	assert.Assert(t, slices.Contains(all, oid), "%v lists %s", all, oid)

	dropped, err := c.DropTable(ctx, id)
	assert.NilError(t, err)
	assert.DeepEqual(t, dropped.ID, id)
	code(t, c.TableExists(ctx, id), nserr.TableNotFound)
	_, err = c.DescribeTable(ctx, id)
	code(t, err, nserr.TableNotFound)
	_, err = c.LoadTable(ctx, id)
	code(t, err, nserr.TableNotFound)
	_, err = c.DropTable(ctx, id)
	code(t, err, nserr.TableNotFound)
	names := drain(t, func(tok string) (catalog.Page, error) { return c.ListTables(ctx, ns, tok, 0) })
	assert.DeepEqual(t, names, []string{"u", "v"})
	s.create(t, id, "c") // the name is free again
}

// testDeclareRegister: a declared table has no version; deregister keeps the bytes, register
// brings them back; the codes for existing and missing tables.
func testDeclareRegister(t *testing.T, s *suite, ns ident.ID) {
	ctx := s.ctx
	c := s.c
	decl := child(ns, "declared")
	tbl, err := c.DeclareTable(ctx, decl, "", map[string]string{"p": "1"})
	assert.NilError(t, err)
	assert.Assert(t, tbl.URI != "")
	assert.NilError(t, c.TableExists(ctx, decl))
	_, err = c.DeclareTable(ctx, decl, "", nil)
	code(t, err, nserr.TableAlreadyExists)
	h := s.load(t, decl)
	assert.Equal(t, h.Meta().Properties["p"], "1")
	st, err := h.State(ctx, catalog.DescribeOptions{})
	assert.NilError(t, err)
	assert.Assert(t, st == nil, "a declared table has no version: %+v", st)
	_, err = h.DescribeVersion(ctx, "", nil)
	code(t, err, nserr.TableVersionNotFound)

	id := child(ns, "t")
	created := s.create(t, id, "a")
	out, err := c.DeregisterTable(ctx, id)
	assert.NilError(t, err)
	assert.Equal(t, out.URI, created.URI)
	code(t, c.TableExists(ctx, id), nserr.TableNotFound)
	_, err = c.DeregisterTable(ctx, id)
	code(t, err, nserr.TableNotFound)

	back, err := c.RegisterTable(ctx, id, created.Location, "", map[string]string{"r": "1"})
	assert.NilError(t, err)
	assert.Equal(t, back.URI, created.URI)
	st, err = s.load(t, id).State(ctx, catalog.DescribeOptions{})
	assert.NilError(t, err)
	assert.Equal(t, st.Version, uint64(1), "the deregistered bytes are the table again")
	_, err = c.RegisterTable(ctx, id, created.Location, "", nil)
	code(t, err, nserr.TableAlreadyExists)
}

// testRename: a rename moves the name, keeps the location, and refuses taken or missing names.
func testRename(t *testing.T, s *suite, ns ident.ID) {
	ctx := s.ctx
	c := s.c
	from, to := child(ns, "from"), child(ns, "to")
	created := s.create(t, from, "a")
	s.create(t, child(ns, "taken"), "a")

	_, err := c.RenameTable(ctx, from, nil, "taken")
	code(t, err, nserr.TableAlreadyExists)
	_, err = c.RenameTable(ctx, child(ns, "missing"), nil, "x")
	code(t, err, nserr.TableNotFound)

	_, err = c.RenameTable(ctx, from, nil, "to")
	assert.NilError(t, err)
	code(t, c.TableExists(ctx, from), nserr.TableNotFound)
	got, err := c.DescribeTable(ctx, to)
	assert.NilError(t, err)
	assert.Equal(t, got.URI, created.URI, "a rename never moves bytes")

	sub := child(ns, "sub")
	_, err = c.CreateNamespace(ctx, sub, nil, "")
	assert.NilError(t, err)
	_, err = c.RenameTable(ctx, to, sub, "moved")
	assert.NilError(t, err)
	assert.NilError(t, c.TableExists(ctx, child(sub, "moved")))
	_, err = c.RenameTable(ctx, child(sub, "moved"), child(ns, "nowhere"), "x")
	code(t, err, nserr.NamespaceNotFound)
}

// testVersions: every change is a version; listing pages both ways; describe finds one or
// says which is missing; deleting keeps the latest.
func testVersions(t *testing.T, s *suite, ns ident.ID) {
	ctx := s.ctx
	id := child(ns, "t")
	s.create(t, id, "a")
	h := s.load(t, id)
	for i, k := range []string{"k1", "k2"} {
		md, err := h.UpdateSchemaMetadata(ctx, "", lance.MetadataUpdate{k: lance.Set("v")})
		assert.NilError(t, err)
		assert.Equal(t, md[k], "v", "version %d", i+2)
	}
	h = s.load(t, id)
	vs, next, err := h.ListVersions(ctx, catalog.VersionQuery{})
	assert.NilError(t, err)
	assert.Equal(t, next, "")
	assert.DeepEqual(t, versions(vs), []uint64{1, 2, 3})
	var pages []uint64
	q := catalog.VersionQuery{Descending: true, Limit: 2}
	for range 10 {
		vs, next, err := h.ListVersions(ctx, q)
		assert.NilError(t, err)
		pages = append(pages, versions(vs)...)
		if next == "" {
			break
		}
		q.Token = next
	}
	assert.DeepEqual(t, pages, []uint64{3, 2, 1})

	latest, err := h.DescribeVersion(ctx, "", nil)
	assert.NilError(t, err)
	assert.Equal(t, latest.Version, uint64(3))
	assert.Assert(t, latest.ManifestPath != "")
	two := int64(2)
	v2, err := h.DescribeVersion(ctx, "", &two)
	assert.NilError(t, err)
	assert.Equal(t, v2.Version, uint64(2))
	nine := int64(9)
	_, err = h.DescribeVersion(ctx, "", &nine)
	code(t, err, nserr.TableVersionNotFound)
	_, err = h.State(ctx, catalog.DescribeOptions{Version: &nine})
	code(t, err, nserr.TableVersionNotFound)
	st, err := h.State(ctx, catalog.DescribeOptions{Version: &two})
	assert.NilError(t, err)
	assert.Equal(t, st.Version, uint64(2))

	n, err := h.DeleteVersions(ctx, "", []lance.VersionRange{{Start: 1, End: -1}})
	assert.NilError(t, err)
	assert.Equal(t, n, 2, "the latest version is kept")
	vs, _, err = h.ListVersions(ctx, catalog.VersionQuery{})
	assert.NilError(t, err)
	assert.DeepEqual(t, versions(vs), []uint64{3})
}

func versions(vs []catalog.TableVersion) []uint64 {
	return each(vs, func(v catalog.TableVersion) uint64 { return v.Version })
}

// each is f of every element of xs, in order: what a listing's check compares (names, numbers).
func each[T, U any](xs []T, f func(T) U) []U {
	out := make([]U, len(xs))
	for i, x := range xs {
		out[i] = f(x)
	}
	return out
}

// testTags: create, get, list, update, delete, and the codes for a tag that exists or not.
func testTags(t *testing.T, s *suite, ns ident.ID) {
	ctx := s.ctx
	id := child(ns, "t")
	s.create(t, id, "a")
	h := s.load(t, id)
	_, err := h.UpdateSchemaMetadata(ctx, "", lance.MetadataUpdate{"k": lance.Set("v")})
	assert.NilError(t, err)

	_, err = h.CreateTag(ctx, "first", 1, "")
	assert.NilError(t, err)
	_, err = h.CreateTag(ctx, "second", 2, "")
	assert.NilError(t, err)
	_, err = h.CreateTag(ctx, "first", 2, "")
	code(t, err, nserr.TableTagAlreadyExists)
	_, err = h.CreateTag(ctx, "nine", 9, "")
	code(t, err, nserr.TableVersionNotFound)

	tag, err := h.GetTag(ctx, "first")
	assert.NilError(t, err)
	assert.Equal(t, tag.Version, uint64(1))
	tags, next, err := h.ListTags(ctx, "", 0)
	assert.NilError(t, err)
	assert.Equal(t, next, "")
	assert.DeepEqual(t, tagNames(tags), []string{"first", "second"})
	tags, next, err = h.ListTags(ctx, "", 1)
	assert.NilError(t, err)
	assert.DeepEqual(t, tagNames(tags), []string{"first"})
	tags, _, err = h.ListTags(ctx, next, 1)
	assert.NilError(t, err)
	assert.DeepEqual(t, tagNames(tags), []string{"second"})

	_, err = h.UpdateTag(ctx, "first", 2, "")
	assert.NilError(t, err)
	tag, err = h.GetTag(ctx, "first")
	assert.NilError(t, err)
	assert.Equal(t, tag.Version, uint64(2))
	_, err = h.UpdateTag(ctx, "missing", 1, "")
	code(t, err, nserr.TableTagNotFound)
	st, err := h.State(ctx, catalog.DescribeOptions{Tag: ptr("second")})
	assert.NilError(t, err)
	assert.Equal(t, st.Version, uint64(2))

	assert.NilError(t, h.DeleteTag(ctx, "first"))
	_, err = h.GetTag(ctx, "first")
	code(t, err, nserr.TableTagNotFound)
	code(t, h.DeleteTag(ctx, "first"), nserr.TableTagNotFound)
}

func ptr[T any](v T) *T { return &v }

func tagNames(tags []lance.Tag) []string {
	return each(tags, func(t lance.Tag) string { return t.Name })
}

// testRestore: restoring a version commits a copy of it as the newest; a missing version is
// TableVersionNotFound.
func testRestore(t *testing.T, s *suite, ns ident.ID) {
	ctx := s.ctx
	id := child(ns, "t")
	s.create(t, id, "a", "b")
	h := s.load(t, id)
	_, err := h.DropColumns(ctx, "", []string{"b"})
	assert.NilError(t, err)
	v, err := h.Restore(ctx, "", 1)
	assert.NilError(t, err)
	assert.Equal(t, v, uint64(3))
	st, err := s.load(t, id).State(ctx, catalog.DescribeOptions{})
	assert.NilError(t, err)
	assert.Equal(t, st.Version, uint64(3))
	assert.DeepEqual(t, fieldNames(st), []string{"a", "b"})
	_, err = h.Restore(ctx, "", 9)
	code(t, err, nserr.TableVersionNotFound)
	stats, err := s.load(t, id).Stats(ctx, "")
	assert.NilError(t, err)
	assert.Equal(t, stats.NumRows, uint64(0))
}

// testSchema: schema and field metadata, column renames and drops, each a new version; a
// missing column is TableColumnNotFound.
func testSchema(t *testing.T, s *suite, ns ident.ID) {
	ctx := s.ctx
	id := child(ns, "t")
	s.create(t, id, "a", "b", "c")
	h := s.load(t, id)

	md, err := h.UpdateSchemaMetadata(ctx, "", lance.MetadataUpdate{"k": lance.Set("v"), "j": lance.Set("w")})
	assert.NilError(t, err)
	assert.DeepEqual(t, md, map[string]string{"k": "v", "j": "w"})
	md, err = h.UpdateSchemaMetadata(ctx, "", lance.MetadataUpdate{"k": nil})
	assert.NilError(t, err)
	assert.DeepEqual(t, md, map[string]string{"j": "w"})

	v, fields, err := h.UpdateFieldMetadata(ctx, "", []catalog.FieldMetadataUpdate{{Path: "a", Metadata: lance.MetadataUpdate{"unit": lance.Set("m")}}})
	assert.NilError(t, err)
	assert.Equal(t, v, uint64(4))
	assert.DeepEqual(t, fields, map[string]map[string]string{"a": {"unit": "m"}})
	_, _, err = h.UpdateFieldMetadata(ctx, "", []catalog.FieldMetadataUpdate{{Path: "nope", Replace: true}})
	code(t, err, nserr.TableColumnNotFound)

	v, err = h.AlterColumns(ctx, "", []dml.Alteration{{Path: "b", Rename: ptr("bb")}})
	assert.NilError(t, err)
	assert.Equal(t, v, uint64(5))
	v, err = h.DropColumns(ctx, "", []string{"c"})
	assert.NilError(t, err)
	assert.Equal(t, v, uint64(6))
	st, err := s.load(t, id).State(ctx, catalog.DescribeOptions{})
	assert.NilError(t, err)
	assert.DeepEqual(t, fieldNames(st), []string{"a", "bb"})
	assert.DeepEqual(t, st.Schema.Fields[0].Metadata, map[string]string{"unit": "m"})
	assert.DeepEqual(t, maps.Collect(maps.All(st.Schema.Metadata)), map[string]string{"j": "w"})
	_, err = h.DropColumns(ctx, "", nil)
	code(t, err, nserr.InvalidInput)
}

// testMissingParents: table operations in a namespace that does not exist.
func testMissingParents(t *testing.T, s *suite, ns ident.ID) {
	ctx := s.ctx
	c := s.c
	missing := child(ns, "missing")
	id := child(missing, "t")
	_, _, err := c.CreateTable(ctx, id, catalog.NewTable{Schema: schema("a")})
	code(t, err, nserr.NamespaceNotFound)
	_, err = c.DeclareTable(ctx, id, "", nil)
	code(t, err, nserr.NamespaceNotFound)
	_, err = c.ListTables(ctx, missing, "", 0)
	code(t, err, nserr.NamespaceNotFound)
	_, err = c.CreateNamespace(ctx, child(missing, "x"), nil, "")
	code(t, err, nserr.NamespaceNotFound)
	_, err = c.DescribeTable(ctx, child(ns, "absent"))
	code(t, err, nserr.TableNotFound)
}
