package e2e

import (
	"fmt"
	"math"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/lancecat/lancecat/internal/testenv"
)

// The full-text differential test: the same documents and queries through the official SDK
// embedded (its own index and query on a local directory) and through lancecat in remote mode,
// once over an index the SDK built on lancecat's root (namespace mode) and once over an index
// lancecat built (remote create_index). Rows must be the same sets and scores equal but for
// float32 rounding. scripts/index/sdk-fts-diff.mjs drives the SDK.

// ftsDiffDoc is one row of the corpus.
type ftsDiffDoc struct {
	ID    int64  `json:"id"`
	Text  string `json:"text"`
	Title string `json:"title"`
}

// ftsDiffCorpus is n documents over a skewed vocabulary (a few words in most documents, most in
// few), with inflections the stemmer folds, stop words, accents, mixed case, punctuation, a
// long token and repeated terms, so that BM25's idf, length normalisation and frequencies all
// matter.
func ftsDiffCorpus(n int) []ftsDiffDoc {
	vocab := strings.Fields(`glacier river mountain valley forest ocean desert island canyon meadow
		running runs runner ran swimming swims swam climbing climbed climbs organization organizations
		the a of and to in is was it that for on with as at by this be are from
		Café café naïve résumé Zürich crème brûlée façade
		quick brown fox jumps over lazy dog quiet bank storm thunder lightning rain snow ice cold warm
		sunny cloudy windy breeze north south east west harbor lighthouse sailor anchor voyage
		ancient modern history legend myth story tale saga epic poem verse song melody rhythm
		data-driven e-mail U.S.A. don't it's O'Reilly 42 2024 v2 x86_64
		supercalifragilisticexpialidociousandmorelettersbeyondforty`)
	titles := strings.Fields(`glacier river mountain storm harbor legend voyage forest island song`)
	x := uint64(2463534242)
	next := func() uint64 { x ^= x << 13; x ^= x >> 7; x ^= x << 17; return x }
	docs := make([]ftsDiffDoc, n)
	for i := range docs {
		l := 3 + int(next()%25)
		words := make([]string, l)
		for j := range words {
			// skewed: the square of a uniform picks low indices more often
			u := float64(next()%10000) / 10000
			words[j] = vocab[int(u*u*float64(len(vocab)))]
		}
		if i%7 == 0 {
			words = append(words, words[0], words[0]) // repeated terms
		}
		if i%5 == 0 {
			// phrases at a random place, some with words between
			at := int(next() % uint64(len(words)))
			ph := [][]string{{"quick", "brown", "fox"}, {"storm", "and", "heavy", "rain"}, {"storm", "rain"}, {"quick", "lazy", "brown"}}[int(next()%4)]
			words = slices.Insert(words, at, ph...)
		}
		if i%11 == 0 {
			words = append(words, ",", "glacier!", "(river)")
		}
		var tw []string
		for j := range 1 + int(next()%4) {
			tw = append(tw, titles[(i+j*3+int(next()%5))%len(titles)])
		}
		docs[i] = ftsDiffDoc{ID: int64(i), Text: strings.Join(words, " "), Title: strings.Join(tw, " ")}
	}
	return docs
}

type ftsDiffQuery struct {
	Name   string         `json:"-"`
	Q      map[string]any `json:"q"`
	Limit  int            `json:"limit,omitempty"`
	Filter string         `json:"filter,omitempty"`
}

type ftsDiffResult struct {
	IDs    []int64   `json:"ids"`
	Scores []float64 `json:"scores"`
	Error  string    `json:"error"`
}

type ftsDiffOut struct {
	Results []ftsDiffResult `json:"results"`
	Tokens  []any           `json:"tokens"`
}

func match(terms, column string, kv ...any) map[string]any {
	m := map[string]any{"match": terms, "column": column}
	for i := 0; i+1 < len(kv); i += 2 {
		m[kv[i].(string)] = kv[i+1]
	}
	return m
}

