package app

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"gotest.tools/v3/assert"

	"github.com/lancecat/lancecat/client/controlclient"
	"github.com/lancecat/lancecat/client/nsclient"
	nserr "github.com/lancecat/lancecat/errors"
	"github.com/lancecat/lancecat/governance"
	"github.com/lancecat/lancecat/registry"
)

// purge adds ?purge=<v> to a spec request (the spec does not define the parameter).
func purge(v string) nsclient.RequestEditorFn { return withQuery("purge", v) }

// int64Stream is an Arrow IPC stream of one int64 column holding 0..rows-1.
func int64Stream(t *testing.T, rows int) []byte {
	t.Helper()
	schema := arrow.NewSchema([]arrow.Field{{Name: "id", Type: arrow.PrimitiveTypes.Int64}}, nil)
	b := array.NewRecordBuilder(memory.NewGoAllocator(), schema)
	defer b.Release()
	for i := range rows {
		b.Field(0).(*array.Int64Builder).Append(int64(i))
	}
	rec := b.NewRecordBatch()
	defer rec.Release()
	var buf bytes.Buffer
	w := ipc.NewWriter(&buf, ipc.WithSchema(schema))
	assert.NilError(t, w.Write(rec))
	assert.NilError(t, w.Close())
	return buf.Bytes()
}

// trashFixture makes namespace a and table a$u with data over HTTP; it answers the table's
// version and its directory on disk.
func trashFixture(t *testing.T, e *governedEnv, spec *nsclient.ClientWithResponses) (int64, string) {
	t.Helper()
	ctx := context.Background()
	ns, err := spec.CreateNamespaceWithResponse(ctx, "a", nil, nsclient.CreateNamespaceRequest{})
	assert.NilError(t, err)
	expect(t, ns.StatusCode(), ns.Body, 200, 0)
	cr, err := spec.CreateTableWithBodyWithResponse(ctx, "a$u", nil, "application/vnd.apache.arrow.stream", bytes.NewReader(int64Stream(t, 5)))
	assert.NilError(t, err)
	expect(t, cr.StatusCode(), cr.Body, 200, 0)
	d, err := spec.DescribeTableWithResponse(ctx, "a$u", nil, nsclient.DescribeTableRequest{})
	assert.NilError(t, err)
	expect(t, d.StatusCode(), d.Body, 200, 0)
	assert.Assert(t, d.JSON200.Version != nil)
	tbl, err := e.catalog.DescribeTable(ctx, []string{"a", "u"})
	assert.NilError(t, err)
	dir := filepath.Join(e.root, filepath.FromSlash(tbl.Location))
	_, err = os.Stat(dir)
	assert.NilError(t, err, "the table has bytes on disk")
	return *d.JSON200.Version, dir
}

func listed(t *testing.T, spec *nsclient.ClientWithResponses, ns string) []string {
	t.Helper()
	r, err := spec.ListTablesWithResponse(context.Background(), ns, nil)
	assert.NilError(t, err)
	expect(t, r.StatusCode(), r.Body, 200, 0)
	return r.JSON200.Tables
}

