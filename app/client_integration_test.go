package app

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"

	"github.com/lancecat/lancecat/authz"
	"github.com/lancecat/lancecat/client"
	"github.com/lancecat/lancecat/client/nsclient"
)

// The Go client module (client/) against the real server: every helper, its answers checked. The
// client module's own tests cover what needs a fault injected (retries, cut streams, tokens).

var clientSchema = arrow.NewSchema([]arrow.Field{
	{Name: "id", Type: arrow.PrimitiveTypes.Int64},
	{Name: "name", Type: arrow.BinaryTypes.String},
}, nil)

// clientRows is a reader of the rows with ids [from, to), named "<prefix><id>", in batches of 25.
func clientRows(t *testing.T, from, to int, prefix string) array.RecordReader {
	t.Helper()
	var recs []arrow.RecordBatch
	for off := from; off < to; off += 25 {
		b := array.NewRecordBuilder(memory.DefaultAllocator, clientSchema)
		for i := off; i < min(off+25, to); i++ {
			b.Field(0).(*array.Int64Builder).Append(int64(i))
			b.Field(1).(*array.StringBuilder).Append(fmt.Sprintf("%s%d", prefix, i))
		}
		recs = append(recs, b.NewRecordBatch())
		b.Release()
	}
	rr, err := array.NewRecordReader(clientSchema, recs)
	assert.NilError(t, err)
	t.Cleanup(rr.Release)
	return rr
}

type roundTripper func(*http.Request) (*http.Response, error)

func (f roundTripper) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// queryRows runs q and answers the result's rows as id → name.
func queryRows(t *testing.T, c *client.Client, id []string, q nsclient.QueryTableRequest) map[int64]string {
	t.Helper()
	rr, err := c.Query(context.Background(), id, q)
	assert.NilError(t, err)
	defer rr.Release()
	got := map[int64]string{}
	for rr.Next() {
		rec := rr.RecordBatch()
		ids := rec.Column(rec.Schema().FieldIndices("id")[0]).(*array.Int64)
		names := rec.Column(rec.Schema().FieldIndices("name")[0]).(*array.String)
		for i := range int(rec.NumRows()) {
			got[ids.Value(i)] = names.Value(i)
		}
	}
	assert.NilError(t, rr.Err())
	return got
}

