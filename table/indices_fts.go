package table

// The full-text index (Lance's INVERTED, LanceDB's FTS) of create_table_index.

import (
	"context"

	"github.com/lancecat/lancecat/catalog"
	nserr "github.com/lancecat/lancecat/errors"
	"github.com/lancecat/lancecat/lance"
	"github.com/lancecat/lancecat/lance/index"
	"github.com/lancecat/lancecat/lance/index/tableindex"
	"github.com/lancecat/lancecat/lance/pb/tablepb"
)

// planFTSIndex is the full-text build. Its tokenizer parameters need no data, so they are
// resolved and checked here, before either path runs: a bad one is a 400 at once, on a large
// table too (no background task is started for a build that could only fail).
func (h *Table) planFTSIndex(req catalog.CreateIndexRequest) (indexPlan, error) {
	if req.Column == "" {
		return indexPlan{}, nserr.InvalidInputf("column must name the column to index")
	}
	params, err := ftsTokenizerParams(req.FTS)
	if err != nil {
		return indexPlan{}, err
	}
	return indexPlan{
		name: defaultIndexName(req), kind: "INVERTED", column: req.Column, branch: req.Branch,
		check: func(ctx context.Context, ds *lance.Dataset) error {
			return tableindex.CheckIndexTarget(ctx, ds, req.Column, req.Name, req.Replace)
		},
		build: func(ctx context.Context, _ *lance.Dataset) (uint64, error) { return h.createFTSIndex(ctx, req, params) },
	}, nil
}

// ftsTokenizerParams is the client's tokenizer parameters over Lance's defaults. Parameters
// lancecat cannot honour (another base tokenizer or language, a length that is not positive) are
// 400 InvalidInput.
func ftsTokenizerParams(f catalog.FTSIndexParams) (index.TokenizerParams, error) {
	p := index.DefaultTokenizerParams()
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
			return p, nserr.InvalidInputf("max_token_length must be positive, not %d", *f.MaxTokenLength)
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
	p.CustomStopWords = f.CustomStopWords
	if f.MinNgramLength != nil {
		p.MinNgramLength = *f.MinNgramLength
	}
	if f.MaxNgramLength != nil {
		p.MaxNgramLength = *f.MaxNgramLength
	}
	if f.PrefixOnly != nil {
		p.PrefixOnly = *f.PrefixOnly
	}
	if _, err := index.NewTokenizer(p); err != nil {
		return p, nserr.InvalidInputf("full-text index parameters: %v", err)
	}
	return p, nil
}

// createFTSIndex builds an INVERTED index on req.Column with the checked tokenizer parameters p;
// nothing is written or committed on a failure.
func (h *Table) createFTSIndex(ctx context.Context, req catalog.CreateIndexRequest, p index.TokenizerParams) (uint64, error) {
	t := h.t
	ds, err := h.dataset(req.Branch)
	if err != nil {
		return 0, err
	}
	ver, err := tableindex.CreateFTSIndex(ctx, ds, tableindex.FTSIndexOptions{Column: req.Column, Name: req.Name, Replace: req.Replace, Params: p})
	if err != nil {
		return 0, indexErr(t, err)
	}
	return ver.Number(), nil
}

// ftsIndexDetails is the tokenizer configuration a full-text index's listing carries (its
// index_details; "" for another index type): the remote client's Table.tokenize rebuilds the
// index's tokenizer from it and fails without it. An index whose metadata cannot be read is
// listed without it (the listing is what a user reads to find and drop a broken index; the
// failure shows when the index is queried).
func (h *Table) ftsIndexDetails(ctx context.Context, branch string, ver *lance.Version, seg *tablepb.IndexMetadata) string {
	if index.TypeName(seg.GetIndexDetails().GetTypeUrl()) != "FTS" {
		return ""
	}
	ds, err := h.dataset(branch)
	if err != nil {
		return ""
	}
	p, err := tableindex.FTSIndexParams(ctx, ds, ver, seg)
	if err != nil {
		return ""
	}
	return p
}