// ftsDiffQueries are the query types of the SDK, each against the text column (multi-match and
// string queries over both columns).
func ftsDiffQueries() []ftsDiffQuery {
	return []ftsDiffQuery{
		{Name: "string glacier", Q: map[string]any{"string": "glacier"}, Limit: 20},
		{Name: "string two terms", Q: map[string]any{"string": "quiet river", "columns": []string{"text"}}, Limit: 30},
		{Name: "string quoted", Q: map[string]any{"string": "\"quick brown\"", "columns": []string{"text"}}, Limit: 30},
		{Name: "string quoted, every column", Q: map[string]any{"string": "\"storm rain\""}, Limit: 30},
		{Name: "match glacier", Q: match("glacier", "text"), Limit: 20},
		{Name: "match rare+common", Q: match("lighthouse the storm", "text"), Limit: 25},
		{Name: "match AND", Q: match("storm thunder", "text", "operator", "AND"), Limit: 25},
		{Name: "match stemmed", Q: match("running climbs", "text"), Limit: 25},
		{Name: "match prefiltered", Q: match("river", "text"), Limit: 15, Filter: "id < 1500"},
		{Name: "match boost 2", Q: match("glacier", "text", "boost", 2.0), Limit: 20},
		{Name: "fuzzy 1", Q: match("glaceir", "text", "fuzziness", 1), Limit: 20},
		{Name: "fuzzy 2", Q: match("mountian", "text", "fuzziness", 2), Limit: 30},
		{Name: "fuzzy maxExpansions 1", Q: match("bank", "text", "fuzziness", 2, "maxExpansions", 1), Limit: 30},
		{Name: "fuzzy null (exact)", Q: match("glaceir mountian rian", "text", "fuzziness", nil), Limit: 30},
		{Name: "fuzzy prefixLength 2", Q: match("rain", "text", "fuzziness", 2, "prefixLength", 2), Limit: 30},
		{Name: "phrase", Q: map[string]any{"phrase": "quick brown", "column": "text"}, Limit: 30},
		{Name: "phrase slop 2", Q: map[string]any{"phrase": "storm rain", "column": "text", "slop": 2}, Limit: 30},
		{Name: "boolean must,should,must_not", Q: map[string]any{"bool": []any{
			[]any{"MUST", match("river", "text")},
			[]any{"SHOULD", match("storm", "text")},
			[]any{"MUST_NOT", match("glacier", "text")},
		}}, Limit: 30},
		{Name: "boolean should only", Q: map[string]any{"bool": []any{
			[]any{"SHOULD", match("lighthouse", "text")},
			[]any{"SHOULD", match("anchor", "text")},
		}}, Limit: 30},
		{Name: "boost query", Q: map[string]any{"boost": map[string]any{
			"positive": match("river", "text"), "negative": match("storm", "text"), "negativeBoost": 0.3,
		}}, Limit: 30},
		{Name: "multi match", Q: map[string]any{"multi": "glacier storm", "columns": []string{"text", "title"}}, Limit: 30},
		{Name: "multi match boosts", Q: map[string]any{"multi": "river", "columns": []string{"text", "title"}, "boosts": []float64{1, 3}}, Limit: 30},
	}
}

// ftsDiffTokenizer is one index configuration: a table whose text column is indexed with options.
type ftsDiffTokenizer struct {
	name    string
	options map[string]any
	queries []ftsDiffQuery // nil: every query of ftsDiffQueries
	// appended: rows added after the index is built (the index does not cover them)
	appended bool
}

func ftsDiffTokenizers() []ftsDiffTokenizer {
	simple := func(name string, q ...string) []ftsDiffQuery {
		var out []ftsDiffQuery
		for _, t := range q {
			out = append(out, ftsDiffQuery{Name: name + " " + t, Q: match(t, "text"), Limit: 25})
		}
		return out
	}
	return []ftsDiffTokenizer{
		{name: "default", options: map[string]any{"withPosition": true}},
		{name: "default-appended", options: map[string]any{"withPosition": true}, appended: true},
		{name: "no-stem-no-stop", options: map[string]any{"stem": false, "removeStopWords": false},
			queries: simple("match", "running the", "organizations", "of a storm")},
		{name: "whitespace", options: map[string]any{"baseTokenizer": "whitespace", "withPosition": true},
			queries: append(simple("match", "glacier!", "don't", "data-driven river"),
				ftsDiffQuery{Name: "phrase", Q: map[string]any{"phrase": "quick brown", "column": "text"}, Limit: 30})},
		{name: "raw", options: map[string]any{"baseTokenizer": "raw"}, queries: simple("match", "glacier", "Storm")},
		{name: "ngram", options: map[string]any{"baseTokenizer": "ngram", "ngramMinLength": 3, "ngramMaxLength": 4},
			queries: simple("match", "glac", "ver", "storm")},
		{name: "ngram-prefix", options: map[string]any{"baseTokenizer": "ngram", "ngramMinLength": 2, "ngramMaxLength": 5, "prefixOnly": true},
			queries: simple("match", "gla", "riv", "st")},
		{name: "no-lowercase", options: map[string]any{"lowercase": false}, queries: simple("match", "Café", "café", "Zürich")},
		{name: "no-ascii-folding", options: map[string]any{"asciiFolding": false}, queries: simple("match", "cafe", "café", "naïve")},
		{name: "custom-stop-words", options: map[string]any{"customStopWords": []string{"glacier", "river"}},
			queries: simple("match", "glacier river storm", "the storm")},
		{name: "max-token-length", options: map[string]any{"maxTokenLength": 6}, queries: simple("match", "glacier", "storm", "river")},
	}
}

