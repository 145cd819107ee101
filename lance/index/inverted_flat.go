package index

// Flat full-text search of the rows an INVERTED index does not cover
// (appended after the build), as Lance's FlatMatchQueryExec scores them:
// measured against SDK 0.39.0 (TestFTSAppendedRowsSDK), the indexed rows
// keep the scores of the index's own statistics, and an unindexed row is
// scored by BM25 over the union: N is the index's documents plus the
// unindexed documents with at least one token, the total tokens and each
// query token's document count likewise summed, the average document
// length total tokens / N in float32 (the integer quotient, as an older
// MemBM25Scorer took it, misses the SDK's scores by up to 2%), and the
// row's own length its full token count.

import (
	"context"
	"strings"
)

// FTSStats are an index's BM25 statistics for some tokens.
type FTSStats struct {
	NumDocs, TotalTokens uint64
	DocFreq              map[string]uint64
}

// FlatDoc is one unindexed row's text (nil: a null value).
type FlatDoc struct {
	Row  uint64
	Text *string
}

type flatCount struct {
	row    uint64
	total  uint32
	freqs  []uint32
	phrase bool
}

// FlatSearch answers q (Match or Phrase; Boolean combines them) over the
// unindexed docs, with the index's tokenizer and statistics (r may hold
// several segments: their statistics are summed).
func FlatSearch(ctx context.Context, readers []FTSReader, q FTSQuery, docs []FlatDoc, allow func(uint64) bool) (map[uint64]float32, error) {
	if len(readers) == 0 || len(docs) == 0 {
		return map[uint64]float32{}, nil
	}
	if q.Kind == Boolean {
		return CombineBoolean(ctx, q.Must, q.Should, q.MustNot, func(ctx context.Context, c FTSQuery) (map[uint64]float32, error) {
			return FlatSearch(ctx, readers, c, docs, allow)
		})
	}
	fr, ok := ownFTSReader(readers[0])
	if !ok {
		return map[uint64]float32{}, nil
	}
	var qtoks []Token
	if q.Kind == Phrase {
		qtoks = fr.tok.Tokenize(q.Terms, nil)
	} else {
		qtoks = fr.queryTokens(q.Terms)
	}
	if len(qtoks) == 0 {
		return map[uint64]float32{}, nil
	}
	idx := map[string][]int{}
	for i, t := range qtoks {
		idx[t.Text] = append(idx[t.Text], i)
	}
	st := FTSStats{DocFreq: map[string]uint64{}}
	for _, r := range readers {
		x, ok := ownFTSReader(r)
		if !ok {
			continue
		}
		st.NumDocs += x.stats.numDocs
		st.TotalTokens += x.stats.totalTokens
		for _, t := range qtoks {
			st.DocFreq[t.Text] += x.docFreq(t.Text)
		}
	}
	counts := make([]flatCount, 0, len(docs))
	var buf []Token
	for i, d := range docs {
		if i%1024 == 0 {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
		}
		if d.Text == nil {
			continue
		}
		buf = fr.tok.Tokenize(*d.Text, buf[:0])
		if len(buf) == 0 {
			continue
		}
		c := flatCount{row: d.Row, total: uint32(len(buf)), freqs: make([]uint32, len(qtoks))}
		var pos [][]uint32
		if q.Kind == Phrase {
			pos = make([][]uint32, len(qtoks))
		}
		for _, t := range buf {
			for _, k := range idx[t.Text] {
				c.freqs[k]++
				if pos != nil {
					pos[k] = append(pos[k], t.Position)
				}
			}
		}
		if pos != nil {
			c.phrase = flatPhrase(qtoks, pos, q.Slop)
		}
		st.NumDocs++
		st.TotalTokens += uint64(c.total)
		seen := map[string]bool{}
		for k, t := range qtoks {
			if c.freqs[k] > 0 && !seen[t.Text] {
				seen[t.Text] = true
				st.DocFreq[t.Text]++
			}
		}
		counts = append(counts, c)
	}
	if st.NumDocs == 0 {
		return map[uint64]float32{}, nil
	}
	avgdl := float32(st.TotalTokens) / float32(st.NumDocs)
	and := q.Kind == Match && strings.EqualFold(q.Operator, "AND")
	boost := q.Boost
	if boost == 0 {
		boost = 1
	}
	out := map[uint64]float32{}
	for _, c := range counts {
		if allow != nil && !allow(c.row) {
			continue
		}
		if q.Kind == Phrase && !c.phrase {
			continue
		}
		if and {
			all := true
			for _, f := range c.freqs {
				all = all && f > 0
			}
			if !all {
				continue
			}
		}
		norm := bm25K1 * (1 - bm25B + bm25B*float32(c.total)/avgdl)
		var s float32
		for k, t := range qtoks {
			f := float32(c.freqs[k])
			s += bm25IDF(st.DocFreq[t.Text], st.NumDocs) * (f * (bm25K1 + 1) / (f + norm))
		}
		if s > 0 {
			out[c.row] = s * boost
		}
	}
	return out, nil
}

// flatPhrase: the query tokens occur in order, each neighbour within slop
// extra positions of the query's own gap.
func flatPhrase(qtoks []Token, pos [][]uint32, slop int) bool {
	cand := pos[0]
	for i := 1; i < len(qtoks) && len(cand) > 0; i++ {
		gap := int64(qtoks[i].Position) - int64(qtoks[i-1].Position)
		var next []uint32
		for _, p := range pos[i] {
			for _, c := range cand {
				least := int64(c) + gap
				if int64(p) >= least && int64(p) <= least+int64(slop) {
					next = append(next, p)
					break
				}
			}
		}
		cand = next
	}
	return len(cand) > 0
}

// ownFTSReader is r as this package's reader, seen through wrappers that say what they wrap
// (the process-wide reader cache hands out a handle whose Close releases a reference): without
// the unwrap, a cached reader's appended rows were never searched.
func ownFTSReader(r FTSReader) (*ftsReader, bool) {
	for {
		switch x := r.(type) {
		case *ftsReader:
			return x, true
		case interface{ Unwrap() FTSReader }:
			r = x.Unwrap()
		default:
			return nil, false
		}
	}
}
