package lancefile

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"testing"

	"github.com/lancecat/lancecat/internal/testenv"

	"github.com/apache/arrow-go/v18/arrow"
	"gotest.tools/v3/assert"

	"github.com/lancecat/lancecat/lance/pb/enc21pb"
)

// writeFile writes recs with opts and returns the file bytes.
func writeFile(t testing.TB, schema *arrow.Schema, opts WriterOptions, recs ...arrow.RecordBatch) []byte {
	t.Helper()
	var buf bytes.Buffer
	w, err := NewWriter(&buf, schema, opts)
	assert.NilError(t, err)
	for _, rec := range recs {
		assert.NilError(t, w.Write(rec))
	}
	assert.NilError(t, w.Close())
	assert.Equal(t, int(w.Size()), buf.Len())
	return buf.Bytes()
}

// openLocal opens the data file at path (closed when t ends).
func openLocal(t testing.TB, path string) *Reader {
	t.Helper()
	lf, err := OpenLocalFile(path)
	assert.NilError(t, err)
	t.Cleanup(func() { lf.Close() })
	r, err := Open(context.Background(), lf)
	assert.NilError(t, err)
	return r
}

// openEnvFile opens the data file the environment variable env names (what:
// which file it should be) for a development aid, and skips t without one.
func openEnvFile(t testing.TB, env, what string) *Reader {
	t.Helper()
	path := os.Getenv(env)
	if path == "" {
		t.Skipf("set %s to %s", env, what)
	}
	return openLocal(t, path)
}

func openBytes(t testing.TB, b []byte) *Reader {
	t.Helper()
	r, err := Open(context.Background(), NewReaderAtSource(bytes.NewReader(b), int64(len(b))))
	assert.NilError(t, err)
	return r
}

// assertSameRows compares rows of got with rows [off, off+n) of the
// concatenation of want, value by value (floats by bit pattern).
func assertSameRows(t *testing.T, got arrow.RecordBatch, want []arrow.RecordBatch, off int) {
	t.Helper()
	for c, f := range got.Schema().Fields() {
		col := got.Column(c)
		row := 0
		for _, w := range want {
			idx := w.Schema().FieldIndices(f.Name)
			assert.Assert(t, len(idx) == 1, "column %q", f.Name)
			wc := w.Column(idx[0])
			for i := 0; i < wc.Len(); i, row = i+1, row+1 {
				if row < off || row >= off+col.Len() {
					continue
				}
				a, _ := json.Marshal(jsonValue(col, row-off))
				b, _ := json.Marshal(jsonValue(wc, i))
				if string(a) != string(b) {
					t.Fatalf("column %q row %d: got %s, want %s", f.Name, row, a, b)
				}
			}
		}
	}
}

