package tableindex

// The full-text index (Lance's INVERTED, LanceDB's FTS): built in the
// index_version-0 layout every supported SDK reads (lance/index
// inverted_build.go), registered like the scalar indices.

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/anypb"

	"github.com/lancecat/lancecat/lance"
	"github.com/lancecat/lancecat/lance/index"
	"github.com/lancecat/lancecat/lance/pb/tablepb"
)

// FTSIndexOptions describe a full-text index to build.
type FTSIndexOptions struct {
	Column string
	// Name defaults to "<column>_idx".
	Name    string
	Replace bool
	// Params are the tokenizer parameters (index.DefaultTokenizerParams
	// for Lance's defaults).
	Params index.TokenizerParams
	Mem    memory.Allocator
	Now    time.Time
}

// CreateFTSIndex tokenizes the string column at the latest version,
// writes an INVERTED index under _indices/<uuid>/ and commits it.
func CreateFTSIndex(ctx context.Context, d *lance.Dataset, opts FTSIndexOptions) (*lance.Version, error) {
	t, err := prepareIndex(ctx, d, opts.Column, opts.Name, opts.Replace)
	if err != nil {
		return nil, err
	}
	head, field := t.head, t.field
	lt := field.GetLogicalType()
	if lt != "string" && lt != "large_string" {
		return nil, lance.Errorf(lance.ErrInvalidInput, "lance: a full-text index needs a string column; %q is %s", opts.Column, lt)
	}
	bld, err := index.NewFTSBuilder(opts.Params, index.BuildOptions{Mem: opts.Mem})
	if err != nil {
		return nil, lance.Errorf(lance.ErrInvalidInput, "lance: full-text index parameters: %w", err)
	}
	sc, err := d.Scan(ctx, lance.ScanOptions{Columns: []string{field.GetName()}, At: head, WithRowID: true, Mem: opts.Mem})
	if err != nil {
		return nil, err
	}
	for sc.Next() {
		rec := sc.RecordBatch()
		ids, ok := rec.Column(1).(*array.Uint64)
		if !ok {
			sc.Release()
			return nil, fmt.Errorf("lance: scan returned _rowid of type %s", rec.Column(1).DataType())
		}
		if err := bld.Add(rec.Column(0), ids.Uint64Values()); err != nil {
			sc.Release()
			return nil, err
		}
	}
	err = sc.Err()
	sc.Release()
	if err != nil {
		return nil, err
	}
	files, err := bld.Finish(ctx, t.store(d))
	if err != nil {
		return nil, err
	}
	details, err := ftsDetails(bld.Params())
	if err != nil {
		return nil, err
	}
	return commitIndex(ctx, d, t, files, details, 0, opts.Now)
}

// ftsDetails is the InvertedIndexDetails Lance records (language as a
// JSON string, "\"English\"", as the SDKs write it).
func ftsDetails(p index.TokenizerParams) (*anypb.Any, error) {
	base := p.BaseTokenizer
	if base == "" {
		base = "simple"
	}
	lang := p.Language
	if lang == "" {
		lang = "English"
	}
	det := &tablepb.InvertedIndexDetails{
		BaseTokenizer: proto.String(base), Language: `"` + lang + `"`, WithPosition: p.WithPosition,
		LowerCase: p.LowerCase, Stem: p.Stem, RemoveStopWords: p.RemoveStopWords, AsciiFolding: p.AsciiFolding,
		MinNgramLength: 3, MaxNgramLength: 3, PrefixOnly: p.PrefixOnly,
	}
	if p.MinNgramLength != 0 || p.MaxNgramLength != 0 {
		det.MinNgramLength, det.MaxNgramLength = uint32(p.MinNgramLength), uint32(p.MaxNgramLength)
	}
	if p.MaxTokenLength != nil {
		det.MaxTokenLength = proto.Uint32(uint32(*p.MaxTokenLength))
	}
	b, err := proto.Marshal(det)
	if err != nil {
		return nil, err
	}
	return &anypb.Any{TypeUrl: index.InvertedDetailsURL, Value: b}, nil
}