// ftsDiffGaps are the cases known to differ, as path.Match patterns over
// "<sdk>/<tokenizer>/<sdk-built|lancecat-built>/<query>", each with the reason. A case a
// pattern covers is logged, not failed; a pattern that no longer covers any difference fails
// the test, so the list is kept true.
var ftsDiffGaps = []struct {
	pattern, reason string
	// mayAgree: the difference does not show on every run (the stale check skips it)
	mayAgree bool
}{
	{"0.31.0/*/lancecat-built/*", "lancecat builds with the English stop words of Lance as SDK 0.39.0 embeds it (NLTK's list); " +
		"SDK 0.31.0's Lance removes tantivy's 33-word Lucene list, so from the same create_index the two SDK versions build indices " +
		"whose document lengths differ (scores 1-4% apart, \"don't\" kept by 0.31.0); lancecat follows the newer", false},
	{"0.31.0/default-appended/sdk-built/*", "rows the index does not cover: SDK 0.31.0's Lance scores them with its older flat " +
		"scorer (lance/index inverted_flat.go names the integer average length of the older MemBM25Scorer); lancecat scores them " +
		"as SDK 0.39.0's does (agreeing there), so appended rows' scores are up to 8% apart and the top rows change with them", false},
	{"0.31.0/ngram*/sdk-built/match storm", "once seen: SDK 0.31.0's ngram index (stemming and stop words on, applied to each ngram) " +
		"scored a multi-ngram match higher than lancecat's reader of it (12.26 vs 10.06 at the top); the next runs agreed, so it may " +
		"depend on how SDK 0.31.0 partitioned that build; not explained", true},
}

func TestSDKRemoteFTSDiff(t *testing.T) {
	dirs := testenv.SDKs(t)
	cfg, _ := seededRoot(t)
	url := serve(t, cfg)
	docs := ftsDiffCorpus(3300)
	batches := [][]ftsDiffDoc{docs[:1000], docs[1000:2000], docs[2000:3000]}
	local := t.TempDir()
	used := map[string]bool{}
	defer func() {
		if t.Failed() {
			return
		}
		for p, differed := range used {
			if !differed && !ftsDiffGapMayAgree(p) {
				t.Errorf("known gap %q covers no difference any more: take it off ftsDiffGaps", p)
			}
		}
	}()
	for vi, dir := range dirs {
		ver := testenv.SDKVersion(dir)
		t.Run(ver, func(t *testing.T) {
			for ti, tok := range ftsDiffTokenizers() {
				t.Run(tok.name, func(t *testing.T) {
					queries := tok.queries
					if queries == nil {
						queries = ftsDiffQueries()
					}
					table := fmt.Sprintf("t%d_%d", vi, ti)
					indices := []map[string]any{{"column": "text", "options": tok.options}, {"column": "title", "options": map[string]any{}}}
					build := map[string]any{"batches": batches, "indices": indices}
					if tok.appended {
						build["appended"] = [][]ftsDiffDoc{docs[3000:]}
					}
					tokenize := []map[string]any{
						{"text": "The Quick brown FOXES jumped over Café naïve glaciers, don't", "column": "text"},
					}
					run := func(conn map[string]any, table string, build any) ftsDiffOut {
						job := map[string]any{"conn": conn, "table": table, "queries": queries, "tokenize": tokenize}
						if build != nil {
							job["build"] = build
						}
						var out ftsDiffOut
						testenv.NodeJSON(t, &out, testenv.Script("index", "sdk-fts-diff.mjs"), dir, testenv.JobFile(t, job))
						return out
					}
					emb := run(map[string]any{"kind": "local", "dir": filepath.Join(local, ver)}, table, build)
					// the SDK builds the index on lancecat's root (namespace mode), lancecat answers
					run(map[string]any{"kind": "namespace", "url": url}, "n"+table, build)
					sdkBuilt := run(map[string]any{"kind": "remote", "url": url}, "n"+table, nil)
					// lancecat builds the index (remote create_index) and answers
					ours := run(map[string]any{"kind": "remote", "url": url}, "r"+table, build)
					for _, side := range []struct {
						name string
						out  ftsDiffOut
					}{{"sdk-built", sdkBuilt}, {"lancecat-built", ours}} {
						for qi, q := range queries {
							key := ver + "/" + tok.name + "/" + side.name + "/" + q.Name
							problem := ftsDiffCompare(emb.Results[qi], side.out.Results[qi])
							reportFTSDiff(t, used, key, problem, emb.Results[qi], side.out.Results[qi])
						}
						for k := range emb.Tokens {
							key := ver + "/" + tok.name + "/" + side.name + "/tokenize"
							e, r := testenv.JSON(t, emb.Tokens[k]), testenv.JSON(t, side.out.Tokens[k])
							problem := ""
							if e != r {
								problem = "tokens " + r + " want " + e
							}
							reportFTSDiff(t, used, key, problem, ftsDiffResult{}, ftsDiffResult{})
						}
					}
				})
			}
		})
	}
}

