package index

import (
	"context"
	"fmt"
	"testing"

	"gotest.tools/v3/assert"
)

// TestBlockMaxMultiTerm: multi-term OR, AND and phrase queries with a
// limit (block-max, wand.go) answer exactly the first rows of the
// exhaustive ranking (limit 0 takes the exhaustive path): the same rows,
// the same float32 scores, with and without a prefilter and a boost, on
// 20,000 Zipf documents whose frequent terms span many blocks.
func TestBlockMaxMultiTerm(t *testing.T) {
	texts := zipfTexts(5, 9, blockMaxVocab, 20000, 1, 20)
	ctx := context.Background()
	rd, err := OpenFTS(ctx, buildFTSSample(t, texts, true))
	assert.NilError(t, err)
	defer rd.Close()
	queries := []FTSQuery{
		{Kind: Match, Terms: "quick brown fox"},
		{Kind: Match, Terms: "fox happily", Boost: 2},
		{Kind: Match, Terms: "index vector search", Operator: "AND"},
		{Kind: Match, Terms: "quick fox", Operator: "AND", Boost: 0.5},
		{Kind: Match, Terms: "quick nosuchword"},
		{Kind: Match, Terms: "quick nosuchword", Operator: "AND"},
		{Kind: Phrase, Terms: "quick brown"},
		{Kind: Phrase, Terms: "brown fox jumps", Slop: 1},
		{Kind: Phrase, Terms: "quick quick"},
	}
	for _, q := range queries {
		for ai, allow := range []func(uint64) bool{nil, func(id uint64) bool { return id%3 == 0 }} {
			all, err := rd.Search(ctx, q, 0, allow)
			assert.NilError(t, err)
			for _, limit := range []int{1, 10, 100} {
				got, err := rd.Search(ctx, q, limit, allow)
				assert.NilError(t, err)
				assert.Check(t, len(got) > 0 || len(all) == 0)
				assert.DeepEqual(t, got, all[:min(limit, len(all))])
				if t.Failed() {
					t.Fatal(cmpMsg(q, ai, limit))
				}
			}
		}
	}
}

func cmpMsg(q FTSQuery, ai, limit int) string {
	return fmt.Sprintf("%+v allow#%d limit %d", q, ai, limit)
}