// TestGoClientHelpers: a catalog served as `lancecat serve` serves it (local root, authorization
// off), driven through every helper of the Go client.
func TestGoClientHelpers(t *testing.T) {
	cfg := DefaultConfig()
	cfg.Root = filepath.Join(t.TempDir(), "catalog")
	var lists atomic.Int32 // namespace listings sent: pages
	counting := roundTripper(func(r *http.Request) (*http.Response, error) {
		if strings.HasPrefix(r.URL.Path, "/v1/namespace/") && strings.HasSuffix(r.URL.Path, "/list") && !strings.Contains(r.URL.Path, "/table/") {
			lists.Add(1)
		}
		return http.DefaultTransport.RoundTrip(r)
	})
	c, err := client.New(runServer(t, cfg), client.WithRetries(3, 50*time.Millisecond), client.WithPageSize(2),
		client.WithTransport(counting))
	assert.NilError(t, err)
	ctx := context.Background()
	shop, items := []string{"shop"}, []string{"shop", "items"}

	t.Run("namespaces", func(t *testing.T) {
		assert.NilError(t, c.CreateNamespace(ctx, shop, map[string]string{"team": "search"}))
		for _, n := range []string{"a", "b", "c", "d"} {
			assert.NilError(t, c.CreateNamespace(ctx, []string{"shop", n}, nil))
		}
		err := c.CreateNamespace(ctx, shop, nil)
		assert.Assert(t, errors.Is(err, client.ErrNamespaceAlreadyExists), "%v", err)
		var p *client.Problem
		assert.Assert(t, errors.As(err, &p))
		assert.Equal(t, p.Status, 409)
		assert.Equal(t, p.Code, client.CodeNamespaceAlreadyExists)

		ns, err := c.DescribeNamespace(ctx, shop)
		assert.NilError(t, err)
		assert.Equal(t, ns.Properties["team"], "search")
		_, err = c.DescribeNamespace(ctx, []string{"nope"})
		assert.Assert(t, errors.Is(err, client.ErrNamespaceNotFound), "%v", err)

		ok, err := c.NamespaceExists(ctx, []string{"shop", "a"})
		assert.NilError(t, err)
		assert.Assert(t, ok)
		ok, err = c.NamespaceExists(ctx, []string{"shop", "z"})
		assert.NilError(t, err)
		assert.Assert(t, !ok)

		// Pages of 2: the iterator reads page after page (the last may be empty).
		lists.Store(0)
		children, err := c.ListNamespaces(ctx, shop)
		assert.NilError(t, err)
		assert.DeepEqual(t, children, []string{"a", "b", "c", "d"})
		assert.Assert(t, lists.Load() >= 2, "%d pages", lists.Load())
		var first []string
		for name, err := range c.Namespaces(ctx, shop) {
			assert.NilError(t, err)
			first = append(first, name)
			if len(first) == 3 {
				break
			}
		}
		assert.DeepEqual(t, first, []string{"a", "b", "c"})
		root, err := c.ListNamespaces(ctx, nil)
		assert.NilError(t, err)
		assert.DeepEqual(t, root, []string{"shop"})

		assert.NilError(t, c.DropNamespace(ctx, []string{"shop", "d"}, client.Restrict))
		err = c.DropNamespace(ctx, []string{"shop", "d"}, "")
		assert.Assert(t, errors.Is(err, client.ErrNamespaceNotFound), "%v", err)
	})

	t.Run("tables and data", func(t *testing.T) {
		res, err := c.CreateTable(ctx, items, clientRows(t, 0, 100, "item"), "")
		assert.NilError(t, err)
		assert.Equal(t, res.Version, int64(1))
		_, err = c.CreateTable(ctx, items, clientRows(t, 0, 1, "x"), client.Create)
		assert.Assert(t, errors.Is(err, client.ErrTableAlreadyExists), "%v", err)

		tbl, err := c.DescribeTable(ctx, items)
		assert.NilError(t, err)
		assert.Equal(t, tbl.Version, int64(1))
		assert.Assert(t, is.Contains(tbl.Location, "items"))
		assert.Assert(t, !tbl.Declared)
		assert.Equal(t, len(tbl.Raw.Schema.Fields), 2)

		err = c.DropNamespace(ctx, shop, client.Restrict)
		assert.Assert(t, errors.Is(err, client.ErrNamespaceNotEmpty), "%v", err)

		ok, err := c.TableExists(ctx, items)
		assert.NilError(t, err)
		assert.Assert(t, ok)
		ok, err = c.TableExists(ctx, []string{"shop", "nope"})
		assert.NilError(t, err)
		assert.Assert(t, !ok)

		ins, err := c.Insert(ctx, items, clientRows(t, 100, 200, "item"), client.Append)
		assert.NilError(t, err)
		assert.Equal(t, ins.Version, int64(2))
		assert.Equal(t, ins.Inserted, int64(100))

		n, err := c.CountRows(ctx, items, "")
		assert.NilError(t, err)
		assert.Equal(t, n, int64(200))
		n, err = c.CountRows(ctx, items, "id >= 150")
		assert.NilError(t, err)
		assert.Equal(t, n, int64(50))
		_, err = c.CountRows(ctx, items, "no_such_column > 1")
		assert.Assert(t, err != nil)

		filter := "id < 5"
		got := queryRows(t, c, items, nsclient.QueryTableRequest{K: 1000, Filter: &filter})
		assert.DeepEqual(t, got, map[int64]string{0: "item0", 1: "item1", 2: "item2", 3: "item3", 4: "item4"})
		all := queryRows(t, c, items, nsclient.QueryTableRequest{K: 1000})
		assert.Equal(t, len(all), 200)

		// Merge on id: 190–199 exist (updated), 200–209 do not (inserted).
		m, err := c.MergeInsert(ctx, items, clientRows(t, 190, 210, "new"), client.Merge{
			On: []string{"id"}, WhenMatchedUpdateAll: true, WhenNotMatchedInsertAll: true,
		})
		assert.NilError(t, err)
		assert.Equal(t, m.Updated, int64(10))
		assert.Equal(t, m.Inserted, int64(10))
		assert.Equal(t, m.Version, int64(3))
		filter = "id >= 189 AND id <= 191"
		got = queryRows(t, c, items, nsclient.QueryTableRequest{K: 10, Filter: &filter})
		assert.DeepEqual(t, got, map[int64]string{189: "item189", 190: "new190", 191: "new191"})
		_, err = c.MergeInsert(ctx, items, clientRows(t, 0, 1, "x"), client.Merge{})
		assert.Assert(t, errors.Is(err, client.ErrInvalidInput), "%v", err)

		tables, err := c.ListTables(ctx, shop)
		assert.NilError(t, err)
		assert.DeepEqual(t, tables, []string{"items"})

		_, err = c.Query(ctx, []string{"shop", "nope"}, nsclient.QueryTableRequest{K: 1})
		assert.Assert(t, errors.Is(err, client.ErrTableNotFound), "%v", err)
	})

	t.Run("indices", func(t *testing.T) {
		name := "id_idx"
		assert.NilError(t, c.CreateIndex(ctx, items, nsclient.CreateTableIndexRequest{Column: "id", IndexType: "BTREE", Name: &name}))
		list, err := c.ListIndices(ctx, items)
		assert.NilError(t, err)
		assert.Equal(t, len(list), 1)
		assert.Equal(t, list[0].IndexName, name)
		assert.DeepEqual(t, list[0].Columns, []string{"id"})
		stats, err := c.DescribeIndex(ctx, items, name)
		assert.NilError(t, err)
		assert.Equal(t, *stats.NumIndexedRows, int64(210))
		assert.NilError(t, c.DropIndex(ctx, items, name))
		_, err = c.DescribeIndex(ctx, items, name)
		assert.Assert(t, errors.Is(err, client.ErrTableIndexNotFound), "%v", err)
		list, err = c.ListIndices(ctx, items)
		assert.NilError(t, err)
		assert.Equal(t, len(list), 0)
	})

	t.Run("versions and tags", func(t *testing.T) {
		versions, err := c.ListVersions(ctx, items)
		assert.NilError(t, err)
		var nums []int64
		for _, v := range versions {
			nums = append(nums, v.Version)
		}
		assert.Assert(t, len(nums) >= 3, "%v", nums)
		assert.Assert(t, slices.Contains(nums, 1) && slices.Contains(nums, 2) && slices.Contains(nums, 3), "%v", nums)

		assert.NilError(t, c.CreateTag(ctx, items, "first", 1))
		assert.NilError(t, c.CreateTag(ctx, items, "merged", 3))
		err = c.CreateTag(ctx, items, "first", 2)
		assert.Assert(t, errors.Is(err, client.ErrTableTagAlreadyExists), "%v", err)
		tags, err := c.ListTags(ctx, items)
		assert.NilError(t, err)
		assert.DeepEqual(t, tags, []client.Tag{{Name: "first", Version: 1}, {Name: "merged", Version: 3}})

		assert.NilError(t, c.Restore(ctx, items, 1))
		n, err := c.CountRows(ctx, items, "")
		assert.NilError(t, err)
		assert.Equal(t, n, int64(100))
		err = c.Restore(ctx, items, 999)
		assert.Assert(t, errors.Is(err, client.ErrTableVersionNotFound), "%v", err)

		assert.NilError(t, c.DeleteTag(ctx, items, "first"))
		err = c.DeleteTag(ctx, items, "first")
		assert.Assert(t, errors.Is(err, client.ErrTableTagNotFound), "%v", err)
		tags, err = c.ListTags(ctx, items)
		assert.NilError(t, err)
		assert.DeepEqual(t, tags, []client.Tag{{Name: "merged", Version: 3}})
	})

	t.Run("register and deregister", func(t *testing.T) {
		loc, err := c.DeregisterTable(ctx, items)
		assert.NilError(t, err)
		assert.Assert(t, is.Contains(loc, "items"))
		ok, err := c.TableExists(ctx, items)
		assert.NilError(t, err)
		assert.Assert(t, !ok)
		again := []string{"shop", "a", "items"}
		_, err = c.RegisterTable(ctx, again, loc)
		assert.NilError(t, err)
		n, err := c.CountRows(ctx, again, "")
		assert.NilError(t, err)
		assert.Equal(t, n, int64(100))

		declared, err := c.DeclareTable(ctx, []string{"shop", "later"})
		assert.NilError(t, err)
		assert.Assert(t, declared.Declared)
		ins, err := c.Insert(ctx, []string{"shop", "later"}, clientRows(t, 0, 3, "l"), "")
		assert.NilError(t, err)
		assert.Equal(t, ins.Inserted, int64(3))

		assert.NilError(t, c.DropTable(ctx, again))
		_, err = c.DescribeTable(ctx, again)
		assert.Assert(t, errors.Is(err, client.ErrTableNotFound), "%v", err)
		err = c.DropTable(ctx, again)
		assert.Assert(t, errors.Is(err, client.ErrTableNotFound), "%v", err)
	})

	t.Run("control plane", func(t *testing.T) {
		for _, id := range []string{"p1", "p2", "p3"} {
			p, err := c.CreateProject(ctx, id)
			assert.NilError(t, err)
			assert.Equal(t, p.Id, id)
		}
		_, err := c.CreateProject(ctx, "p1")
		assert.Assert(t, err != nil)
		projects, err := c.ListProjects(ctx)
		assert.NilError(t, err)
		var ids []string
		for _, p := range projects {
			ids = append(ids, p.Id)
		}
		assert.DeepEqual(t, ids, []string{"p1", "p2", "p3"})
		p, err := c.DescribeProject(ctx, "p2")
		assert.NilError(t, err)
		assert.Equal(t, p.Id, "p2")

		w, err := c.CreateWarehouse(ctx, "p1", "w1", "")
		assert.NilError(t, err)
		assert.Equal(t, w.Project, "p1")
		assert.Assert(t, w.RootUri != "")
		whs, err := c.ListWarehouses(ctx, "p1")
		assert.NilError(t, err)
		assert.Equal(t, len(whs), 1)
		assert.Equal(t, whs[0].Id, "w1")
		whs, err = c.ListWarehouses(ctx, "p2")
		assert.NilError(t, err)
		assert.Equal(t, len(whs), 0)
		got, err := c.DescribeWarehouse(ctx, "w1")
		assert.NilError(t, err)
		assert.Equal(t, got.RootUri, w.RootUri)
		assert.NilError(t, c.DeleteWarehouse(ctx, "w1", false))
		_, err = c.DescribeWarehouse(ctx, "w1")
		assert.Assert(t, err != nil)
		assert.NilError(t, c.DeleteProject(ctx, "p3"))
		_, err = c.DescribeProject(ctx, "p3")
		assert.Assert(t, err != nil)

		// With authorization off there is no one to grant to.
		err = c.GrantAccess(ctx, client.OnTable, []string{"shop", "later"}, client.Grant{Subject: "user:bob", Relation: "reader"})
		assert.Assert(t, err != nil)
	})

	t.Run("cascade", func(t *testing.T) {
		assert.NilError(t, c.DropNamespace(ctx, shop, client.Cascade))
		ok, err := c.NamespaceExists(ctx, shop)
		assert.NilError(t, err)
		assert.Assert(t, !ok)
	})
}

