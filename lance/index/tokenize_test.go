package index

import (
	"testing"

	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"
)

// The tokenizer against what SDK 0.39.0's Table.tokenize answered for the same text and index
// options (measured 2026-12-04; positions as the index stores them, before the SDK's query-side
// shift to the first kept token).
func TestTokenizerOptionsAsSDK(t *testing.T) {
	def := DefaultTokenizerParams
	with := func(f func(p *TokenizerParams)) TokenizerParams { p := def(); f(&p); return p }
	cases := []struct {
		name string
		p    TokenizerParams
		text string
		want []Token
	}{
		{"whitespace drops NLTK's apostrophe stop words", with(func(p *TokenizerParams) { p.BaseTokenizer = "whitespace" }),
			"don't stop", []Token{{"stop", 1}}},
		{"whitespace keeps punctuation", with(func(p *TokenizerParams) { p.BaseTokenizer = "whitespace" }),
			"glacier! (river) , e-mail U.S.A.", []Token{{"glacier!", 0}, {"(river)", 1}, {",", 2}, {"e-mail", 3}, {"u.s.a.", 4}}},
		{"without lower case the stemmer keeps the case", with(func(p *TokenizerParams) { p.LowerCase = false }),
			"it's x O'Reilly Café Zürich naïve CAFÉ", []Token{{"x", 2}, {"O", 3}, {"Reilli", 4}, {"Cafe", 5}, {"Zurich", 6}, {"naiv", 7}, {"CAFE", 8}}},
		{"without folding", with(func(p *TokenizerParams) { p.AsciiFolding = false }),
			"Café Zürich naïve", []Token{{"café", 0}, {"zürich", 1}, {"naïv", 2}}},
		{"ngram 2..3 over the whole text", with(func(p *TokenizerParams) {
			p.BaseTokenizer, p.MinNgramLength, p.MaxNgramLength, p.Stem, p.RemoveStopWords = "ngram", 2, 3, false, false
		}), "Café x", []Token{{"ca", 0}, {"caf", 0}, {"af", 0}, {"afe", 0}, {"fe", 0}, {"fe ", 0}, {"e ", 0}, {"e x", 0}, {" x", 0}}},
		{"ngram prefix only", with(func(p *TokenizerParams) {
			p.BaseTokenizer, p.MinNgramLength, p.MaxNgramLength, p.PrefixOnly, p.Stem, p.RemoveStopWords = "ngram", 2, 3, true, false, false
		}), "running fast", []Token{{"ru", 0}, {"run", 0}}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			tok, err := NewTokenizer(c.p)
			assert.NilError(t, err)
			assert.Check(t, is.DeepEqual(tok.Tokenize(c.text, nil), c.want))
		})
	}
}

func TestTokenizerRefusesBadNgrams(t *testing.T) {
	for _, mm := range [][2]int{{0, 3}, {4, 3}, {1, maxNgram + 1}} {
		p := DefaultTokenizerParams()
		p.BaseTokenizer, p.MinNgramLength, p.MaxNgramLength = "ngram", mm[0], mm[1]
		_, err := NewTokenizer(p)
		assert.Check(t, is.ErrorIs(err, ErrInvalidParams), "%v", mm)
	}
}

// fuzzy expansion as Lance's expand_fuzzy: byte order, max_expansions over all terms,
// prefix_length leading bytes kept.
func TestFuzzyExpansion(t *testing.T) {
	st := buildFTSSample(t, []string{"bank band bane bang bark", "dank dark", "rain rein ruin main"}, false)
	r, err := OpenFTS(t.Context(), st)
	assert.NilError(t, err)
	defer r.Close()
	fr := r.(*ftsReader)
	got := func(q FTSQuery) [][]string { return fr.fuzzy(fr.queryTokens(q.Terms), q) }
	assert.Check(t, is.DeepEqual(got(FTSQuery{Terms: "bank", Fuzziness: 1}), [][]string{{"band", "bane", "bang", "bank", "bark", "dank"}}))
	assert.Check(t, is.DeepEqual(got(FTSQuery{Terms: "bank", Fuzziness: 1, MaxExpansions: 2}), [][]string{{"band", "bane"}}))
	assert.Check(t, is.DeepEqual(got(FTSQuery{Terms: "bank", Fuzziness: 2, PrefixLength: 3}), [][]string{{"band", "bane", "bang", "bank"}}))
	assert.Check(t, is.DeepEqual(got(FTSQuery{Terms: "rain bank", Fuzziness: 1, MaxExpansions: 4}), [][]string{{"main", "rain", "rein", "ruin"}, nil}))
}
