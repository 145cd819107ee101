package index

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"testing"

	"github.com/RoaringBitmap/roaring/v2/roaring64"
	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"
)

// inexactRow is one row of the inexact sample: its address, an int64 n
// (null when nil), a float f (NaN some rows) and a string s.
type inexactRow struct {
	addr uint64
	n    *int64
	f    float64
	s    *string
}

// inexactSample: 3 fragments of 70 rows, with nulls, NaNs and a gap of
// offsets (rows deleted before the build).
func inexactSample() []inexactRow {
	words := []string{"Green apple", "red", "blue sky", "Magenta", "café au lait", "xy"}
	var rows []inexactRow
	for frag := uint64(0); frag < 3; frag++ {
		for off := uint64(0); off < 80; off++ {
			if off%9 == 4 {
				continue // deleted
			}
			i := int64(frag*80 + off)
			r := inexactRow{addr: frag<<32 | off, f: float64(i) / 2}
			if i%13 != 5 {
				v := i * 3 % 101
				r.n = &v
			}
			if i%17 == 2 {
				r.f = math.NaN()
			}
			if i%11 != 7 {
				s := words[i%int64(len(words))]
				r.s = &s
			}
			rows = append(rows, r)
		}
	}
	return rows
}

// sampleArrays are the columns of rows, released when t ends.
func sampleArrays(t testing.TB, rows []inexactRow) (n, f, s arrow.Array, addrs []uint64) {
	mem := memory.DefaultAllocator
	nb, fb, sb := array.NewInt64Builder(mem), array.NewFloat64Builder(mem), array.NewStringBuilder(mem)
	defer nb.Release()
	defer fb.Release()
	defer sb.Release()
	for _, r := range rows {
		if r.n == nil {
			nb.AppendNull()
		} else {
			nb.Append(*r.n)
		}
		fb.Append(r.f)
		if r.s == nil {
			sb.AppendNull()
		} else {
			sb.Append(*r.s)
		}
		addrs = append(addrs, r.addr)
	}
	n, f, s = nb.NewArray(), fb.NewArray(), sb.NewArray()
	t.Cleanup(n.Release)
	t.Cleanup(f.Release)
	t.Cleanup(s.Release)
	return n, f, s, addrs
}

func buildInexact(t testing.TB, typ Type, values arrow.Array, addrs []uint64, opts BuildOptions) memStore {
	t.Helper()
	b, err := NewBuilder(typ, values.DataType(), opts)
	assert.NilError(t, err)
	// two batches, as a scan hands them
	half := len(addrs) / 2
	for _, part := range [][2]int{{0, half}, {half, len(addrs)}} {
		sl := array.NewSlice(values, int64(part[0]), int64(part[1]))
		assert.NilError(t, b.Add(sl, addrs[part[0]:part[1]]))
		sl.Release()
	}
	st := memStore{}
	_, err = b.Finish(context.Background(), st)
	assert.NilError(t, err)
	return st
}

type inexactCase struct {
	col  string
	pred Predicate
	want func(r inexactRow) bool
}