// TestGoClientGoverned: with authorization on (OpenFGA), the client's API key is who acts: the
// estate admin makes a table and grants through the client; the grantee reads but may not write;
// revoked, they are refused again; no key at all is unauthenticated.
func TestGoClientGoverned(t *testing.T) {
	e := newSpecEnv(t, openFGAConfig(t, "lancecat-goclient"))
	ctx := context.Background()
	keyOf := func(p authz.Principal) string {
		key, _, err := e.keys.Create(ctx, p, "test")
		assert.NilError(t, err)
		return key
	}
	alice, err := client.New(e.url, client.WithAPIKey(keyOf(authz.User("alice"))))
	assert.NilError(t, err)
	bob, err := client.New(e.url, client.WithAPIKey(keyOf(authz.User("bob"))))
	assert.NilError(t, err)
	anonymous, err := client.New(e.url)
	assert.NilError(t, err)
	items := []string{"ns", "items"}

	assert.NilError(t, alice.CreateNamespace(ctx, []string{"ns"}, nil))
	_, err = alice.CreateTable(ctx, items, clientRows(t, 0, 10, "i"), "")
	assert.NilError(t, err)

	_, err = anonymous.ListNamespaces(ctx, nil)
	assert.Assert(t, errors.Is(err, client.ErrUnauthenticated), "%v", err)
	_, err = bob.CountRows(ctx, items, "")
	assert.Assert(t, errors.Is(err, client.ErrPermissionDenied), "%v", err)
	tables, err := bob.ListTables(ctx, []string{"ns"})
	if err == nil {
		assert.DeepEqual(t, tables, []string{}) // sees nothing there
	} else {
		assert.Assert(t, errors.Is(err, client.ErrPermissionDenied), "%v", err)
	}

	reader := client.Grant{Subject: "user:bob", Relation: "reader"}
	assert.NilError(t, alice.GrantAccess(ctx, client.OnTable, items, reader))
	grants, err := alice.ListAccess(ctx, client.OnTable, items)
	assert.NilError(t, err)
	assert.Assert(t, slices.Contains(grants, reader), "%v", grants)

	n, err := bob.CountRows(ctx, items, "")
	assert.NilError(t, err)
	assert.Equal(t, n, int64(10))
	got := queryRows(t, bob, items, nsclient.QueryTableRequest{K: 100})
	assert.Equal(t, len(got), 10)
	_, err = bob.Insert(ctx, items, clientRows(t, 10, 11, "b"), "")
	assert.Assert(t, errors.Is(err, client.ErrPermissionDenied), "%v", err)
	err = bob.GrantAccess(ctx, client.OnTable, items, client.Grant{Subject: "user:carol", Relation: "reader"})
	assert.Assert(t, errors.Is(err, client.ErrPermissionDenied), "%v", err)

	assert.NilError(t, alice.RevokeAccess(ctx, client.OnTable, items, reader))
	_, err = bob.CountRows(ctx, items, "")
	assert.Assert(t, errors.Is(err, client.ErrPermissionDenied), "%v", err)

	// The control plane as the estate admin.
	_, err = alice.CreateProject(ctx, "gp")
	assert.NilError(t, err)
	assert.NilError(t, alice.GrantAccess(ctx, client.OnProject, []string{"gp"}, client.Grant{Subject: "user:bob", Relation: "member"}))
	members, err := alice.ListAccess(ctx, client.OnProject, []string{"gp"})
	assert.NilError(t, err)
	assert.Assert(t, slices.Contains(members, client.Grant{Subject: "user:bob", Relation: "member"}), "%v", members)
	projects, err := alice.ListProjects(ctx)
	assert.NilError(t, err)
	assert.Equal(t, len(projects), 1)
	assert.Equal(t, projects[0].Id, "gp")
	// Listing projects is the estate's; a member is refused it, and refused running warehouses.
	_, err = bob.ListProjects(ctx)
	assert.Assert(t, errors.Is(err, client.ErrPermissionDenied), "%v", err)
	_, err = bob.CreateWarehouse(ctx, "gp", "gw", "")
	assert.Assert(t, errors.Is(err, client.ErrPermissionDenied), "%v", err)
}
