package index

// The tokenizer of Lance's INVERTED index, as Lance (tantivy's analyzers)
// runs it: a base tokenizer, then in this order the filters RemoveLong
// (tokens of max_token_length UTF-8 bytes or more are dropped), LowerCase,
// Stemmer (Snowball), StopWords (applied to the stemmed token, so "being"
// is dropped as "be" but "does" is kept as "doe") and AsciiFolding. Every
// token keeps the position the base tokenizer gave it, so phrase queries
// see the gaps the filters leave. Measured against SDK 0.39.0 and 0.31.0
// (scripts/index/ftsdump on indices of single-word documents):
// RemoveLong keeps 39-byte tokens and drops 40-byte ones; 0.39.0 removes
// NLTK's English stop words (ftsStopWordsEnglish), 0.31.0 tantivy's
// 33-word Lucene list (ftsStopWordsLucene).

import (
	"fmt"
	"math"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/kljensen/snowball/english"
	"golang.org/x/text/unicode/norm"
)

// TokenizerParams are the tokenizer parts of Lance's InvertedIndexParams
// (the JSON names are those of metadata.lance's "params").
type TokenizerParams struct {
	BaseTokenizer   string `json:"base_tokenizer"`
	Language        string `json:"language"`
	WithPosition    bool   `json:"with_position"`
	MaxTokenLength  *int   `json:"max_token_length"`
	LowerCase       bool   `json:"lower_case"`
	Stem            bool   `json:"stem"`
	RemoveStopWords bool   `json:"remove_stop_words"`
	AsciiFolding    bool   `json:"ascii_folding"`
	// CustomStopWords replaces the language's list when set.
	CustomStopWords []string `json:"custom_stop_words"`
	// The ngram base tokenizer's (tantivy's NgramTokenizer): every run of
	// MinNgramLength to MaxNgramLength characters of the whole text, spaces
	// included, or with PrefixOnly only those the text begins with.
	MinNgramLength int  `json:"min_ngram_length"`
	MaxNgramLength int  `json:"max_ngram_length"`
	PrefixOnly     bool `json:"prefix_only"`
	// StopWordList selects the built-in English list: "" or "nltk"
	// (SDK 0.39.0), "lucene" (SDK 0.31.0 and indices it built). Not
	// written to Lance's params.
	StopWordList string `json:"-"`
}

// DefaultTokenizerParams are Lance's defaults (InvertedIndexParams::new):
// simple, English, no positions, max_token_length 40, lower case, stem,
// remove stop words, ASCII folding.
func DefaultTokenizerParams() TokenizerParams {
	n := 40
	return TokenizerParams{BaseTokenizer: "simple", Language: "English", MaxTokenLength: &n,
		LowerCase: true, Stem: true, RemoveStopWords: true, AsciiFolding: true}
}

// Token is one token and its position in the text.
type Token struct {
	Text     string
	Position uint32
}

// Tokenizer turns text into the index's tokens.
type Tokenizer struct {
	p     TokenizerParams
	stops map[string]bool
}

// NewTokenizer checks p and builds its tokenizer; an unsupported base
// tokenizer or language is an ErrUnsupported.
func NewTokenizer(p TokenizerParams) (*Tokenizer, error) {
	switch p.BaseTokenizer {
	case "", "simple", "whitespace", "raw":
	case "ngram":
		if p.MinNgramLength == 0 && p.MaxNgramLength == 0 {
			p.MinNgramLength, p.MaxNgramLength = 3, 3 // Lance's defaults
		}
		if p.MinNgramLength <= 0 || p.MaxNgramLength < p.MinNgramLength || p.MaxNgramLength > maxNgram {
			return nil, fmt.Errorf("%w: ngram lengths %d to %d (1 <= min <= max <= %d)", ErrInvalidParams, p.MinNgramLength, p.MaxNgramLength, maxNgram)
		}
	default:
		return nil, fmt.Errorf("%w: base tokenizer %q (lancecat has simple, whitespace, raw and ngram)", ErrUnsupported, p.BaseTokenizer)
	}
	if p.Language == "" {
		p.Language = "English"
	}
	if (p.Stem || (p.RemoveStopWords && p.CustomStopWords == nil)) && !strings.EqualFold(p.Language, "English") {
		return nil, fmt.Errorf("%w: language %q (lancecat stems and removes stop words for English only)", ErrUnsupported, p.Language)
	}
	// Lance records max_token_length as a uint32 (InvertedIndexDetails):
	// a longer one would be written truncated, and an SDK reading the
	// index would tokenize its queries with another length.
	if p.MaxTokenLength != nil && (*p.MaxTokenLength <= 0 || *p.MaxTokenLength > math.MaxUint32) {
		return nil, fmt.Errorf("%w: max_token_length %d is out of range (1 to %d)", ErrInvalidParams, *p.MaxTokenLength, uint64(math.MaxUint32))
	}
	t := &Tokenizer{p: p}
	if p.RemoveStopWords {
		words := ftsStopWordsEnglish
		if p.StopWordList == "lucene" {
			words = ftsStopWordsLucene
		}
		if p.CustomStopWords != nil {
			words = p.CustomStopWords
		}
		t.stops = make(map[string]bool, len(words))
		for _, w := range words {
			t.stops[w] = true
		}
	}
	return t, nil
}