func TestRecoverableTableDrop(t *testing.T) {
	e, spec := newTrashEnv(t, 7*24*time.Hour)
	c, ctx := e.anyone, context.Background()
	version, dir := trashFixture(t, e, spec)

	// Nothing is pending, and there is nothing to undrop, while the table lives.
	tasks, err := c.ListTableTasksWithResponse(ctx, "a$u", nil)
	assert.NilError(t, err)
	expect(t, tasks.StatusCode(), tasks.Body, 200, 0)
	assert.Equal(t, len(tasks.JSON200.Tasks), 0)
	u, err := c.UndropTableWithResponse(ctx, "a$u", nil)
	assert.NilError(t, err)
	expect(t, u.StatusCode(), u.Body, 404, nserr.TableNotFound, "a$u")

	// A protected table with a policy: the drop clears protection and keeps the policy.
	pr, err := c.SetTableProtectionWithResponse(ctx, "a$u", nil, controlclient.SetProtectionRequest{Protected: true})
	assert.NilError(t, err)
	expect(t, pr.StatusCode(), pr.Body, 200, 0)
	pol, err := c.SetTablePolicyWithResponse(ctx, "a$u", nil, controlclient.Policy{RetentionDays: ptr(9)})
	setPolicy(t, 200, pol, err)

	d, err := spec.DropTableWithResponse(ctx, "a$u", nil, purge("maybe"), force("true"))
	assert.NilError(t, err)
	expect(t, d.StatusCode(), d.Body, 400, nserr.InvalidInput, "purge")
	before := time.Now().UTC()
	d, err = spec.DropTableWithResponse(ctx, "a$u", nil, force("true"))
	assert.NilError(t, err)
	expect(t, d.StatusCode(), d.Body, 200, 0)

	assert.Assert(t, !slices.Contains(listed(t, spec, "a"), "u"), "the dropped table is gone from listings")
	ex, err := spec.TableExistsWithResponse(ctx, "a$u", nil, nsclient.TableExistsRequest{})
	assert.NilError(t, err)
	expect(t, ex.StatusCode(), ex.Body, 404, nserr.TableNotFound)
	_, err = os.Stat(dir)
	assert.NilError(t, err, "a recoverable drop keeps the bytes")
	assert.Assert(t, !hasRecord[registry.Protection](t, e.store, protectionKey(registry.KindTable, "a", "u")), "protection is cleared")
	assert.Assert(t, hasRecord[registry.Policy](t, e.store, registry.PolicyKey(registry.KindTable, []string{"a", "u"})), "the policy is kept for the undrop")

	tasks, err = c.ListTableTasksWithResponse(ctx, "a$u", nil)
	assert.NilError(t, err)
	expect(t, tasks.StatusCode(), tasks.Body, 200, 0)
	assert.Equal(t, len(tasks.JSON200.Tasks), 1)
	task := tasks.JSON200.Tasks[0]
	assert.Equal(t, task.Kind, registry.KindTable)
	assert.DeepEqual(t, task.Id, []string{"a", "u"})
	assert.Equal(t, *task.Expired, false)
	assert.Equal(t, *task.DroppedBy, "anonymous")
	assert.Assert(t, task.Location != nil && *task.Location != "")
	deadline := before.Add(7 * 24 * time.Hour)
	assert.Assert(t, !task.ExpiresAt.Before(deadline.Add(-time.Second)) && task.ExpiresAt.Before(deadline.Add(time.Minute)), "deadline %s", task.ExpiresAt)

	// Every door that would make a table at the id is refused, naming the undrop route.
	undropRoute := "/v1/table/a%24u/undrop"
	dc, err := spec.DeclareTableWithResponse(ctx, "a$u", nil, nsclient.DeclareTableRequest{})
	assert.NilError(t, err)
	expect(t, dc.StatusCode(), dc.Body, 409, nserr.TableAlreadyExists, "POST "+undropRoute, task.ExpiresAt.UTC().Format(time.RFC3339))
	cr, err := spec.CreateTableWithBodyWithResponse(ctx, "a$u", nil, "application/vnd.apache.arrow.stream", bytes.NewReader(int64Stream(t, 1)))
	assert.NilError(t, err)
	expect(t, cr.StatusCode(), cr.Body, 409, nserr.TableAlreadyExists, undropRoute)
	rg, err := spec.RegisterTableWithResponse(ctx, "a$u", nil, nsclient.RegisterTableRequest{Location: *task.Location})
	assert.NilError(t, err)
	expect(t, rg.StatusCode(), rg.Body, 409, nserr.TableAlreadyExists, undropRoute)
	_, err = e.catalog.DeclareTable(ctx, []string{"a", "v"}, "", nil)
	assert.NilError(t, err)
	rn, err := spec.RenameTableWithResponse(ctx, "a$v", nil, nsclient.RenameTableRequest{NewTableName: "u"})
	assert.NilError(t, err)
	expect(t, rn.StatusCode(), rn.Body, 409, nserr.TableAlreadyExists, undropRoute)

	// Undrop brings the table back at its location, with its data and version.
	u, err = c.UndropTableWithResponse(ctx, "a$u", nil)
	assert.NilError(t, err)
	expect(t, u.StatusCode(), u.Body, 200, 0)
	assert.DeepEqual(t, u.JSON200.Id, []string{"a", "u"})
	assert.Equal(t, *u.JSON200.Location, *task.Location)
	assert.Assert(t, slices.Contains(listed(t, spec, "a"), "u"))
	desc, err := spec.DescribeTableWithResponse(ctx, "a$u", nil, nsclient.DescribeTableRequest{})
	assert.NilError(t, err)
	expect(t, desc.StatusCode(), desc.Body, 200, 0)
	assert.Equal(t, *desc.JSON200.Version, version)
	assert.Assert(t, hasRecord[registry.Policy](t, e.store, registry.PolicyKey(registry.KindTable, []string{"a", "u"})))
	tasks, err = c.ListTableTasksWithResponse(ctx, "a$u", nil)
	assert.NilError(t, err)
	assert.Equal(t, len(tasks.JSON200.Tasks), 0, "the undrop cleared the record")
	u, err = c.UndropTableWithResponse(ctx, "a$u", nil)
	assert.NilError(t, err)
	expect(t, u.StatusCode(), u.Body, 404, nserr.TableNotFound)
	assert.Assert(t, slices.Contains(eventTypes(t, c), governance.EventTableUndropped))

	// purge=true destroys now: no record, no bytes.
	d, err = spec.DropTableWithResponse(ctx, "a$u", nil, purge("true"))
	assert.NilError(t, err)
	expect(t, d.StatusCode(), d.Body, 200, 0)
	_, err = os.Stat(dir)
	assert.Assert(t, os.IsNotExist(err), "purge deleted the bytes: %v", err)
	tasks, err = c.ListTableTasksWithResponse(ctx, "a$u", nil)
	assert.NilError(t, err)
	assert.Equal(t, len(tasks.JSON200.Tasks), 0)
	assert.Assert(t, !hasRecord[registry.Policy](t, e.store, registry.PolicyKey(registry.KindTable, []string{"a", "u"})), "a destroying drop clears the policy")
}

