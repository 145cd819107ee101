package catalog_test

import (
	"context"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"gotest.tools/v3/assert"

	"github.com/lancecat/lancecat/catalog"
	nserr "github.com/lancecat/lancecat/errors"
	"github.com/lancecat/lancecat/ident"
	"github.com/lancecat/lancecat/internal/testenv"
	"github.com/lancecat/lancecat/namespace"
	"github.com/lancecat/lancecat/storage"
)

// TestTableExistsAt (moved from the table_exists handler): a table exists at a version it has;
// at one it lacks, or declared with none, it does not (TableNotFound, 404 code 4, never
// TableVersionNotFound), and the answer says which version is missing; without a version it is
// the catalog's TableExists.
func TestTableExistsAt(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	fs, err := storage.NewFS(dir)
	assert.NilError(t, err)
	c := namespace.New(fs, namespace.Options{RootURI: dir})
	schema := arrow.NewSchema([]arrow.Field{{Name: "id", Type: arrow.PrimitiveTypes.Int64}}, nil)
	b := array.NewRecordBuilder(testenv.CheckedAllocator(t), schema)
	b.Field(0).(*array.Int64Builder).AppendValues([]int64{1}, nil)
	rec := b.NewRecordBatch()
	b.Release()
	defer rec.Release()
	_, v, err := c.CreateTable(ctx, ident.ID{"t"}, catalog.NewTable{Schema: schema, Rows: catalog.Records(schema, rec)})
	assert.NilError(t, err)
	_, err = c.DeclareTable(ctx, ident.ID{"d"}, "", nil)
	assert.NilError(t, err)

	at := func(n int64) *int64 { return &n }
	for _, tc := range []struct {
		id      string
		version *int64
		code    nserr.Code // 0: exists
		msg     string
	}{
		{id: "t"},
		{id: "t", version: at(int64(v))},
		{id: "t", version: at(int64(v) + 1), code: nserr.TableNotFound, msg: "has no version 2"},
		{id: "d"},
		{id: "d", version: at(1), code: nserr.TableNotFound, msg: "has no version 1"},
		{id: "missing", code: nserr.TableNotFound},
		{id: "missing", version: at(1), code: nserr.TableNotFound},
		{id: "t", version: at(-1), code: nserr.InvalidInput, msg: "negative"},
	} {
		err := catalog.TableExistsAt(ctx, c, ident.ID{tc.id}, tc.version)
		if tc.code == 0 {
			assert.NilError(t, err, "%s at %v", tc.id, tc.version)
			continue
		}
		assert.Equal(t, nserr.CodeOf(err), tc.code, "%s: %v", tc.id, err)
		assert.ErrorContains(t, err, tc.msg)
	}
}

// TestListedIDs: ListAllTables names tables by their full id joined with catalog.ListedDelimiter,
// which ListedID splits again.
func TestListedIDs(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	fs, err := storage.NewFS(dir)
	assert.NilError(t, err)
	c := namespace.New(fs, namespace.Options{RootURI: dir})
	_, err = c.CreateNamespace(ctx, ident.ID{"a"}, nil, "")
	assert.NilError(t, err)
	_, err = c.DeclareTable(ctx, ident.ID{"a", "t"}, "", nil)
	assert.NilError(t, err)
	page, err := c.ListAllTables(ctx, "", 0)
	assert.NilError(t, err)
	assert.Equal(t, len(page.Names), 1)
	assert.DeepEqual(t, catalog.ListedID(page.Names[0]), ident.ID{"a", "t"})
	assert.Equal(t, catalog.ListedDelimiter, namespace.Delimiter)
}
