package handlers

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/labstack/echo/v4"
	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"

	"github.com/lancecat/lancecat/catalog"
	nserr "github.com/lancecat/lancecat/errors"
	"github.com/lancecat/lancecat/ident"
	"github.com/lancecat/lancecat/namespace"
	"github.com/lancecat/lancecat/storage"
)

// indexTable is a table "t" of 100 rows (id int64, cat utf8 with nulls, tags list<utf8>)
// served by handlers over a local namespace.
func indexTable(t *testing.T) (*echo.Echo, *error, *namespace.Namespace, *catalog.Entry) {
	t.Helper()
	ctx := context.Background()
	dir := t.TempDir()
	fs, err := storage.NewFS(dir)
	assert.NilError(t, err)
	ns := namespace.New(fs, namespace.Options{RootURI: dir})
	schema := arrow.NewSchema([]arrow.Field{
		{Name: "id", Type: arrow.PrimitiveTypes.Int64},
		{Name: "cat", Type: arrow.BinaryTypes.String, Nullable: true},
		{Name: "tags", Type: arrow.ListOf(arrow.BinaryTypes.String), Nullable: true},
		{Name: "vec", Type: arrow.FixedSizeListOf(2, arrow.PrimitiveTypes.Float32), Nullable: true},
	}, nil)
	b := array.NewRecordBuilder(memory.DefaultAllocator, schema)
	defer b.Release()
	for i := range 100 {
		b.Field(0).(*array.Int64Builder).Append(int64(i))
		if i%9 == 0 {
			b.Field(1).AppendNull()
		} else {
			b.Field(1).(*array.StringBuilder).Append(fmt.Sprintf("c%d", i%4))
		}
		lb := b.Field(2).(*array.ListBuilder)
		lb.Append(true)
		lb.ValueBuilder().(*array.StringBuilder).Append(fmt.Sprintf("l%d", i%3))
		vb := b.Field(3).(*array.FixedSizeListBuilder)
		vb.Append(true)
		vb.ValueBuilder().(*array.Float32Builder).AppendValues([]float32{float32(i), 1}, nil)
	}
	rec := b.NewRecordBatch()
	defer rec.Release()
	tbl, _, err := ns.CreateTable(ctx, ident.ID{"t"}, catalog.NewTable{Schema: schema, Rows: catalog.Records(schema, rec)})
	assert.NilError(t, err)
	e := echo.New()
	got := new(error)
	e.HTTPErrorHandler = func(err error, _ echo.Context) { *got = err }
	New(Options{Catalog: ns}).Register(e)
	return e, got, ns, tbl
}