// Params are the tokenizer's parameters.
func (t *Tokenizer) Params() TokenizerParams { return t.p }

// maxNgram bounds the ngram lengths a client may ask for: a text of n
// characters makes up to n × (max - min + 1) tokens.
const maxNgram = 64

// Tokenize appends text's tokens to out.
func (t *Tokenizer) Tokenize(text string, out []Token) []Token {
	var spans [64]span
	ngram := t.p.BaseTokenizer == "ngram"
	for pos, sp := range t.baseTokens(text, spans[:0]) {
		if tok, ok := t.filter(text[sp.start:sp.end]); ok {
			if ngram {
				pos = 0 // tantivy gives every ngram position 0
			}
			out = append(out, Token{Text: tok, Position: uint32(pos)})
		}
	}
	return out
}

// ngrams appends text's ngrams in tantivy's order: by start character, then
// by length.
func (t *Tokenizer) ngrams(text string, out []span) []span {
	var starts [64]int
	bounds := starts[:0] // byte offset of every character, and len(text)
	for i := range text {
		bounds = append(bounds, i)
	}
	bounds = append(bounds, len(text))
	chars := len(bounds) - 1
	for c := 0; c < chars; c++ {
		if t.p.PrefixOnly && c > 0 {
			break
		}
		for n := t.p.MinNgramLength; n <= t.p.MaxNgramLength && c+n <= chars; n++ {
			out = append(out, span{bounds[c], bounds[c+n]})
		}
	}
	return out
}

// span is a base token's byte range in its text.
type span struct{ start, end int }

// baseTokens appends the byte ranges of text's base tokens to out, in
// order: a token's position is its index, so phrase queries see the gaps
// the filters leave. (Ranges rather than a callback: the builder calls
// this per document, and a closure would be allocated each time.)
func (t *Tokenizer) baseTokens(text string, out []span) []span {
	switch t.p.BaseTokenizer {
	case "ngram":
		return t.ngrams(text, out)
	case "raw":
		return append(out, span{0, len(text)})
	case "whitespace":
		// strings.FieldsFunc's fields: maximal runs of non-space
		start := -1
		for i, r := range text {
			if r == ' ' || r == '\t' || r == '\n' || r == '\r' || unicode.IsSpace(r) {
				if start >= 0 {
					out = append(out, span{start, i})
					start = -1
				}
			} else if start < 0 {
				start = i
			}
		}
		if start >= 0 {
			out = append(out, span{start, len(text)})
		}
		return out
	}
	// simple: maximal runs of alphanumeric characters
	start := -1
	for i := 0; i < len(text); {
		c := text[i]
		var alnum bool
		n := 1
		if c < utf8.RuneSelf {
			alnum = c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
		} else {
			var r rune
			r, n = utf8.DecodeRuneInString(text[i:])
			alnum = isAlnum(r)
		}
		if alnum {
			if start < 0 {
				start = i
			}
		} else if start >= 0 {
			out = append(out, span{start, i})
			start = -1
		}
		i += n
	}
	if start >= 0 {
		out = append(out, span{start, len(text)})
	}
	return out
}

// filter runs the token filters on a base token in Lance's order; false:
// the token is dropped (too long, or a stop word).
func (t *Tokenizer) filter(tok string) (string, bool) {
	if t.p.MaxTokenLength != nil && len(tok) >= *t.p.MaxTokenLength {
		return "", false
	}
	if t.p.LowerCase {
		tok = lower(tok)
	}
	if t.p.Stem {
		tok = stem(tok)
	}
	if t.stops != nil && t.stops[tok] {
		return "", false
	}
	if t.p.AsciiFolding {
		tok = fold(tok)
	}
	return tok, true
}

// isAlnum is Rust's char::is_alphanumeric (Alphabetic or Numeric).
func isAlnum(r rune) bool {
	if r < utf8.RuneSelf {
		return r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9'
	}
	return unicode.IsLetter(r) || unicode.IsNumber(r) || unicode.Is(unicode.Other_Alphabetic, r)
}

func lower(s string) string {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= utf8.RuneSelf || (c >= 'A' && c <= 'Z') {
			return strings.ToLower(s)
		}
	}
	return s
}