func TestWriterRoundTrip(t *testing.T) {
	for _, tc := range []struct {
		name  string
		opts  WriterOptions
		sizes []int
		nullP float64
	}{
		{"tiny", WriterOptions{}, []int{20}, 0.1},
		{"one-batch", WriterOptions{}, []int{5000}, 0.1},
		{"no-nulls", WriterOptions{}, []int{3000}, 0},
		{"many-nulls", WriterOptions{}, []int{3000}, 0.7},
		{"multi-page", WriterOptions{PageBytes: 16 << 10}, []int{3000, 1, 1500, 37}, 0.1},
		{"plain", WriterOptions{NoCompression: true, PageBytes: 64 << 10}, []int{2500, 2500}, 0.2},
		// File format 2.2: the same pages in the large-chunk grammar.
		{"v2.2", WriterOptions{Version: V2_2}, []int{5000}, 0.1},
		{"v2.2-multi-page", WriterOptions{Version: V2_2, PageBytes: 16 << 10}, []int{3000, 1, 1500, 37}, 0.3},
		{"v2.2-plain", WriterOptions{Version: V2_2, NoCompression: true, PageBytes: 64 << 10}, []int{2500, 2500}, 0.2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			mem := testenv.CheckedAllocator(t)
			schema := AllTypesSchema()
			var recs []arrow.RecordBatch
			start := 0
			for i, n := range tc.sizes {
				recs = append(recs, RandomRecord(mem, schema, uint64(i+1), start, n, tc.nullP))
				start += n
			}
			defer func() {
				for _, r := range recs {
					r.Release()
				}
			}()
			data := writeFile(t, schema, tc.opts, recs...)
			r := openBytes(t, data)
			assert.Equal(t, int(r.NumRows()), start)
			want := tc.opts.Version
			if want == (Version{}) {
				want = V2_1
			}
			assert.Equal(t, r.Version(), want)
			got, err := r.Read(context.Background(), mem, ReadOptions{Limit: -1})
			assert.NilError(t, err)
			defer got.Release()
			assert.Equal(t, got.NumCols(), int64(len(schema.Fields())))
			assertSameRows(t, got, recs, 0)
			// Windows across chunk and page boundaries.
			for _, w := range [][2]int64{{0, 1}, {int64(start) / 3, 1000}, {int64(start) - 1, 1}, {1023, 3}, {int64(start), 0}} {
				off := min(w[0], int64(start))
				part, err := r.Read(context.Background(), mem, ReadOptions{Columns: []string{"id", "li", "lst", "ll", "v128", "long_s", "st"}, Offset: off, Limit: w[1]})
				assert.NilError(t, err)
				assertSameRows(t, part, recs, int(off))
				part.Release()
			}
			if tc.opts.PageBytes > 0 {
				pages := 0
				for _, c := range r.columns {
					pages = max(pages, len(c.GetPages()))
				}
				assert.Assert(t, pages > 1, "expected several pages per column")
			}
		})
	}
}

// TestWriterLayouts checks the layout each kind of column gets.
func TestWriterLayouts(t *testing.T) {
	mem := testenv.CheckedAllocator(t)
	schema := AllTypesSchema()
	rec := RandomRecord(mem, schema, 1, 0, 4000, 0.1)
	defer rec.Release()
	r := openBytes(t, writeFile(t, schema, WriterOptions{}, rec))
	layout := map[string]string{}
	for _, n := range r.roots {
		if len(n.children) > 0 {
			continue
		}
		pl, err := pageLayout(r.columns[n.column].GetPages()[0])
		assert.NilError(t, err)
		switch l := pl.GetLayout().(type) {
		case *enc21pb.PageLayout_MiniBlockLayout:
			layout[n.arrow.Name] = "mini-block"
			if l.MiniBlockLayout.GetValueCompression().GetInlineBitpacking() != nil {
				layout[n.arrow.Name] = "mini-block/bitpacked"
			}
			if l.MiniBlockLayout.GetValueCompression().GetRle() != nil {
				layout[n.arrow.Name] = "mini-block/rle"
			}
		case *enc21pb.PageLayout_FullZipLayout:
			layout[n.arrow.Name] = "full-zip"
		case *enc21pb.PageLayout_AllNullLayout:
			layout[n.arrow.Name] = "all-null"
		}
	}
	for name, want := range map[string]string{
		"id": "mini-block/bitpacked", "f32": "mini-block", "s": "mini-block",
		"long_s": "full-zip", "v8": "mini-block", "v128": "full-zip", "allnull": "all-null", "const": "mini-block/rle",
	} {
		assert.Equal(t, layout[name], want, name)
	}
}

