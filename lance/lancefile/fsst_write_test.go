package lancefile

import (
	"context"
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/lancecat/lancecat/internal/testenv"

	"github.com/apache/arrow-go/v18/arrow"
	"gotest.tools/v3/assert"
)

// fsstRoundTrip encodes vals with a trained table and decodes them with
// the reader's decoder (the path the SDK's decoder mirrors).
func fsstRoundTrip(t testing.TB, vals [][]byte) (table, coded []byte) {
	t.Helper()
	var data []byte
	offs := []uint64{0}
	for _, v := range vals {
		data = append(data, v...)
		offs = append(offs, uint64(len(data)))
	}
	table, coded, codedOffs := fsstCompressValues(data, offs, len(vals))
	if len(table) != fsstTableBytes {
		t.Fatalf("table of %d bytes, Lance requires %d", len(table), fsstTableBytes)
	}
	in := &values{kind: kindVariable, n: len(vals), offsets: codedOffs, data: coded}
	out, err := fsstDecodeValues(table, in)
	if err != nil {
		t.Fatal(err)
	}
	for i, v := range vals {
		if got := out.value(i); string(got) != string(v) {
			t.Fatalf("value %d: decoded %q, wrote %q", i, got, v)
		}
	}
	// The mini-block path (decodeChunk: one pass over a chunk's codes
	// after its own offsets) decodes the same values, appended after
	// what the page output already holds.
	ft, err := parseFSSTTable(table)
	if err != nil {
		t.Fatal(err)
	}
	if !ft.raw {
		for _, w := range []int{4, 8} {
			chunk := fsstChunk(w, codedOffs, coded)
			pre := &values{kind: kindVariable, offsets: []uint64{0, 3}, data: []byte("pre"), n: 1}
			if err := ft.decodeChunk(pre, chunk, w, len(vals)); err != nil {
				t.Fatal(err)
			}
			for i, v := range vals {
				if got := pre.value(i + 1); string(got) != string(v) {
					t.Fatalf("chunk (w=%d) value %d: decoded %q, wrote %q", w, i, got, v)
				}
			}
		}
	}
	return table, coded
}

// fsstChunk lays out coded values as a mini-block FSST chunk: offsets of
// w bytes relative to the chunk (after the offsets themselves), then the codes.
func fsstChunk(w int, offs []uint64, coded []byte) []byte {
	head := uint64(w * len(offs))
	var chunk []byte
	for _, o := range offs {
		if w == 4 {
			chunk = binary.LittleEndian.AppendUint32(chunk, uint32(head+o))
		} else {
			chunk = binary.LittleEndian.AppendUint64(chunk, head+o)
		}
	}
	return append(chunk, coded...)
}

// TestFSSTDecodeChunkCorrupt: a chunk whose codes or offsets are wrong is
// ErrCorrupt from decodeChunk, as from the per-value decoder, never a panic.
func TestFSSTDecodeChunkCorrupt(t *testing.T) {
	table, _, _ := fsstCompressValues([]byte("abcabcabcabc"), []uint64{0, 6, 12}, 2)
	ft, err := parseFSSTTable(table)
	assert.NilError(t, err)
	for _, tc := range []struct {
		name  string
		offs  []uint64
		codes []byte
	}{
		{"escape at end of value", []uint64{0, 1, 2}, []byte{fsstEscape, 'a'}},
		{"escape at end of chunk", []uint64{0, 2, 3}, []byte{fsstEscape, 'a', fsstEscape}},
		{"code past the table", []uint64{0, 1}, []byte{254}},
		{"offsets descending", []uint64{0, 2, 1}, []byte{fsstEscape, 'a'}},
		{"offset past the chunk", []uint64{0, 9}, []byte{fsstEscape, 'a'}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out := &values{kind: kindVariable, offsets: []uint64{0}}
			err := ft.decodeChunk(out, fsstChunk(4, tc.offs, tc.codes), 4, len(tc.offs)-1)
			assert.ErrorIs(t, err, ErrCorrupt)
		})
	}
}