func post(e *echo.Echo, got *error, target, body string) (*httptest.ResponseRecorder, error) {
	*got = nil
	rec := httptest.NewRecorder()
	req := httptest.NewRequest(http.MethodPost, target, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	e.ServeHTTP(rec, req)
	return rec, *got
}

// TestIndexDoors drives the index doors over a real table: both create doors build scalar
// indices in Lance's format (default name <column>_idx), the list answers upper-case types and
// the stats the row counts, a drop removes the index and a second drop is TableIndexNotFound;
// bad requests are refused with their spec codes and commit nothing. Before this change every
// index door answered Unsupported.
func TestIndexDoors(t *testing.T) {
	ctx := context.Background()
	e, got, ns, tbl := indexTable(t)
	ok := func(target, body string) map[string]any {
		t.Helper()
		rec, err := post(e, got, target, body)
		assert.NilError(t, err, "%s", target)
		assert.Equal(t, rec.Code, http.StatusOK, rec.Body.String())
		var out map[string]any
		assert.NilError(t, json.Unmarshal(rec.Body.Bytes(), &out))
		return out
	}
	ok("/v1/table/t/create_index", `{"column":"id","index_type":"BTREE"}`)
	ok("/v1/table/t/create_scalar_index", `{"column":"cat","index_type":"bitmap","name":"by_cat"}`)
	ok("/v1/table/t/create_index", `{"column":"tags","index_type":"LABEL_LIST"}`)

	list := ok("/v1/table/t/index/list", `{}`)
	type entry struct{ Name, Type, Columns string }
	var entries []entry
	for _, ix := range list["indexes"].([]any) {
		m := ix.(map[string]any)
		var cols []string
		for _, c := range m["columns"].([]any) {
			cols = append(cols, c.(string))
		}
		entries = append(entries, entry{m["index_name"].(string), m["index_type"].(string), strings.Join(cols, ",")})
		assert.Check(t, m["index_uuid"] != "")
	}
	assert.Check(t, is.DeepEqual(entries, []entry{{"id_idx", "BTREE", "id"}, {"by_cat", "BITMAP", "cat"}, {"tags_idx", "LABEL_LIST", "tags"}}))

	stats := ok("/v1/table/t/index/by_cat/stats", `{}`)
	assert.Check(t, is.DeepEqual(stats, map[string]any{"index_type": "BITMAP", "num_indexed_rows": 100.0, "num_unindexed_rows": 0.0, "num_indices": 1.0}))

	// The three indices are registered in the latest manifest.
	ds := ns.Dataset(tbl)
	v, err := ds.OpenLatest(ctx)
	assert.NilError(t, err)
	assert.Check(t, is.Len(v.Indices(), 3))

	// Bad requests: their codes, and no new version.
	for _, c := range []struct {
		target, body string
		code         nserr.Code
	}{
		{"/v1/table/t/create_index", `{"column":"missing","index_type":"BTREE"}`, nserr.TableColumnNotFound},
		{"/v1/table/t/create_index", `{"column":"vec","index_type":"BTREE"}`, nserr.InvalidInput},
		{"/v1/table/t/create_index", `{"column":"id","index_type":"SORTED"}`, nserr.InvalidInput},
		// Vector indices: bad parameters are InvalidInput (dimension 2 has
		// one sub-vector by default, and PQ needs 256 rows to train), the
		// kinds not built yet Unsupported.
		{"/v1/table/t/create_index", `{"column":"vec","index_type":"IVF_PQ"}`, nserr.InvalidInput},
		{"/v1/table/t/create_index", `{"column":"vec","index_type":"IVF_PQ","num_sub_vectors":3}`, nserr.InvalidInput},
		{"/v1/table/t/create_index", `{"column":"vec","index_type":"IVF_FLAT","distance_type":"manhattan"}`, nserr.InvalidInput},
		{"/v1/table/t/create_index", `{"column":"id","index_type":"IVF_FLAT"}`, nserr.InvalidInput},
		{"/v1/table/t/create_index", `{"column":"vec","index_type":"IVF_FLAT","num_partitions":500}`, nserr.InvalidInput},
		{"/v1/table/t/create_index", `{"column":"missing","index_type":"IVF_FLAT"}`, nserr.TableColumnNotFound},
		{"/v1/table/t/create_index", `{"column":"vec","index_type":"IVF_RQ"}`, nserr.Unsupported},
		{"/v1/table/t/create_index", `{"column":"id","index_type":"LABEL_LIST"}`, nserr.InvalidInput},
		{"/v1/table/t/index/nope/stats", `{}`, nserr.TableIndexNotFound},
		{"/v1/table/t/index/nope/drop", ``, nserr.TableIndexNotFound},
	} {
		_, err := post(e, got, c.target, c.body)
		assert.Check(t, is.Equal(nserr.CodeOf(err), c.code), "%s %s: %v", c.target, c.body, err)
	}
	after, err := ds.OpenLatest(ctx)
	assert.NilError(t, err)
	assert.Check(t, is.Equal(after.Number(), v.Number()), "a refused request committed a version")

	ok("/v1/table/t/index/by_cat/drop", ``)
	_, err = post(e, got, "/v1/table/t/index/by_cat/drop", ``)
	assert.Check(t, is.Equal(nserr.CodeOf(err), nserr.TableIndexNotFound))
	list = ok("/v1/table/t/index/list", `{}`)
	assert.Check(t, is.Len(list["indexes"].([]any), 2))
	// An older version still lists it.
	list = ok("/v1/table/t/index/list", fmt.Sprintf(`{"version":%d}`, v.Number()))
	assert.Check(t, is.Len(list["indexes"].([]any), 3))
}

// TestVectorIndexDoor: create_index builds an IVF_FLAT index in Lance's
// format; the list names its type IVF_FLAT and the stats its distance type.
func TestVectorIndexDoor(t *testing.T) {
	e, got, _, _ := indexTable(t)
	rec, err := post(e, got, "/v1/table/t/create_index", `{"column":"vec","index_type":"IVF_FLAT","distance_type":"cosine","num_partitions":2}`)
	assert.NilError(t, err)
	assert.Equal(t, rec.Code, http.StatusOK)
	rec, err = post(e, got, "/v1/table/t/index/list", `{}`)
	assert.NilError(t, err)
	var list struct {
		Indexes []struct {
			IndexName string `json:"index_name"`
			IndexType string `json:"index_type"`
		} `json:"indexes"`
	}
	assert.NilError(t, json.Unmarshal(rec.Body.Bytes(), &list))
	assert.Check(t, is.Len(list.Indexes, 1))
	assert.Check(t, is.Equal(list.Indexes[0].IndexType, "IVF_FLAT"))
	rec, err = post(e, got, "/v1/table/t/index/vec_idx/stats", `{}`)
	assert.NilError(t, err)
	var st map[string]any
	assert.NilError(t, json.Unmarshal(rec.Body.Bytes(), &st))
	assert.Check(t, is.Equal(st["index_type"], "IVF_FLAT"))
	assert.Check(t, is.Equal(st["distance_type"], "cosine"))
	assert.Check(t, is.Equal(st["num_indexed_rows"], float64(100)))
}
