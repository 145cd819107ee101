package index

// BM25 as Lance scores full-text hits (lance-index scorer.rs, checked
// against SDK scores): k1 1.2, b 0.75, idf ln((N - n + 0.5)/(n + 0.5) + 1)
// with N the documents of all partitions and n those containing the
// token, and the average document length the tokens of all partitions over
// N. A hit's score is the sum over the query's tokens of idf × the doc
// weight (k1+1)·f / (f + k1·(1 - b + b·len/avgdl)), in float32 as Lance.

import "math"

const (
	bm25K1 = float32(1.2)
	bm25B  = float32(0.75)
)

type bm25Stats struct {
	numDocs, totalTokens uint64
}

func (s bm25Stats) avgdl() float32 {
	if s.numDocs == 0 {
		return 0
	}
	return float32(s.totalTokens) / float32(s.numDocs)
}

func bm25IDF(tokenDocs, numDocs uint64) float32 {
	if tokenDocs == 0 {
		return 0
	}
	n := float32(numDocs)
	t := float32(tokenDocs)
	return float32(math.Log(float64((n-t+0.5)/(t+0.5) + 1)))
}

func bm25DocWeight(freq, docTokens uint32, avgdl float32) float32 {
	f := float32(freq)
	norm := bm25K1 * (1 - bm25B + bm25B*float32(docTokens)/avgdl)
	return (bm25K1 + 1) * f / (f + norm)
}