// TestFSSTCodecRoundTrip: every kind of input decodes to itself, and text
// shrinks.
func TestFSSTCodecRoundTrip(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	words := func(n int) [][]byte {
		out := make([][]byte, n)
		for i := range out {
			out[i] = []byte(fsstWords[r.IntN(len(fsstWords))] + strings.Repeat("x", r.IntN(3)) + fsstWords[r.IntN(len(fsstWords))])
		}
		return out
	}
	random := func(n, maxLen int) [][]byte {
		out := make([][]byte, n)
		for i := range out {
			out[i] = make([]byte, r.IntN(maxLen+1))
			for k := range out[i] {
				out[i][k] = byte(r.Uint32())
			}
		}
		return out
	}
	for _, tc := range []struct {
		name      string
		vals      [][]byte
		maxRatio  float64 // coded bytes / input bytes at most (0: no bound)
		wantCoded bool    // symbols are trained (tiny inputs get none)
	}{
		{"words", words(20_000), 0.6, true},
		{"random-bytes", random(3000, 40), 0, true},
		{"all-0xff", [][]byte{[]byte(strings.Repeat("\xff", 5000)), {0xff}, {}}, 0, true},
		{"empty-values", make([][]byte, 100), 0, false},
		{"one-byte-values", [][]byte{{'a'}, {'b'}, {0}, {0xff}}, 0, false},
		{"long-values", [][]byte{[]byte(strings.Repeat("lance catalog ", 3000)), []byte("tail")}, 0.2, true},
		{"unicode", [][]byte{[]byte("Grüße 😀 日本語 €"), []byte("ß"), []byte("😀😀😀😀😀😀😀😀😀")}, 0, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			table, coded := fsstRoundTrip(t, tc.vals)
			total := 0
			for _, v := range tc.vals {
				total += len(v)
			}
			if tc.maxRatio > 0 {
				assert.Assert(t, float64(len(coded)) <= tc.maxRatio*float64(total), "%d bytes coded to %d", total, len(coded))
			}
			if tc.wantCoded {
				assert.Assert(t, table[0] > 0, "no symbols trained")
			}
		})
	}
}

// FuzzFSSTRoundTrip: any bytes, cut into values anywhere, decode to
// themselves through a table trained on them.
func FuzzFSSTRoundTrip(f *testing.F) {
	f.Add([]byte("hello world hello lance"), []byte{3, 0, 7})
	f.Add([]byte("\xff\xff\xff\x00\x00abcabcabc"), []byte{1})
	f.Add([]byte{}, []byte{})
	f.Fuzz(func(t *testing.T, data, cuts []byte) {
		var vals [][]byte
		for _, c := range cuts {
			k := min(int(c), len(data))
			vals = append(vals, data[:k])
			data = data[k:]
		}
		vals = append(vals, data)
		fsstRoundTrip(t, vals)
	})
}

// fsstColumns names the columns of a file whose first page is FSST-coded,
// with the layout it is in.
func fsstColumns(t *testing.T, r *Reader) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, n := range r.roots {
		var leaves []*field
		var walk func(n *field)
		walk = func(n *field) {
			if len(n.children) == 0 {
				leaves = append(leaves, n)
			}
			for _, c := range n.children {
				walk(c)
			}
		}
		walk(n)
		for _, leaf := range leaves {
			for _, p := range r.columns[leaf.column].GetPages() {
				pl, err := pageLayout(p)
				assert.NilError(t, err)
				if pl.GetMiniBlockLayout().GetValueCompression().GetFsst() != nil {
					out[n.arrow.Name] = "mini-block"
				}
				if pl.GetFullZipLayout().GetValueCompression().GetFsst() != nil {
					out[n.arrow.Name] = "full-zip"
				}
			}
		}
	}
	return out
}

// TestWriterFSSTPages: string pages are FSST-coded as Lance codes them
// (mini-block, and full-zip for long values) and read back value for
// value, in both file formats and across page boundaries.
func TestWriterFSSTPages(t *testing.T) {
	for _, tc := range []struct {
		name string
		opts WriterOptions
	}{
		{"v2.1", WriterOptions{}},
		{"v2.2", WriterOptions{Version: V2_2}},
		{"v2.1-pages", WriterOptions{PageBytes: 96 << 10}},
		{"v2.2-pages", WriterOptions{Version: V2_2, PageBytes: 96 << 10}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			mem := testenv.CheckedAllocator(t)
			recs := []arrow.RecordBatch{FSSTRecord(mem, 1, 0, 3000), FSSTRecord(mem, 2, 3000, 1500)}
			defer recs[0].Release()
			defer recs[1].Release()
			data := writeFile(t, FSSTSchema(), tc.opts, recs...)
			plainOpts := tc.opts
			plainOpts.NoCompression = true
			plain := writeFile(t, FSSTSchema(), plainOpts, recs...)
			t.Logf("%d bytes, %d without compression", len(data), len(plain))
			assert.Assert(t, len(data) < len(plain)*3/4)
			r := openBytes(t, data)
			assert.DeepEqual(t, fsstColumns(t, r), map[string]string{
				"uni": "mini-block", "label": "mini-block", "long": "full-zip", "bin": "mini-block", "lstr": "mini-block", "tags": "mini-block",
			})
			got, err := r.Read(context.Background(), mem, ReadOptions{Limit: -1})
			assert.NilError(t, err)
			defer got.Release()
			assertSameRows(t, got, recs, 0)
			// Windows starting inside chunks and pages.
			for _, w := range [][2]int64{{1, 3}, {2999, 2}, {1234, 1000}, {4499, 1}} {
				part, err := r.Read(context.Background(), mem, ReadOptions{Offset: w[0], Limit: w[1]})
				assert.NilError(t, err)
				assertSameRows(t, part, recs, int(w[0]))
				part.Release()
			}
		})
	}
}