// TestExpiredTrashRecord: past its deadline a record no longer holds the id, is listed as
// expired, and still undrops (the bytes stay until a purge takes them).
func TestExpiredTrashRecord(t *testing.T) {
	e, spec := newTrashEnv(t, time.Nanosecond)
	c, ctx := e.anyone, context.Background()
	version, dir := trashFixture(t, e, spec)
	d, err := spec.DropTableWithResponse(ctx, "a$u", nil)
	assert.NilError(t, err)
	expect(t, d.StatusCode(), d.Body, 200, 0)
	_, err = os.Stat(dir)
	assert.NilError(t, err)
	tasks, err := c.ListTableTasksWithResponse(ctx, "a$u", nil)
	assert.NilError(t, err)
	expect(t, tasks.StatusCode(), tasks.Body, 200, 0)
	assert.Equal(t, len(tasks.JSON200.Tasks), 1)
	assert.Equal(t, *tasks.JSON200.Tasks[0].Expired, true)

	u, err := c.UndropTableWithResponse(ctx, "a$u", nil)
	assert.NilError(t, err)
	expect(t, u.StatusCode(), u.Body, 200, 0)
	desc, err := spec.DescribeTableWithResponse(ctx, "a$u", nil, nsclient.DescribeTableRequest{})
	assert.NilError(t, err)
	expect(t, desc.StatusCode(), desc.Body, 200, 0)
	assert.Equal(t, *desc.JSON200.Version, version)
}

// TestDropWithoutGrace: grace 0 keeps the spec's semantics, a drop destroys.
func TestDropWithoutGrace(t *testing.T) {
	e, spec := newTrashEnv(t, 0)
	c, ctx := e.anyone, context.Background()
	_, dir := trashFixture(t, e, spec)
	d, err := spec.DropTableWithResponse(ctx, "a$u", nil)
	assert.NilError(t, err)
	expect(t, d.StatusCode(), d.Body, 200, 0)
	_, err = os.Stat(dir)
	assert.Assert(t, os.IsNotExist(err), "grace 0: the drop deleted the bytes: %v", err)
	tasks, err := c.ListTableTasksWithResponse(ctx, "a$u", nil)
	assert.NilError(t, err)
	expect(t, tasks.StatusCode(), tasks.Body, 200, 0)
	assert.Equal(t, len(tasks.JSON200.Tasks), 0)
	u, err := c.UndropTableWithResponse(ctx, "a$u", nil)
	assert.NilError(t, err)
	expect(t, u.StatusCode(), u.Body, 404, nserr.TableNotFound)
	dc, err := spec.DeclareTableWithResponse(ctx, "a$u", nil, nsclient.DeclareTableRequest{})
	assert.NilError(t, err)
	expect(t, dc.StatusCode(), dc.Body, 200, 0)
}