var inexactCases = []inexactCase{
	{"n", Predicate{Op: Equals, Values: []any{int64(42)}}, func(r inexactRow) bool { return r.n != nil && *r.n == 42 }},
	{"n", Predicate{Op: IsIn, Values: []any{int64(1), int64(99), int64(1000)}}, func(r inexactRow) bool { return r.n != nil && (*r.n == 1 || *r.n == 99) }},
	{"n", Predicate{Op: Range, Lower: &Bound{Value: int64(10)}, Upper: &Bound{Value: int64(20), Inclusive: true}}, func(r inexactRow) bool { return r.n != nil && *r.n > 10 && *r.n <= 20 }},
	{"n", Predicate{Op: IsNull}, func(r inexactRow) bool { return r.n == nil }},
	{"f", Predicate{Op: Range, Upper: &Bound{Value: 7.0}}, func(r inexactRow) bool { return r.f < 7 }},
	{"f", Predicate{Op: Equals, Values: []any{math.NaN()}}, func(r inexactRow) bool { return math.IsNaN(r.f) }},
	{"f", Predicate{Op: Equals, Values: []any{60.5}}, func(r inexactRow) bool { return r.f == 60.5 }},
	{"s", Predicate{Op: Equals, Values: []any{"blue sky"}}, func(r inexactRow) bool { return r.s != nil && *r.s == "blue sky" }},
	{"s", Predicate{Op: IsNull}, func(r inexactRow) bool { return r.s == nil }},
	{"s", Predicate{Op: Contains, Values: []any{"APPL"}}, func(r inexactRow) bool {
		return r.s != nil && bytes.Contains(bytes.ToLower([]byte(*r.s)), []byte("appl"))
	}},
	{"s", Predicate{Op: Contains, Values: []any{"au l", "caf"}}, func(r inexactRow) bool {
		return r.s != nil && bytes.Contains([]byte(*r.s), []byte("au l")) && bytes.Contains([]byte(*r.s), []byte("caf"))
	}},
	{"s", Predicate{Op: Contains, Values: []any{"zzz"}}, func(inexactRow) bool { return false }},
}

// supports: does type typ answer c (the planner's choices)?
func supports(typ Type, c inexactCase) bool {
	switch typ {
	case ZoneMap:
		return c.pred.Op != Contains
	case BloomFilter:
		return c.pred.Op == Equals || c.pred.Op == IsIn || c.pred.Op == IsNull
	case NGram:
		return c.col == "s" && (c.pred.Op == Contains || c.pred.Op == IsNull)
	}
	return false
}

// checkSuperset: every case typ answers holds every matching row of rows.
func checkSuperset(t *testing.T, typ Type, col string, st memStore, rows []inexactRow) {
	t.Helper()
	r, err := Open(context.Background(), typ, st)
	assert.NilError(t, err)
	for _, c := range inexactCases {
		if c.col != col || !supports(typ, c) {
			continue
		}
		got, err := r.Search(context.Background(), c.pred)
		assert.NilError(t, err, "%s %+v", typ, c.pred)
		want := 0
		for _, row := range rows {
			if c.want(row) {
				want++
				assert.Check(t, got.Contains(row.addr), "%s %s %+v misses row %x", typ, col, c.pred, row.addr)
			}
		}
		if want == 0 && c.pred.Op == Contains {
			assert.Check(t, got.IsEmpty(), "%s %+v: a trigram no row has", typ, c.pred)
		}
	}
}

// TestInexactIndicesSuperset: the zoned and n-gram indices answer a
// superset of the matching rows (never missing one) and prune.
func TestInexactIndicesSuperset(t *testing.T) {
	rows := inexactSample()
	n, f, s, addrs := sampleArrays(t, rows)
	cols := map[string]arrow.Array{"n": n, "f": f, "s": s}
	for _, typ := range []Type{ZoneMap, BloomFilter, NGram} {
		for col, vals := range cols {
			if typ == NGram && col != "s" {
				continue
			}
			t.Run(fmt.Sprint(typ, "/", col), func(t *testing.T) {
				st := buildInexact(t, typ, vals, addrs, BuildOptions{RowsPerZone: 16})
				checkSuperset(t, typ, col, st, rows)
			})
		}
	}
	// Pruning: a zone map of 16-row zones over a column in address order.
	st := buildInexact(t, ZoneMap, f, addrs, BuildOptions{RowsPerZone: 16})
	r, err := Open(context.Background(), ZoneMap, st)
	assert.NilError(t, err)
	got, err := r.Search(context.Background(), Predicate{Op: Range, Upper: &Bound{Value: 7.0}})
	assert.NilError(t, err)
	assert.Check(t, got.GetCardinality() <= 32, "%d rows for f < 7", got.GetCardinality())
}

