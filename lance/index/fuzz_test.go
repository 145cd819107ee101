package index

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"testing"

	"github.com/RoaringBitmap/roaring/v2/roaring64"
	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"
)

// memStore is an in-memory index directory.
type memStore map[string][]byte

// with is a copy of m whose file name holds b instead: a sample with one
// file made hostile.
func (m memStore) with(name string, b []byte) memStore {
	out := make(memStore, len(m)+1)
	for k, v := range m {
		out[k] = v
	}
	out[name] = b
	return out
}

func (m memStore) Open(_ context.Context, name string) (ReaderAt, error) {
	b, ok := m[name]
	if !ok {
		return nil, fmt.Errorf("%s: not found", name)
	}
	return memFile(b), nil
}

func (m memStore) Put(_ context.Context, name string, r io.Reader, _ int64) error {
	b, err := io.ReadAll(r)
	m[name] = b
	return err
}

type memFile []byte

func (f memFile) Size() int64  { return int64(len(f)) }
func (f memFile) Close() error { return nil }
func (f memFile) ReadRange(_ context.Context, off, n int64) ([]byte, error) {
	if off < 0 || n < 0 || off+n > int64(len(f)) {
		return nil, ErrCorrupt
	}
	return bytes.Clone(f[off : off+n]), nil
}

// buildSample writes a small index of type t over strings (lists of them
// for LABEL_LIST) with nulls: the seed of the fuzzers.
func buildSample(t testing.TB, typ Type) memStore {
	mem := memory.DefaultAllocator
	var vals arrow.Array
	if typ == LabelList {
		lb := array.NewListBuilder(mem, arrow.BinaryTypes.String)
		for i := range 40 {
			if i%7 == 0 {
				lb.AppendNull()
				continue
			}
			lb.Append(true)
			lb.ValueBuilder().(*array.StringBuilder).Append(fmt.Sprint("l", i%3))
		}
		vals = lb.NewArray()
		lb.Release()
	} else {
		sb := array.NewStringBuilder(mem)
		for i := range 40 {
			if i%5 == 0 {
				sb.AppendNull()
			} else {
				sb.Append(fmt.Sprint("v", i%6))
			}
		}
		vals = sb.NewArray()
		sb.Release()
	}
	defer vals.Release()
	b, err := NewBuilder(typ, vals.DataType(), BuildOptions{BatchSize: 8})
	assert.NilError(t, err)
	ids := make([]uint64, 40)
	for i := range ids {
		ids[i] = uint64(i/20)<<32 | uint64(i%20)
	}
	assert.NilError(t, b.Add(vals, ids))
	st := memStore{}
	_, err = b.Finish(context.Background(), st)
	assert.NilError(t, err)
	return st
}

var fuzzPredicates = []Predicate{
	{Op: Equals, Values: []any{"v1"}},
	{Op: IsIn, Values: []any{"v2", "l1", int64(3)}},
	{Op: Range, Lower: &Bound{Value: "v1"}, Upper: &Bound{Value: "v4", Inclusive: true}},
	{Op: IsNull},
	{Op: HasAny, Values: []any{"l0"}},
	{Op: HasAll, Values: []any{"l0", "l1"}},
}

// searchHostile opens st and runs every predicate: errors are fine, panics
// are not (the fuzzers' property).
func searchHostile(typ Type, st memStore) {
	ctx := context.Background()
	r, err := Open(ctx, typ, st)
	if err != nil {
		return
	}
	for _, p := range fuzzPredicates {
		_, _ = r.Search(ctx, p)
	}
}

// FuzzOpenIndex: index files of any bytes (mutations of real ones) never
// panic a reader; they open and search, or fail with an error.
func FuzzOpenIndex(f *testing.F) {
	samples := map[Type]memStore{BTree: buildSample(f, BTree), Bitmap: buildSample(f, Bitmap), LabelList: buildSample(f, LabelList)}
	addSeeds(f, samples)
	f.Fuzz(func(t *testing.T, typ, name string, b []byte) {
		st, ok := samples[Type(typ)]
		if !ok {
			return
		}
		hostile := st.with(name, b)
		searchHostile(Type(typ), hostile)
	})
}

