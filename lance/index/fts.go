package index

// The contract between the full-text index (Lance's INVERTED, LanceDB's
// FTS) and the query engine. The tokenizer, writer and reader live beside
// it; the query engine (query/) only uses what is declared here and
// lance.Dataset's opener.

import "context"

// FTSQueryKind is the shape of a full-text query.
type FTSQueryKind int

// The full-text query shapes of the spec's full_text_query.
const (
	// Match: any of the terms (OR), or all of them with Operator "AND";
	// Fuzziness and Boost as the spec's match query carries them.
	Match FTSQueryKind = iota
	// Phrase: the terms adjacent in order, Slop apart at most (needs
	// positions).
	Phrase
	// Boolean: Must, Should and MustNot sub-queries.
	Boolean
)

// FTSQuery is one full-text query against one column's index.
type FTSQuery struct {
	Kind      FTSQueryKind
	Terms     string // the query text, tokenized by the index's tokenizer
	Operator  string // "OR" (default) or "AND" for Match
	Slop      int    // Phrase
	Fuzziness int    // Match (0: exact terms)
	// MaxExpansions bounds the index tokens a fuzzy match expands to, over all its terms
	// (Lance's max_expansions; 0: Lance's default 50); PrefixLength is the leading bytes
	// of each term an expansion keeps unchanged.
	MaxExpansions, PrefixLength int
	Boost                       float32
	Must, Should, MustNot       []FTSQuery
}

// ScoredRow is one hit of a full-text search.
type ScoredRow struct {
	RowID uint64 // a row address on a table without stable row ids
	Score float32
}

// FTSReader is an opened INVERTED index segment (_indices/<uuid>/).
type FTSReader interface {
	// Search returns at most limit hits (limit <= 0: all) ordered by
	// BM25 score descending (ties by RowID ascending). Allow, when set,
	// is the prefilter. Rows deleted since the build are the caller's to
	// drop.
	Search(ctx context.Context, q FTSQuery, limit int, allow func(rowID uint64) bool) ([]ScoredRow, error)
	Close() error
}
