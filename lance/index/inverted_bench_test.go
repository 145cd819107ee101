package index

import (
	"context"
	"math/rand/v2"
	"strings"
	"syscall"
	"testing"
	"time"

	"gotest.tools/v3/assert"
)

// ftsVocab is the vocabulary of lance's ftsCorpus (TestFTSTimeVsSDK's
// table): stop words, capitals, accents, inflections.
var ftsVocab = strings.Fields(`the quick brown fox jumps over lazy dog running runners ran runs
		Café naïve résumé über straße Zürich data database databases lance lancecat catalog query queries
		querying index indexes indexed indexing vector vectors search searching searched text texts token
		tokens tokenizer a an and of to in is it that this with for on as was are be being have has does
		would could ought because very only any why once above during before connection connections
		connected HTTP http Server servers served serving
		happily happiness generously generous relational relations relate 2024 42 x9 v2 cat cats`)

// blockMaxVocab is the block-max tests' vocabulary: its frequent terms
// span many posting blocks of 20,000 documents.
var blockMaxVocab = strings.Fields("the quick brown fox jumps over lazy dog data lance catalog query index vector search happily")

// zipfTexts is n documents of minWords to minWords+spread-1 words of
// vocab, Zipf-distributed, joined by spaces, from the random seeds.
func zipfTexts(seed1, seed2 uint64, vocab []string, n, minWords, spread int) []string {
	r := rand.New(rand.NewPCG(seed1, seed2))
	z := rand.NewZipf(r, 1.3, 2, uint64(len(vocab)-1))
	texts := make([]string, n)
	for i := range texts {
		var w []string
		for range minWords + r.IntN(spread) {
			w = append(w, vocab[z.Uint64()])
		}
		texts[i] = strings.Join(w, " ")
	}
	return texts
}

// BenchmarkFTSMatch: match queries on a 200,000-document Zipf corpus
// (the shape of lance's TestFTSTimeVsSDK): a frequent term, three terms,
// a rare one. go test -run '^$' -bench FTSMatch ./lance/index
func BenchmarkFTSMatch(b *testing.B) {
	vocab := strings.Fields(`the quick brown fox jumps over lazy dog running runners ran runs data database lance
		catalog query index vector search text token connection served happily relations cats 2024 x9`)
	texts := zipfTexts(3, 7, vocab, 200000, 3, 25)
	st := buildFTSSample(b, texts, false)
	ctx := context.Background()
	rd, err := OpenFTS(ctx, st)
	assert.NilError(b, err)
	defer rd.Close()
	for _, q := range []FTSQuery{{Terms: "fox"}, {Terms: "quick brown fox"}, {Terms: "happily"}, {Terms: "index vector search", Operator: "AND"}} {
		b.Run(q.Terms+q.Operator, func(b *testing.B) {
			for b.Loop() {
				if _, err := rd.Search(ctx, q, 10, nil); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// TestBlockMaxPruning: a single-term match with a limit skips posting
// blocks by their stored max score, and answers what the full ranking's
// first rows are (20,000 Zipf documents; frequent and rare terms; with a
// prefilter and a boost).
func TestBlockMaxPruning(t *testing.T) {
	texts := zipfTexts(5, 9, blockMaxVocab, 20000, 1, 20)
	ctx := context.Background()
	rd, err := OpenFTS(ctx, buildFTSSample(t, texts, false))
	assert.NilError(t, err)
	defer rd.Close()
	for _, q := range []FTSQuery{{Kind: Match, Terms: "quick"}, {Kind: Match, Terms: "fox", Boost: 2}, {Kind: Match, Terms: "happily"}} {
		for _, allow := range []func(uint64) bool{nil, func(id uint64) bool { return id%3 == 0 }} {
			all, err := rd.Search(ctx, q, 0, allow)
			assert.NilError(t, err)
			for _, limit := range []int{1, 10, 100} {
				got, err := rd.Search(ctx, q, limit, allow)
				assert.NilError(t, err)
				assert.DeepEqual(t, got, all[:min(limit, len(all))])
			}
		}
	}
}

// BenchmarkFTSCorpus: the vocabulary and document lengths of lance's
// ftsCorpus (TestFTSTimeVsSDK) on 200,000 documents, with positions.
// go test -run '^$' -bench FTSCorpus ./lance/index
func BenchmarkFTSCorpus(b *testing.B) {
	texts := zipfTexts(3, 7, ftsVocab, 200000, 3, 25)
	st := buildFTSSample(b, texts, true)
	ctx := context.Background()
	rd, err := OpenFTS(ctx, st)
	assert.NilError(b, err)
	defer rd.Close()
	for _, q := range []FTSQuery{{Terms: "fox"}, {Terms: "quick brown fox"}, {Terms: "connection served happily"},
		{Terms: "index vector search", Operator: "AND"}, {Kind: Phrase, Terms: "quick brown"}} {
		b.Run(q.Terms+q.Operator, func(b *testing.B) {
			// the process's CPU time a query: wall time is noisy on a
			// loaded machine
			c0 := cpuTime()
			for b.Loop() {
				if _, err := rd.Search(ctx, q, 10, nil); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64((cpuTime()-c0).Microseconds())/1000/float64(b.N), "cpu-ms/op")
		})
	}
}

func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
