package main

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"gotest.tools/v3/assert"

	"github.com/lancecat/lancecat/lance"
	"github.com/lancecat/lancecat/storage"
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

// A forged import (a stream whose batch claims a 1 TiB body, a file whose footer claims more
// than the file) is refused with the reader's clear error and leaves the dataset as it was; a
// file's bytes on standard input import like a stream (the stream before its footer).
func TestDatasetImportForged(t *testing.T) {
	dir := t.TempDir()
	uri := filepath.Join(dir, "t.lance")
	good := filepath.Join(dir, "good.arrows")
	writeArrow(t, good, 0, 4, false)
	ds := func(args ...string) (string, string, int) {
		var out, errOut bytes.Buffer
		code := run(append([]string{"dataset"}, args...), &out, &errOut)
		return out.String(), errOut.String(), code
	}
	_, _, code := ds("import", "--from", good, uri)
	assert.Equal(t, code, 0)

	s, err := os.ReadFile(good)
	assert.NilError(t, err)
	// The stream's second message is the batch; its bodyLength is the int64 whose value is the
	// real body's length (a small, unique value in the metadata: find it by its value).
	n := int(binary.LittleEndian.Uint32(s[4:]))
	pos := 8 + n
	m := int(binary.LittleEndian.Uint32(s[pos+4:]))
	meta := s[pos+8 : pos+8+m]
	body := len(s) - (pos + 8 + m) - 8 // the end-of-stream marker follows the body
	var at []int
	for i := 0; i+8 <= len(meta); i++ {
		if binary.LittleEndian.Uint64(meta[i:]) == uint64(body) {
			at = append(at, i)
		}
	}
	assert.Assert(t, len(at) > 0)
	forged := bytes.Clone(s)
	binary.LittleEndian.PutUint64(forged[pos+8+at[0]:], 1<<40)
	bad := filepath.Join(dir, "bad.arrows")
	assert.NilError(t, os.WriteFile(bad, forged, 0o644))
	_, errOut, code := ds("import", "--from", bad, uri)
	assert.Equal(t, code, 1)
	assert.Assert(t, strings.Contains(errOut, "not a valid Arrow IPC stream"), errOut)

	file := filepath.Join(dir, "a.arrow")
	writeArrow(t, file, 4, 3, true)
	f, err := os.ReadFile(file)
	assert.NilError(t, err)
	forgedFile := bytes.Clone(f)
	binary.LittleEndian.PutUint32(forgedFile[len(f)-10:], 1<<31)
	assert.NilError(t, os.WriteFile(bad, forgedFile, 0o644))
	_, errOut, code = ds("import", "--from", bad, uri)
	assert.Equal(t, code, 1)
	assert.Assert(t, strings.Contains(errOut, "footer"), errOut)

	out, _, code := ds("scan", "--columns", "id", uri)
	assert.Equal(t, code, 0)
	assert.Equal(t, strings.Count(out, "\n"), 4, "the refused imports wrote nothing")

	// Standard input: the file's bytes (the stream inside them is read).
	stdin, err := os.Open(file)
	assert.NilError(t, err)
	defer stdin.Close()
	ctx := context.Background()
	dsh, err := lance.OpenURI(ctx, uri, storage.S3Config{})
	assert.NilError(t, err)
	res, err := datasetImport(ctx, dsh, importFlags{from: "-", mode: "append"}, stdin)
	assert.NilError(t, err)
	assert.Equal(t, res.Rows, uint64(7))
}