// OpenFTSIndex opens one segment of an INVERTED index of v, from the
// reader cache when a query opened it before. The caller closes it.
func OpenFTSIndex(ctx context.Context, d *lance.Dataset, v *lance.Version, seg *tablepb.IndexMetadata) (index.FTSReader, error) {
	if index.TypeName(seg.GetIndexDetails().GetTypeUrl()) != "FTS" {
		return nil, fmt.Errorf("%w: index %q is not a full-text index", lance.ErrInvalidInput, seg.GetName())
	}
	store, err := d.BaseStore(v, seg.BaseId)
	if err != nil {
		return nil, err
	}
	r, release, err := readerCache.acquire(ctx, cacheKey(d, seg, "fts"), segmentBytes(seg), func() (any, func() error, error) {
		r, err := index.OpenFTS(ctx, index.BucketStore(store, lance.IndexDir(seg)))
		if err != nil {
			return nil, nil, err
		}
		return r, r.Close, nil
	})
	if errors.Is(err, index.ErrUnsupported) {
		return nil, fmt.Errorf("%w: index %q: %v", lance.ErrUnsupportedFeature, seg.GetName(), err)
	}
	if err != nil {
		return nil, err
	}
	return cachedFTSReader{r.(index.FTSReader), release}, nil
}

// cachedFTSReader is a shared reader whose Close releases the caller's
// reference (the cache closes the reader itself).
type cachedFTSReader struct {
	index.FTSReader
	release func() error
}

func (r cachedFTSReader) Close() error { return r.release() }

// Unwrap is the shared reader, for code that needs its concrete type (the flat search of rows
// appended after the build reads the index's statistics).
func (r cachedFTSReader) Unwrap() index.FTSReader { return r.FTSReader }

// FTSIndexFor finds the full-text index of column at v: its name and
// segments; ErrIndexNotFound when the column has none.
func FTSIndexFor(v *lance.Version, column string) (string, []*tablepb.IndexMetadata, error) {
	field, err := lance.FieldByPath(v.Fields(), column)
	if err != nil {
		return "", nil, err
	}
	for _, idx := range v.Indices() {
		if lance.IsSystemIndex(idx) || index.TypeName(idx.GetIndexDetails().GetTypeUrl()) != "FTS" {
			continue
		}
		if f := idx.GetFields(); len(f) == 1 && f[0] == field.GetId() {
			return idx.GetName(), segmentsNamed(v, idx.GetName()), nil
		}
	}
	return "", nil, lance.Errorf(lance.ErrIndexNotFound, "lance: column %q has no full-text index", column)
}

// UnindexedFragments are the ids of v's fragments that none of segs
// covers (rows appended after the build), in manifest order: Lance
// searches them flat and merges their hits with the index's.
func UnindexedFragments(v *lance.Version, segs []*tablepb.IndexMetadata) ([]uint64, error) {
	covered, err := coveredFragments(segs)
	if err != nil {
		return nil, err
	}
	var out []uint64
	for _, f := range v.Manifest().GetFragments() {
		if !covered[uint32(f.GetId())] {
			out = append(out, f.GetId())
		}
	}
	return out, nil
}

// FTSIndexParams is the tokenizer configuration (Lance's InvertedIndexParams as JSON) of an
// INVERTED index segment of v, as its metadata.lance records it.
func FTSIndexParams(ctx context.Context, d *lance.Dataset, v *lance.Version, seg *tablepb.IndexMetadata) (string, error) {
	if index.TypeName(seg.GetIndexDetails().GetTypeUrl()) != "FTS" {
		return "", fmt.Errorf("%w: index %q is not a full-text index", lance.ErrInvalidInput, seg.GetName())
	}
	store, err := d.BaseStore(v, seg.BaseId)
	if err != nil {
		return "", err
	}
	return index.FTSParams(ctx, index.BucketStore(store, lance.IndexDir(seg)))
}