// FuzzDecodeTreeMap: the row map decoder never panics, and what it accepts
// round-trips.
func FuzzDecodeTreeMap(f *testing.F) {
	rows := roaring64.BitmapOf(1, 2, 3, 1<<32|7, 5<<32|65536)
	enc, err := EncodeTreeMap(rows)
	assert.NilError(f, err)
	f.Add(enc)
	f.Add([]byte{0, 0, 0, 0})
	f.Add([]byte{1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0})
	f.Fuzz(func(t *testing.T, b []byte) {
		got, err := DecodeTreeMap(b)
		if err != nil {
			assert.Assert(t, errors.Is(err, ErrCorrupt) || errors.Is(err, ErrUnsupported), "%v", err)
			return
		}
		again, err := EncodeTreeMap(got)
		assert.NilError(t, err)
		back, err := DecodeTreeMap(again)
		assert.NilError(t, err)
		assert.Check(t, back.Equals(got))
	})
}

// TestHostileIndexFiles runs the fuzz property over every truncation and
// many single-byte corruptions of real index files (the corpus CI runs
// without -fuzz).
func TestHostileIndexFiles(t *testing.T) {
	for _, typ := range []Type{BTree, Bitmap, LabelList} {
		st := buildSample(t, typ)
		for name, good := range st {
			for n := 0; n < len(good); n += 1 + n/64 {
				searchHostile(typ, st.with(name, good[:n]))
			}
			for i := range len(good) {
				for _, x := range []byte{0xff, 0x01, 0x80} {
					bad := bytes.Clone(good)
					bad[i] ^= x
					searchHostile(typ, st.with(name, bad))
				}
			}
		}
	}
}

// TestTreeMapBytes pins the serialization against bytes the SDK wrote
// (a BITMAP key of a 0.39.0 index: rows 3, 10, 17, 24, 31, 38, 45 of
// fragment 0 and 2, 9, 16, 23, 30, 37, 44 of fragment 1).
func TestTreeMapBytes(t *testing.T) {
	sdk := []byte("\x02\x00\x00\x00\x00\x00\x00\x00\x1e\x00\x00\x00:0\x00\x00\x01\x00\x00\x00\x00\x00\x06\x00\x10\x00\x00\x00\x03\x00\n\x00\x11\x00\x18\x00\x1f\x00&\x00-\x00" +
		"\x01\x00\x00\x00\x1e\x00\x00\x00:0\x00\x00\x01\x00\x00\x00\x00\x00\x06\x00\x10\x00\x00\x00\x02\x00\t\x00\x10\x00\x17\x00\x1e\x00%\x00,\x00")
	rows, err := DecodeTreeMap(sdk)
	assert.NilError(t, err)
	want := roaring64.New()
	for _, o := range []uint64{3, 10, 17, 24, 31, 38, 45} {
		want.Add(o)
	}
	for _, o := range []uint64{2, 9, 16, 23, 30, 37, 44} {
		want.Add(1<<32 | o)
	}
	assert.Check(t, rows.Equals(want))
	enc, err := EncodeTreeMap(want)
	assert.NilError(t, err)
	assert.Check(t, is.DeepEqual(enc, sdk))

	frags, err := EncodeFragmentBitmap([]uint32{0, 1})
	assert.NilError(t, err)
	assert.Check(t, is.DeepEqual(frags, []byte(":0\x00\x00\x01\x00\x00\x00\x00\x00\x01\x00\x10\x00\x00\x00\x00\x00\x01\x00")), "the SDK's fragment_bitmap of fragments 0 and 1")
}

// addSeeds adds every file of every sample index as a seed: (type, file
// name, bytes).
func addSeeds(f *testing.F, samples map[Type]memStore) {
	for typ, st := range samples {
		for name, b := range st {
			f.Add(string(typ), name, b)
		}
	}
}