func ftsDiffGapMayAgree(pattern string) bool {
	for _, g := range ftsDiffGaps {
		if g.pattern == pattern {
			return g.mayAgree
		}
	}
	return false
}

// ftsDiffGapOf is the reason a known gap covers key ("" : none) and its pattern.
func ftsDiffGapOf(key string) (string, string) {
	for _, g := range ftsDiffGaps {
		if ok, _ := path.Match(g.pattern, key); ok {
			return g.reason, g.pattern
		}
	}
	return "", ""
}

// reportFTSDiff reports one case; used records, for each gap pattern that covered a case,
// whether one of its cases differed.
func reportFTSDiff(t *testing.T, used map[string]bool, key, problem string, emb, got ftsDiffResult) {
	t.Helper()
	gap, pattern := ftsDiffGapOf(key)
	known := gap != ""
	if known {
		// false: the pattern covered only agreeing cases so far
		used[pattern] = used[pattern] || problem != ""
	}
	switch {
	case problem == "" && known:
		t.Logf("%s: agrees (a known gap covers it: %s)", key, pattern)
	case problem == "":
		t.Logf("%s: ok (%d rows, top %s, max id %d)", key, len(emb.IDs), topScore(emb), maxID(emb))
	case known:
		t.Logf("%s: known gap (%s): %s", key, gap, problem)
	default:
		t.Errorf("%s: %s", key, problem)
	}
}

func topScore(r ftsDiffResult) string {
	if len(r.Scores) == 0 {
		return "-"
	}
	return fmt.Sprintf("%.4f", r.Scores[0])
}

// ftsDiffCompare is "" when got answers what want (the embedded SDK) answers: the same rows with
// the same scores (relative 1e-5: float32 sums in another order), rows tied at the cut of the
// limit aside; else what differs.
func ftsDiffCompare(want, got ftsDiffResult) string {
	if want.Error != "" || got.Error != "" {
		if want.Error != "" && got.Error != "" {
			return ""
		}
		return fmt.Sprintf("error %q, embedded error %q", got.Error, want.Error)
	}
	close := func(a, b float64) bool { return math.Abs(a-b) <= 1e-5*math.Max(1, math.Abs(b)) }
	ws, gs := map[int64]float64{}, map[int64]float64{}
	for i, id := range want.IDs {
		ws[id] = want.Scores[i]
	}
	for i, id := range got.IDs {
		gs[id] = got.Scores[i]
	}
	if len(want.IDs) != len(got.IDs) {
		return fmt.Sprintf("%d rows (top %s), embedded %d (top %s)", len(got.IDs), topScore(got), len(want.IDs), topScore(want))
	}
	cut := math.Inf(1)
	if len(want.Scores) > 0 {
		cut = slices.Min(want.Scores)
	}
	var bad []string
	for id, w := range ws {
		g, ok := gs[id]
		switch {
		case !ok && close(w, cut):
		case !ok:
			bad = append(bad, fmt.Sprintf("row %d (%.5f) missing", id, w))
		case !close(g, w):
			bad = append(bad, fmt.Sprintf("row %d scores %.5f, embedded %.5f", id, g, w))
		}
	}
	for id, g := range gs {
		if _, ok := ws[id]; !ok && !close(g, cut) {
			bad = append(bad, fmt.Sprintf("row %d (%.5f) extra", id, g))
		}
	}
	if len(bad) == 0 {
		return ""
	}
	slices.Sort(bad)
	if len(bad) > 4 {
		bad = append(bad[:4], fmt.Sprintf("and %d more", len(bad)-4))
	}
	return strings.Join(bad, "; ")
}

func maxID(r ftsDiffResult) int64 {
	if len(r.IDs) == 0 {
		return -1
	}
	return slices.Max(r.IDs)
}
