// Package lancetest holds the fixtures the lance tests and the index glue's tests (package
// lance/index/tableindex) share: one schema with every shape the writer handles (nested, list,
// nullable), rows whose every value derives from their id, and a dataset on a test directory.
// A _test package cannot import another's helpers, so they live here once.
package lancetest

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"gotest.tools/v3/assert"

	"github.com/lancecat/lancecat/internal/testenv"
	"github.com/lancecat/lancecat/lance"
	"github.com/lancecat/lancecat/storage"
)

// Schema is the fixture's schema: id, a nullable name, a 4-float vector, a list of tags and a
// struct.
var Schema = arrow.NewSchema([]arrow.Field{
	{Name: "id", Type: arrow.PrimitiveTypes.Int64},
	{Name: "name", Type: arrow.BinaryTypes.String, Nullable: true},
	{Name: "vec", Type: arrow.FixedSizeListOf(4, arrow.PrimitiveTypes.Float32), Nullable: true},
	{Name: "tags", Type: arrow.ListOf(arrow.BinaryTypes.String), Nullable: true},
	{Name: "st", Type: arrow.StructOf(
		arrow.Field{Name: "a", Type: arrow.PrimitiveTypes.Int32, Nullable: true},
		arrow.Field{Name: "b", Type: arrow.BinaryTypes.String, Nullable: true},
	), Nullable: true},
}, nil)

// Record is rows [start, start+n) of Schema; every value derives from id.
func Record(mem memory.Allocator, start, n int) arrow.RecordBatch {
	b := array.NewRecordBuilder(mem, Schema)
	defer b.Release()
	for i := start; i < start+n; i++ {
		b.Field(0).(*array.Int64Builder).Append(int64(i))
		if i%7 == 0 {
			b.Field(1).AppendNull()
		} else {
			b.Field(1).(*array.StringBuilder).Append(fmt.Sprintf("n%d", i))
		}
		vb := b.Field(2).(*array.FixedSizeListBuilder)
		vb.Append(true)
		for k := range 4 {
			vb.ValueBuilder().(*array.Float32Builder).Append(float32(i*4 + k))
		}
		lb := b.Field(3).(*array.ListBuilder)
		if i%5 == 0 {
			lb.AppendNull()
		} else {
			lb.Append(true)
			for k := range i % 3 {
				lb.ValueBuilder().(*array.StringBuilder).Append(fmt.Sprintf("t%d", k))
			}
		}
		sb := b.Field(4).(*array.StructBuilder)
		sb.Append(true)
		sb.FieldBuilder(0).(*array.Int32Builder).Append(int32(i))
		if i%3 == 0 {
			sb.FieldBuilder(1).AppendNull()
		} else {
			sb.FieldBuilder(1).(*array.StringBuilder).Append(fmt.Sprintf("s%d", i))
		}
	}
	return b.NewRecordBatch()
}

// Stream yields batches of batchRows covering [start, start+n).
func Stream(t testing.TB, mem memory.Allocator, start, n, batchRows int) lance.RecordStream {
	t.Helper()
	var recs []arrow.RecordBatch
	for off := 0; off < n; off += batchRows {
		recs = append(recs, Record(mem, start+off, min(batchRows, n-off)))
	}
	rr, err := array.NewRecordReader(Schema, recs)
	assert.NilError(t, err)
	for _, r := range recs {
		r.Release()
	}
	t.Cleanup(rr.Release)
	return rr
}

// NewLocal is an empty dataset in a test directory of its own.
func NewLocal(t testing.TB) *lance.Dataset {
	t.Helper()
	return Open(t, t.TempDir())
}

// Open is the dataset whose root is the local directory dir (a table another writer, such as an
// SDK script, made there, or an empty directory for a new one).
func Open(t testing.TB, dir string) *lance.Dataset {
	t.Helper()
	fs, err := storage.NewFS(dir)
	assert.NilError(t, err)
	return lance.NewDataset(fs)
}

// S3Root is a fresh bucket on the test MinIO (it skips like testenv.S3) that tables are made in,
// by lancecat and by the SDK: Options are the SDK's storage options for it.
type S3Root struct {
	Config  storage.S3Config
	Bucket  string
	Options map[string]string
}

// NewS3Root makes the bucket (removed when t ends).
func NewS3Root(t testing.TB) S3Root {
	t.Helper()
	env := testenv.S3(t)
	cfg, bucket := testenv.S3Bucket(t)
	return S3Root{Config: cfg, Bucket: bucket, Options: env.SDKStorageOptions()}
}

// URI is the s3:// URI of the table root prefix ("a/t.lance").
func (r S3Root) URI(prefix string) string { return "s3://" + r.Bucket + "/" + prefix }

// Open is the dataset at prefix through lancecat's S3 backend, and its URI for the SDK.
func (r S3Root) Open(t testing.TB, prefix string) (*lance.Dataset, string) {
	t.Helper()
	store, err := storage.NewS3(context.Background(), r.Config, r.Bucket, prefix)
	assert.NilError(t, err)
	return lance.NewDatasetAt(store, r.URI(prefix)), r.URI(prefix)
}

// SDKRows is what the SDK scripts that read a dataset (scripts/lancedb/read-dataset.mjs,
// scripts/pylance/dataset.py) print of its rows: the scan (each column's values as
// lancefile.JSONValue encodes them), the ids of the rows each filter keeps, and the rows taken
// (read-dataset.mjs only).
type SDKRows struct {
	Scan struct {
		NumRows int                          `json:"num_rows"`
		Columns map[string][]json.RawMessage `json:"columns"`
	} `json:"scan"`
	Filters []struct {
		Where string   `json:"where"`
		IDs   []string `json:"ids"`
	} `json:"filters"`
	Take map[string][]json.RawMessage `json:"take"`
}
