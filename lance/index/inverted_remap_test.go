package index

import (
	"context"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"gotest.tools/v3/assert"
)

// TestRemapFTS: a remapped index answers as an index built from scratch
// on the surviving rows at their new addresses (rows, scores, phrases),
// with and without positions; UpdateFTS of an index plus new rows (a
// partition of their own) answers as one built on all of them.
func TestRemapFTS(t *testing.T) {
	ctx := context.Background()
	texts := []string{"the quick brown fox", "a lazy dog sleeps", "the fox and the dog", "quick quick quick",
		"brown dog brown fox", "", "foxes are quick", "the brown quick fox", "lazy lazy fox", "dog"}
	queries := []FTSQuery{{Kind: Match, Terms: "fox"}, {Kind: Match, Terms: "quick dog"},
		{Kind: Match, Terms: "brown fox", Operator: "AND"}, {Kind: Phrase, Terms: "brown fox"}, {Kind: Match, Terms: "sleeps"}}
	for _, withPos := range []bool{false, true} {
		src := buildFTSSample(t, texts, withPos)
		// drop rows 1 and 4 (sleeps goes with row 1), move the others to 100+i
		m := func(id uint64) (uint64, bool) {
			if id == 1 || id == 4 {
				return 0, false
			}
			return 100 + id, true
		}
		dst := memStore{}
		_, err := RemapFTS(ctx, src, dst, m)
		assert.NilError(t, err)
		var kept []string
		for i, s := range texts {
			if i != 1 && i != 4 {
				kept = append(kept, s)
			}
		}
		want := buildFTSSample(t, kept, withPos)
		got, err := OpenFTS(ctx, dst)
		assert.NilError(t, err)
		ref, err := OpenFTS(ctx, want)
		assert.NilError(t, err)
		// the rebuilt sample numbers rows 0..; map them to 100+old
		oldOf := []uint64{0, 2, 3, 5, 6, 7, 8, 9}
		for _, q := range queries {
			if q.Kind == Phrase && !withPos {
				continue
			}
			a, err := got.Search(ctx, q, 0, nil)
			assert.NilError(t, err)
			b, err := ref.Search(ctx, q, 0, nil)
			assert.NilError(t, err)
			for i := range b {
				b[i].RowID = 100 + oldOf[b[i].RowID]
			}
			assert.DeepEqual(t, sortByRow(a), sortByRow(b))
		}
		// update: the kept rows' index plus two new rows
		upd := memStore{}
		_, err = UpdateFTS(ctx, []Store{dst}, upd, func(b *FTSBuilder) error {
			return addTexts(b, []string{"sleepy fox", "quick brown"}, []uint64{500, 501})
		})
		assert.NilError(t, err)
		parts, ts, err := FTSLayout(ctx, upd)
		assert.NilError(t, err)
		assert.DeepEqual(t, parts, []uint64{0, 1})
		assert.Equal(t, ts, "arrow")
		u, err := OpenFTS(ctx, upd)
		assert.NilError(t, err)
		all := buildFTSSample(t, append(append([]string{}, kept...), "sleepy fox", "quick brown"), withPos)
		ra, err := OpenFTS(ctx, all)
		assert.NilError(t, err)
		for _, q := range queries {
			if q.Kind == Phrase && !withPos {
				continue
			}
			a, err := u.Search(ctx, q, 0, nil)
			assert.NilError(t, err)
			b, err := ra.Search(ctx, q, 0, nil)
			assert.NilError(t, err)
			for i := range b {
				if b[i].RowID < uint64(len(oldOf)) {
					b[i].RowID = 100 + oldOf[b[i].RowID]
				} else {
					b[i].RowID = 500 + b[i].RowID - uint64(len(oldOf))
				}
			}
			assert.DeepEqual(t, sortByRow(a), sortByRow(b))
		}
		for _, r := range []FTSReader{got, ref, u, ra} {
			r.Close()
		}
	}
}

func sortByRow(rows []ScoredRow) map[uint64]float32 {
	out := map[uint64]float32{}
	for _, r := range rows {
		out[r.RowID] = r.Score
	}
	return out
}

func addTexts(b *FTSBuilder, texts []string, ids []uint64) error {
	sb := array.NewStringBuilder(memory.DefaultAllocator)
	defer sb.Release()
	sb.AppendValues(texts, nil)
	arr := sb.NewArray()
	defer arr.Release()
	return b.Add(arr, ids)
}
