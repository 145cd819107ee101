package index

import (
	"context"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"
)

// The bit packer round-trips every width (the SDK-side agreement is
// lance/fts_index_sdk_test.go's).
func TestBitpack4xRoundTrip(t *testing.T) {
	for nbits := uint8(0); nbits <= 32; nbits++ {
		var in, out [ftsBlock]uint32
		for i := range in {
			if nbits > 0 {
				in[i] = uint32((uint64(i)*2654435761)&(uint64(1)<<nbits-1)) | (uint32(1) << (nbits - 1))
			}
		}
		b := packPlain4x(nil, &in)
		_, err := unpackPlain4x(b, &out)
		assert.NilError(t, err)
		assert.Check(t, is.DeepEqual(in, out), "nbits %d", nbits)
		var sorted [ftsBlock]uint32
		for i := range sorted {
			sorted[i] = uint32(i*i) + 7
		}
		b = packSorted4x(nil, &sorted)
		_, err = unpackSorted4x(b, &out)
		assert.NilError(t, err)
		assert.Check(t, is.DeepEqual(sorted, out))
	}
}

func TestTokenizerDefaults(t *testing.T) {
	tok, err := NewTokenizer(DefaultTokenizerParams())
	assert.NilError(t, err)
	var got []string
	for _, x := range tok.Tokenize("The quick brown fox jumps over the lazy dog; Café naïve straße being does "+
		"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", nil) {
		got = append(got, x.Text)
	}
	// Measured with SDK 0.39.0 (lance/index/tokenize.go): "over" and
	// "being" (as "be") are stop words, "does" stems to "doe" and stays;
	// 39-byte tokens stay, 40-byte ones go.
	assert.Check(t, is.DeepEqual(got, []string{"quick", "brown", "fox", "jump", "lazi", "dog", "cafe", "naiv", "strasse", "doe",
		"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"}))
}

func buildFTSSample(t testing.TB, texts []string, withPos bool) memStore {
	p := DefaultTokenizerParams()
	p.WithPosition = withPos
	b, err := NewFTSBuilder(p, BuildOptions{})
	assert.NilError(t, err)
	sb := array.NewStringBuilder(memory.DefaultAllocator)
	ids := make([]uint64, len(texts))
	for i, s := range texts {
		sb.Append(s)
		ids[i] = uint64(i)
	}
	arr := sb.NewArray()
	defer arr.Release()
	assert.NilError(t, b.Add(arr, ids))
	st := memStore{}
	_, err = b.Finish(context.Background(), st)
	assert.NilError(t, err)
	return st
}

var ftsSampleTexts = []string{
	"the quick brown fox", "a lazy dog sleeps", "the fox and the dog", "quick quick quick",
	"brown dog brown fox", "", "foxes are quick", "the brown quick fox",
}

func TestFTSSearchShapes(t *testing.T) {
	ctx := context.Background()
	st := buildFTSSample(t, ftsSampleTexts, true)
	r, err := OpenFTS(ctx, st)
	assert.NilError(t, err)
	defer r.Close()
	ids := func(q FTSQuery, allow func(uint64) bool) []uint64 {
		hits, err := r.Search(ctx, q, 0, allow)
		assert.NilError(t, err)
		var out []uint64
		for _, h := range hits {
			out = append(out, h.RowID)
		}
		return out
	}
	has := func(got []uint64, want ...uint64) {
		t.Helper()
		m := map[uint64]bool{}
		for _, g := range got {
			m[g] = true
		}
		assert.Check(t, is.Len(got, len(want)), "%v vs %v", got, want)
		for _, w := range want {
			assert.Check(t, m[w], "%v lacks %d", got, w)
		}
	}
	has(ids(FTSQuery{Kind: Match, Terms: "fox"}, nil), 0, 2, 4, 6, 7)
	has(ids(FTSQuery{Kind: Match, Terms: "brown fox", Operator: "AND"}, nil), 0, 4, 7)
	has(ids(FTSQuery{Kind: Phrase, Terms: "brown fox"}, nil), 0, 4)
	has(ids(FTSQuery{Kind: Phrase, Terms: "brown fox", Slop: 1}, nil), 0, 4, 7)
	has(ids(FTSQuery{Kind: Boolean, Must: []FTSQuery{{Kind: Match, Terms: "fox"}}, MustNot: []FTSQuery{{Kind: Match, Terms: "dog"}}}, nil), 0, 6, 7)
	has(ids(FTSQuery{Kind: Match, Terms: "fox"}, func(id uint64) bool { return id < 3 }), 0, 2)
	has(ids(FTSQuery{Kind: Match, Terms: "fix", Fuzziness: 1}, nil), 0, 2, 4, 6, 7)
	// "quick quick quick" has the highest tf for quick
	got := ids(FTSQuery{Kind: Match, Terms: "quick"}, nil)
	assert.Check(t, is.Equal(got[0], uint64(3)))
}

// FuzzOpenFTS: hostile index files never panic the reader.
func FuzzOpenFTS(f *testing.F) {
	st := buildFTSSample(f, ftsSampleTexts, true)
	for name, b := range st {
		f.Add(name, b)
	}
	f.Fuzz(func(t *testing.T, name string, b []byte) {
		hostile := st.with(name, b)
		r, err := OpenFTS(context.Background(), hostile)
		if err != nil {
			return
		}
		defer r.Close()
		for _, q := range []FTSQuery{{Kind: Match, Terms: "quick brown fox dog"}, {Kind: Phrase, Terms: "brown fox"},
			{Kind: Match, Terms: "brown fox", Operator: "AND"}} {
			_, _ = r.Search(context.Background(), q, 5, nil)
		}
		// the remap and the optimize merge read every posting and position
		_, _ = RemapFTS(context.Background(), hostile, memStore{}, func(id uint64) (uint64, bool) { return id + 1, id%2 == 0 })
		_, _ = UpdateFTS(context.Background(), []Store{hostile}, memStore{}, func(*FTSBuilder) error { return nil })
	})
}

// FuzzFTSBlocks: the posting block decoders never panic on any bytes.
func FuzzFTSBlocks(f *testing.F) {
	var v [ftsBlock]uint32
	for i := range v {
		v[i] = uint32(i * 3)
	}
	f.Add(packSorted4x(nil, &v))
	f.Fuzz(func(t *testing.T, b []byte) {
		var out [ftsBlock]uint32
		_, _ = unpackSorted4x(b, &out)
		_, _ = unpackPlain4x(b, &out)
	})
}