// TestWriterHugeValues: values over 32 KiB are zstd-compressed per value.
func TestWriterHugeValues(t *testing.T) {
	mem := testenv.CheckedAllocator(t)
	schema := arrow.NewSchema([]arrow.Field{{Name: "id", Type: arrow.PrimitiveTypes.Int64}, nf("huge", arrow.BinaryTypes.LargeBinary)}, nil)
	recs := []arrow.RecordBatch{RandomRecord(mem, schema, 1, 0, 30, 0.2), RandomRecord(mem, schema, 2, 30, 40, 0.2)}
	defer recs[0].Release()
	defer recs[1].Release()
	data := writeFile(t, schema, WriterOptions{PageBytes: 1 << 20}, recs...)
	raw := 0
	for _, rec := range recs {
		raw += estimateBytes(rec.Column(1))
	}
	assert.Assert(t, len(data) < raw/10, "zstd should shrink %d bytes of repetitive values, file is %d", raw, len(data))
	r := openBytes(t, data)
	got, err := r.Read(context.Background(), mem, ReadOptions{Limit: -1})
	assert.NilError(t, err)
	defer got.Release()
	assertSameRows(t, got, recs, 0)
}

func TestFastLanesPackRoundTrip(t *testing.T) {
	for _, w := range []int{1, 2, 4, 8} {
		for _, width := range []int{0, 1, 3, 7, 8, 13, 31, 32, 63, 64} {
			if width > 8*w {
				continue
			}
			vals := make([]byte, 1000*w)
			for i := 0; i < 1000; i++ {
				v := uint64(i*2654435761) ^ uint64(i)<<7
				if width < 64 {
					v &= 1<<width - 1
				}
				putUint(vals, i, 8*w, v)
			}
			packed := packChunk(nil, vals, w)
			out, err := decodeInlineBitpacked(packed, 8*w, 1000)
			assert.NilError(t, err)
			assert.DeepEqual(t, out, vals)
		}
	}
}

// longRun: more than 100,000 nulls, null lists and empty lists in a row.
const longRun = 150_000

// TestWriterLongLevelRuns: 150,000 nulls, null lists and empty lists in a
// row. Their levels are compressed (bit-packed; run-length in 2.2) and a
// page whose run outgrows one chunk's u16 level count is split at row
// boundaries, as Lance does; before, more than about 8,000 in a row failed
// as unsupported.
func TestWriterLongLevelRuns(t *testing.T) {
	for _, tc := range []struct {
		name string
		opts WriterOptions
	}{
		{"v2.1", WriterOptions{}},
		{"v2.2", WriterOptions{Version: V2_2}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			mem := testenv.CheckedAllocator(t)
			rec := LongRunsRecord(mem, longRun)
			defer rec.Release()
			data := writeFile(t, LongRunsSchema(), tc.opts, rec)
			r := openBytes(t, data)
			got, err := r.Read(context.Background(), mem, ReadOptions{Limit: -1})
			assert.NilError(t, err)
			defer got.Release()
			assertSameRows(t, got, []arrow.RecordBatch{rec}, 0)
			// The low-cardinality strings are dictionary pages: 100,020
			// values of 4–5 bytes in well under 100 KiB.
			lc := r.columns[len(r.columns)-1]
			var size uint64
			for _, p := range lc.GetPages() {
				pl, err := pageLayout(p)
				assert.NilError(t, err)
				assert.Assert(t, pl.GetMiniBlockLayout().GetDictionary() != nil, "page of %q is not a dictionary page", "level")
				for _, s := range p.GetBufferSizes() {
					size += s
				}
			}
			assert.Assert(t, size < 100<<10, "level column: %d bytes", size)
			t.Logf("%s: %d bytes", tc.name, len(data))

			// Only the run: all-null and all-empty pages (2.2 compresses
			// their levels).
			run := rec.NewSlice(10, 10+longRun)
			defer run.Release()
			data = writeFile(t, LongRunsSchema(), tc.opts, run)
			got2, err := openBytes(t, data).Read(context.Background(), mem, ReadOptions{Limit: -1})
			assert.NilError(t, err)
			defer got2.Release()
			assertSameRows(t, got2, []arrow.RecordBatch{run}, 0)
			t.Logf("%s, run only: %d bytes", tc.name, len(data))
		})
	}
}
