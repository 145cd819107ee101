package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"gotest.tools/v3/assert"
)

// writeArrow writes ids [start, start+n) with names as an Arrow IPC file
// (file=true) or stream.
func writeArrow(t *testing.T, path string, start, n int, file bool) {
	t.Helper()
	schema := arrow.NewSchema([]arrow.Field{
		{Name: "id", Type: arrow.PrimitiveTypes.Int64},
		{Name: "name", Type: arrow.BinaryTypes.String, Nullable: true},
	}, nil)
	b := array.NewRecordBuilder(memory.DefaultAllocator, schema)
	defer b.Release()
	for i := start; i < start+n; i++ {
		b.Field(0).(*array.Int64Builder).Append(int64(i))
		b.Field(1).(*array.StringBuilder).Append("n" + strings.Repeat("x", i%3))
	}
	rec := b.NewRecordBatch()
	defer rec.Release()
	f, err := os.Create(path)
	assert.NilError(t, err)
	defer f.Close()
	if file {
		w, err := ipc.NewFileWriter(f, ipc.WithSchema(schema))
		assert.NilError(t, err)
		assert.NilError(t, w.Write(rec))
		assert.NilError(t, w.Close())
	} else {
		w := ipc.NewWriter(f, ipc.WithSchema(schema))
		assert.NilError(t, w.Write(rec))
		assert.NilError(t, w.Close())
	}
}

func TestDatasetImportAndScan(t *testing.T) {
	dir := t.TempDir()
	uri := filepath.Join(dir, "t.lance")
	file := filepath.Join(dir, "a.arrow")
	stream := filepath.Join(dir, "b.arrows")
	writeArrow(t, file, 0, 10, true)
	writeArrow(t, stream, 10, 5, false)
	ds := func(args ...string) (string, int) {
		var out, errOut bytes.Buffer
		code := run(append([]string{"dataset"}, args...), &out, &errOut)
		if code != 0 {
			t.Logf("stderr: %s", errOut.String())
		}
		return out.String(), code
	}
	out, code := ds("import", "--from", file, uri)
	assert.Equal(t, code, 0)
	assert.Equal(t, out, "append: version 1, 10 rows in 1 fragments\n")
	out, code = ds("import", "--json", "--from", stream, uri)
	assert.Equal(t, code, 0)
	var res importResult
	assert.NilError(t, json.Unmarshal([]byte(out), &res))
	assert.Equal(t, res, importResult{Version: 2, Mode: "append", Rows: 15, Fragments: 2})

	out, code = ds("scan", "--columns", "id", "--offset", "8", "--limit", "3", uri)
	assert.Equal(t, code, 0)
	assert.Equal(t, out, "{\"id\":8}\n{\"id\":9}\n{\"id\":10}\n")
	out, code = ds("scan", "--version", "1", "--format", "arrow", uri)
	assert.Equal(t, code, 0)
	rd, err := ipc.NewReader(strings.NewReader(out))
	assert.NilError(t, err)
	rows := 0
	for rd.Next() {
		rows += int(rd.RecordBatch().NumRows())
	}
	rd.Release()
	assert.Equal(t, rows, 10)

	out, code = ds("import", "--mode", "overwrite", "--from", stream, uri)
	assert.Equal(t, code, 0)
	assert.Equal(t, out, "overwrite: version 3, 5 rows in 1 fragments\n")
	_, code = ds("import", "--mode", "create", "--from", stream, uri)
	assert.Equal(t, code, 1)
	_, code = ds("scan", "--columns", "nope", uri)
	assert.Equal(t, code, 1)
}