// TestNGramTokensMatchSDK pins the trigram tokens against the tokens
// column pylance 14.0.2 wrote for the values "<colour> apple".
func TestNGramTokensMatchSDK(t *testing.T) {
	var got []uint32
	for _, c := range []string{"red", "green", "blue", "cyan", "magenta"} {
		got = ngramTokens(c+" apple", got)
	}
	got = append(got, 0) // the null rows' token
	slices.Sort(got)
	got = slices.Compact(got)
	sdk := []uint32{0, 15703, 16047, 17273, 19103, 21114, 21453, 23852, 24324, 31280, 31911, 33977, 36423, 36578, 38901, 38902, 48346}
	assert.Check(t, is.DeepEqual(got, sdk))
	// A needle's ASCII runs only; case folded.
	assert.Check(t, is.DeepEqual(needleTokens("PLE"), ngramTokens("ple", nil)))
	assert.Check(t, is.Len(needleTokens("é!ab"), 0))
}

// TestInexactRebuild: remapping (compaction moved and dropped rows) and
// updating (new rows) keep the superset property in the new addresses.
func TestInexactRebuild(t *testing.T) {
	rows := inexactSample()
	n, f, s, addrs := sampleArrays(t, rows)
	// Compaction: fragments 0 and 1 become fragment 7, every 5th row dropped.
	moved := map[uint64]uint64{}
	var kept []inexactRow
	next := uint64(7) << 32
	for i, r := range rows {
		if r.addr>>32 == 2 {
			kept = append(kept, r)
			continue
		}
		if i%5 == 0 {
			continue
		}
		moved[r.addr] = next
		r.addr = next
		next++
		kept = append(kept, r)
	}
	m := func(id uint64) (uint64, bool) {
		if id>>32 == 2 {
			return id, true
		}
		n, ok := moved[id]
		return n, ok
	}
	for _, tc := range []struct {
		typ  Type
		col  string
		vals arrow.Array
	}{{ZoneMap, "n", n}, {ZoneMap, "f", f}, {BloomFilter, "n", n}, {BloomFilter, "s", s}, {NGram, "s", s}} {
		t.Run(fmt.Sprint(tc.typ, "/", tc.col), func(t *testing.T) {
			ctx := context.Background()
			old := buildInexact(t, tc.typ, tc.vals, addrs, BuildOptions{RowsPerZone: 16})
			info, err := InspectScalar(ctx, tc.typ, old)
			assert.NilError(t, err)
			rb, err := NewScalarRebuild(tc.typ, info.ValueType, BuildOptions{})
			assert.NilError(t, err)
			assert.NilError(t, rb.AddSegment(ctx, old, m))
			remapped := memStore{}
			_, err = rb.Finish(ctx, remapped)
			assert.NilError(t, err)
			checkSuperset(t, tc.typ, tc.col, remapped, kept)

			// optimize: the remapped segment plus the sample again as fragment 9
			rb, err = NewScalarRebuild(tc.typ, info.ValueType, BuildOptions{})
			assert.NilError(t, err)
			assert.NilError(t, rb.AddSegment(ctx, remapped, nil))
			more := slices.Clone(kept)
			var newAddrs []uint64
			for i, r := range rows {
				r.addr = 9<<32 | uint64(i)
				newAddrs = append(newAddrs, r.addr)
				more = append(more, r)
			}
			assert.NilError(t, rb.Add(tc.vals, newAddrs))
			both := memStore{}
			_, err = rb.Finish(ctx, both)
			assert.NilError(t, err)
			checkSuperset(t, tc.typ, tc.col, both, more)
		})
	}
}

var inexactFuzzPredicates = []Predicate{
	{Op: Equals, Values: []any{"v1"}},
	{Op: Equals, Values: []any{int64(3)}},
	{Op: IsIn, Values: []any{"v2", int64(3), 2.5}},
	{Op: Range, Lower: &Bound{Value: "v1"}, Upper: &Bound{Value: "v4", Inclusive: true}},
	{Op: IsNull},
	{Op: Contains, Values: []any{"v12", "abc"}},
}