// TestWriterFSSTThreshold: pages below Lance's FSST thresholds stay plain.
func TestWriterFSSTThreshold(t *testing.T) {
	mem := testenv.CheckedAllocator(t)
	rec := FSSTRecord(mem, 1, 0, 200)
	defer rec.Release()
	r := openBytes(t, writeFile(t, FSSTSchema(), WriterOptions{}, rec))
	got := fsstColumns(t, r)
	// Only the long values reach 32 KiB in 200 rows.
	assert.DeepEqual(t, got, map[string]string{"long": "full-zip"})
}

// TestWriterRLEPages: fixed-width pages with runs are run-length encoded
// as Lance encodes them and read back value for value, in both formats,
// across chunk and page boundaries.
func TestWriterRLEPages(t *testing.T) {
	for _, tc := range []struct {
		name string
		opts WriterOptions
	}{
		{"v2.1", WriterOptions{}},
		{"v2.2-pages", WriterOptions{Version: V2_2, PageBytes: 32 << 10}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			mem := testenv.CheckedAllocator(t)
			recs := []arrow.RecordBatch{RLERecord(mem, 0, 20_000), RLERecord(mem, 20_000, 777)}
			defer recs[0].Release()
			defer recs[1].Release()
			data := writeFile(t, RLESchema(), tc.opts, recs...)
			r := openBytes(t, data)
			for _, n := range r.roots {
				for _, p := range r.columns[n.column].GetPages() {
					pl, err := pageLayout(p)
					assert.NilError(t, err)
					isRLE := pl.GetMiniBlockLayout().GetValueCompression().GetRle() != nil
					assert.Equal(t, isRLE, n.arrow.Name != "id", n.arrow.Name)
				}
			}
			got, err := r.Read(context.Background(), mem, ReadOptions{Limit: -1})
			assert.NilError(t, err)
			defer got.Release()
			assertSameRows(t, got, recs, 0)
			for _, w := range [][2]int64{{1, 3}, {4095, 2}, {12_345, 4000}, {20_776, 1}} {
				part, err := r.Read(context.Background(), mem, ReadOptions{Offset: w[0], Limit: w[1]})
				assert.NilError(t, err)
				assertSameRows(t, part, recs, int(w[0]))
				part.Release()
			}
		})
	}
}

// TestWriterFixedDictionaryPages: in 2.2, low-cardinality 64- and 128-bit
// columns become dictionary pages as Lance writes them (inline or
// out-of-line bit-packed dictionaries, plain where packing cannot save)
// and read back value for value; 2.1 keeps them plain.
func TestWriterFixedDictionaryPages(t *testing.T) {
	mem := testenv.CheckedAllocator(t)
	recs := []arrow.RecordBatch{FixedDictRecord(mem, 0, 10_000), FixedDictRecord(mem, 10_000, 333)}
	defer recs[0].Release()
	defer recs[1].Release()
	for _, v := range []Version{V2_1, V2_2} {
		t.Run(v.String(), func(t *testing.T) {
			r := openBytes(t, writeFile(t, FixedDictSchema(), WriterOptions{Version: v}, recs...))
			dicts := map[string]string{}
			for _, n := range r.roots {
				pl, err := pageLayout(r.columns[n.column].GetPages()[0])
				assert.NilError(t, err)
				if d := pl.GetMiniBlockLayout().GetDictionary(); d != nil {
					dicts[n.arrow.Name] = fmt.Sprintf("%T", d.GetCompression())
				}
			}
			want := map[string]string{}
			if v == V2_2 {
				want = map[string]string{
					"small": "*enc21pb.CompressiveEncoding_InlineBitpacking",
					"big":   "*enc21pb.CompressiveEncoding_OutOfLineBitpacking",
					"neg":   "*enc21pb.CompressiveEncoding_Flat",
					"f":     "*enc21pb.CompressiveEncoding_Flat",
					"dec":   "*enc21pb.CompressiveEncoding_Flat",
					"ts":    "*enc21pb.CompressiveEncoding_Flat",
				}
			}
			assert.DeepEqual(t, dicts, want)
			got, err := r.Read(context.Background(), mem, ReadOptions{Limit: -1})
			assert.NilError(t, err)
			defer got.Release()
			assertSameRows(t, got, recs, 0)
			part, err := r.Read(context.Background(), mem, ReadOptions{Offset: 4095, Limit: 3000})
			assert.NilError(t, err)
			defer part.Release()
			assertSameRows(t, part, recs, 4095)
		})
	}
}