// TestDatasetImportFiles: `dataset import --from x.arrow` takes an Arrow IPC file by its footer,
// whoever wrote it. Arrow JS writes a file's schema only in the footer, and its files failed
// ("invalid message type (got=RecordBatch, want=Schema)") while the reader read the stream before
// the footer. Fixtures: testdata/gen-arrow-js.mjs, testdata/gen-pyarrow.py; arrow-go's file and
// stream are written here. Garbage is refused with a clear error and writes nothing.
func TestDatasetImportFiles(t *testing.T) {
	dir := t.TempDir()
	goFile, goStream := filepath.Join(dir, "go.arrow"), filepath.Join(dir, "go.arrows")
	writeArrow(t, goFile, 0, 5, true)
	writeArrow(t, goStream, 0, 5, false)
	ds := func(args ...string) (string, string, int) {
		var out, errOut bytes.Buffer
		code := run(append([]string{"dataset"}, args...), &out, &errOut)
		return out.String(), errOut.String(), code
	}
	for _, tc := range []struct{ from, names string }{
		{"testdata/js-plain.arrow", `"a" "b" null "d" "e"`},
		{"testdata/js-dict.arrow", `"a" "b" "c" "a" "b"`},
		{"testdata/pyarrow.arrow", `"a" "b" null "d" "e"`},
		{"testdata/pyarrow-zstd.feather", `"a" "b" null "d" "e"`},
		{goFile, `"n" "nx" "nxx" "n" "nx"`},
		{goStream, `"n" "nx" "nxx" "n" "nx"`},
	} {
		uri := filepath.Join(dir, filepath.Base(tc.from)+".lance")
		out, errOut, code := ds("import", "--mode", "create", "--from", tc.from, uri)
		if !assert.Check(t, code == 0, "%s: %s", tc.from, errOut) {
			continue
		}
		assert.Check(t, out == "create: version 1, 5 rows in 1 fragments\n", "%s: %s", tc.from, out)
		out, _, code = ds("scan", uri)
		assert.Check(t, code == 0)
		var names []string
		for line := range strings.SplitSeq(strings.TrimSpace(out), "\n") {
			var row struct {
				ID   int64   `json:"id"`
				Name *string `json:"name"`
			}
			assert.NilError(t, json.Unmarshal([]byte(line), &row))
			assert.Check(t, row.ID == int64(len(names)), "%s: %s", tc.from, line)
			if row.Name == nil {
				names = append(names, "null")
			} else {
				names = append(names, strconv.Quote(*row.Name))
			}
		}
		assert.Check(t, strings.Join(names, " ") == tc.names, "%s: %s", tc.from, names)
	}

	// Garbage, a file cut short, a file with the magic and nothing else: refused, nothing written.
	uri := filepath.Join(dir, "g.lance")
	_, _, code := ds("import", "--mode", "create", "--from", goStream, uri)
	assert.Equal(t, code, 0)
	js, err := os.ReadFile("testdata/js-plain.arrow")
	assert.NilError(t, err)
	for name, body := range map[string][]byte{
		"garbage":        []byte(strings.Repeat("not arrow at all ", 64)),
		"magic only":     []byte("ARROW1\x00\x00"),
		"cut short":      js[:len(js)-20],
		"no end magic":   append(bytes.Clone(js[:len(js)-6]), "ARROW2"...),
		"empty":          nil,
		"footer garbage": append(append(bytes.Clone(js[:len(js)-10-64]), bytes.Repeat([]byte{0xff}, 64)...), js[len(js)-10:]...),
	} {
		bad := filepath.Join(dir, "bad")
		assert.NilError(t, os.WriteFile(bad, body, 0o644))
		_, errOut, code := ds("import", "--from", bad, uri)
		assert.Check(t, code == 1, "%s: exit %d", name, code)
		first, _, _ := strings.Cut(errOut, "\n")
		assert.Check(t, strings.Contains(first, "not a valid Arrow IPC stream") || strings.Contains(first, "Arrow"), "%s: %s", name, errOut)
		t.Logf("%s: %s", name, first)
	}
	out, _, code := ds("scan", "--columns", "id", uri)
	assert.Equal(t, code, 0)
	assert.Equal(t, strings.Count(out, "\n"), 5, "the refused imports wrote nothing")

	// A file on a pipe (no footer to seek to): a file with its schema in front reads as the stream
	// before its footer; Arrow JS's is refused naming what to do instead.
	pipe := func(path string) (string, int) {
		body, err := os.ReadFile(path)
		assert.NilError(t, err)
		r, w, err := os.Pipe()
		assert.NilError(t, err)
		go func() { _, _ = w.Write(body); w.Close() }()
		defer r.Close()
		var out, errOut bytes.Buffer
		code := run([]string{"dataset", "import", "--from", "/dev/fd/" + strconv.Itoa(int(r.Fd())), uri}, &out, &errOut)
		return errOut.String(), code
	}
	errOut, code := pipe("testdata/pyarrow.arrow")
	assert.Equal(t, code, 0, errOut)
	errOut, code = pipe("testdata/js-plain.arrow")
	assert.Equal(t, code, 1)
	assert.Assert(t, strings.Contains(errOut, "its schema is only in its footer, which a pipe cannot seek to"), errOut)
}