func inexactSamples(t testing.TB) map[Type]memStore {
	rows := inexactSample()
	_, _, s, addrs := sampleArrays(t, rows)
	out := map[Type]memStore{}
	for _, typ := range []Type{ZoneMap, BloomFilter, NGram} {
		b, err := NewBuilder(typ, s.DataType(), BuildOptions{RowsPerZone: 16})
		assert.NilError(t, err)
		assert.NilError(t, b.Add(s, addrs))
		st := memStore{}
		_, err = b.Finish(context.Background(), st)
		assert.NilError(t, err)
		out[typ] = st
	}
	return out
}

func searchInexactHostile(typ Type, st memStore) {
	defer func(old uint64) { maxRemapSpan = old }(maxRemapSpan)
	maxRemapSpan = 1 << 12
	ctx := context.Background()
	r, err := Open(ctx, typ, st)
	if err != nil {
		return
	}
	for _, p := range inexactFuzzPredicates {
		p.FragmentRows = map[uint64]uint64{0: 80, 1: 80, 2: 80}
		_, _ = r.Search(ctx, p)
	}
	// and a rebuild of it, mapped
	if rb, err := NewScalarRebuild(typ, arrow.BinaryTypes.String, BuildOptions{}); err == nil {
		if rb.AddSegment(ctx, st, func(id uint64) (uint64, bool) { return id + 1, id%3 != 0 }) == nil {
			_, _ = rb.Finish(ctx, memStore{})
		}
	}
}

// FuzzOpenInexactIndex: ZONEMAP, BLOOMFILTER and NGRAM files of any bytes
// (mutations of real ones) never panic a reader or a rebuild.
func FuzzOpenInexactIndex(f *testing.F) {
	samples := inexactSamples(f)
	addSeeds(f, samples)
	f.Fuzz(func(t *testing.T, typ, name string, b []byte) {
		st, ok := samples[Type(typ)]
		if !ok {
			return
		}
		hostile := memStore{}
		for k, v := range st {
			hostile[k] = v
		}
		hostile[name] = b
		searchInexactHostile(Type(typ), hostile)
	})
}

// FuzzDecodeTreemap: the posting list decoder never panics, and what it
// accepts round-trips.
func FuzzDecodeTreemap(f *testing.F) {
	enc, err := roaring64.BitmapOf(1, 2, 3, 1<<32|7, 5<<32|65536).ToBytes()
	assert.NilError(f, err)
	f.Add(enc)
	f.Add([]byte{0, 0, 0, 0, 0, 0, 0, 0})
	f.Add([]byte{1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0})
	f.Fuzz(func(t *testing.T, b []byte) {
		got, err := DecodeTreemap(b)
		if err != nil {
			assert.Assert(t, errors.Is(err, ErrCorrupt), "%v", err)
			return
		}
		again, err := got.ToBytes()
		assert.NilError(t, err)
		back, err := DecodeTreemap(again)
		assert.NilError(t, err)
		assert.Check(t, back.Equals(got))
	})
}

// TestHostileInexactIndexFiles runs the fuzz property over every
// truncation and many single-byte corruptions of real files.
func TestHostileInexactIndexFiles(t *testing.T) {
	for typ, st := range inexactSamples(t) {
		for name, good := range st {
			for n := 0; n < len(good); n += 1 + n/16 {
				searchInexactHostile(typ, memStore{name: good[:n]})
			}
			for i := 0; i < len(good); i += 1 + i/32 {
				for _, x := range []byte{0xff, 0x01, 0x80} {
					bad := bytes.Clone(good)
					bad[i] ^= x
					searchInexactHostile(typ, memStore{name: bad})
				}
			}
		}
	}
}
