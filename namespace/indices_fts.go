package namespace

// The full-text index (Lance's INVERTED, LanceDB's FTS) of create_table_index.

import (
	"context"

	nserr "github.com/lancecat/lancecat/errors"
	"github.com/lancecat/lancecat/lance"
	"github.com/lancecat/lancecat/lance/index"
)

// createFTSIndex builds an INVERTED index on req.Column with the client's
// tokenizer parameters over Lance's defaults. Parameters lancecat cannot
// honour (another base tokenizer or language) are 400 InvalidInput and
// nothing is written or committed.
func (h *TableHandle) createFTSIndex(ctx context.Context, req CreateIndexRequest) (uint64, error) {
	n, t := h.n, h.t
	if req.Column == "" {
		return 0, nserr.InvalidInputf("column must name the column to index")
	}
	p := index.DefaultTokenizerParams()
	f := req.FTS
	if f.WithPosition != nil {
		p.WithPosition = *f.WithPosition
	}
	if f.BaseTokenizer != nil {
		p.BaseTokenizer = *f.BaseTokenizer
	}
	if f.Language != nil {
		p.Language = *f.Language
	}
	if f.MaxTokenLength != nil {
		if *f.MaxTokenLength <= 0 {
			return 0, nserr.InvalidInputf("max_token_length must be positive, not %d", *f.MaxTokenLength)
		}
		v := *f.MaxTokenLength
		p.MaxTokenLength = &v
	}
	if f.LowerCase != nil {
		p.LowerCase = *f.LowerCase
	}
	if f.Stem != nil {
		p.Stem = *f.Stem
	}
	if f.RemoveStopWords != nil {
		p.RemoveStopWords = *f.RemoveStopWords
	}
	if f.AsciiFolding != nil {
		p.AsciiFolding = *f.AsciiFolding
	}
	if _, err := index.NewTokenizer(p); err != nil {
		return 0, nserr.InvalidInputf("full-text index parameters: %v", err)
	}
	ds, err := n.dataset(t, req.Branch)
	if err != nil {
		return 0, err
	}
	ver, err := ds.CreateFTSIndex(ctx, lance.FTSIndexOptions{Column: req.Column, Name: req.Name, Replace: req.Replace, Params: p})
	if err != nil {
		return 0, indexErr(t, err)
	}
	return ver.Number(), nil
}