// stem is the Snowball English (Porter2) stemmer tantivy's Stemmer runs
// (rust-stemmers); kljensen/snowball implements the same algorithm.
// Words of non-ASCII letters go through it too, as with tantivy.
// Known difference: Snowball 2.2 (which SDK 0.39.0's stemmer follows;
// measured: it keeps "organizations" apart from "organ", and "emergency"
// and "later" differ too) starts R1 after the prefixes organ, emerg,
// later, past and univers; kljensen/snowball knows only gener, commun and
// arsen, so words with those prefixes may stem differently from the SDK's.
//
// The stemmer sees the token as it is: rust-stemmers takes an upper-case
// letter for a consonant that no suffix matches ("Running" stays, "Reilly"
// becomes "Reilli"), where kljensen/snowball lowercases first. Upper-case
// letters are handed to it as private-use characters, which it neither
// lowercases nor matches, and put back after.
func stem(s string) string {
	var upper []rune
	for _, r := range s {
		if unicode.IsUpper(r) {
			upper = append(upper, r)
		}
	}
	if len(upper) == 0 {
		return english.Stem(s, true)
	}
	if len(upper) > 0x1900 {
		return s
	}
	var b strings.Builder
	k := 0
	for _, r := range s {
		if unicode.IsUpper(r) {
			b.WriteRune(0xE000 + rune(k))
			k++
			continue
		}
		b.WriteRune(r)
	}
	st := english.Stem(b.String(), true)
	b.Reset()
	for _, r := range st {
		if r >= 0xE000 && r < 0xE000+rune(len(upper)) {
			r = upper[r-0xE000]
		}
		b.WriteRune(r)
	}
	return b.String()
}

// fold is Lucene's ASCIIFoldingFilter as tantivy ports it, for the
// characters text meets in practice: decomposable letters lose their
// marks (é → e), and the letters that do not decompose map by the table.
func fold(s string) string {
	ascii := true
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			ascii = false
			break
		}
	}
	if ascii {
		return s
	}
	var b strings.Builder
	for _, r := range norm.NFD.String(s) {
		if r < utf8.RuneSelf {
			b.WriteRune(r)
			continue
		}
		if unicode.Is(unicode.Mn, r) {
			continue
		}
		if m, ok := foldTable[r]; ok {
			b.WriteString(m)
			continue
		}
		b.WriteRune(r)
	}
	return b.String()
}

var foldTable = map[rune]string{
	'ß': "ss", 'æ': "ae", 'Æ': "AE", 'œ': "oe", 'Œ': "OE", 'ø': "o", 'Ø': "O", 'đ': "d", 'Đ': "D",
	'ł': "l", 'Ł': "L", 'þ': "th", 'Þ': "TH", 'ð': "d", 'Ð': "D", 'ı': "i", 'ħ': "h", 'Ħ': "H",
	'ŀ': "l", 'Ŀ': "L", 'ŉ': "'n", 'ſ': "s", 'ĸ': "q", 'ŋ': "n", 'Ŋ': "N", 'ƒ': "f",
	'ﬀ': "ff", 'ﬁ': "fi", 'ﬂ': "fl", 'ﬃ': "ffi", 'ﬄ': "ffl", 'ﬆ': "st", 'Ĳ': "IJ", 'ĳ': "ij",
	'‘': "'", '’': "'", '“': "\"", '”': "\"", '–': "-", '—': "-",
}

// ftsStopWordsEnglish is NLTK's English list, which SDK 0.39.0 removes
// (measured: scripts/index/ftsdump; "would", "could", "ought" are kept),
// with its forms in apostrophes, which only a whitespace or raw base
// tokenizer leaves whole (measured: "don't" is dropped).
var ftsStopWordsEnglish = strings.Fields(`i me my myself we our ours ourselves you your yours yourself
yourselves he him his himself she her hers herself it its itself they them their theirs themselves
what which who whom this that these those am is are was were be been being have has had having do
does did doing a an the and but if or because as until while of at by for with about against between
into through during before after above below to from up down in out on off over under again further
then once here there when where why how all any both each few more most other some such no nor not
only own same so than too very s t can will just don should now d ll m o re ve y ain aren couldn didn
doesn hadn hasn haven isn ma mightn mustn needn shan shouldn wasn weren won wouldn
you're you've you'll you'd she's it's that'll don't should've aren't couldn't didn't doesn't hadn't
hasn't haven't isn't mightn't mustn't needn't shan't shouldn't wasn't weren't won't wouldn't`)

// ftsStopWordsLucene is tantivy's English list, which SDK 0.31.0 removes.
var ftsStopWordsLucene = strings.Fields(`a an and are as at be but by for if in into is it no not of on
or such that the their then there these they this to was will with`)
