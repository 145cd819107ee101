package index

// Writing Lance's INVERTED index (LanceDB's FTS) in the layout every
// supported SDK reads: index_version 0, the "arrow" token set (Lance's
// TokenSetFormat::Arrow). Measured on the SDKs' own output
// (scripts/index/ftsdump): SDK 0.31.0 writes index_version 1 (an FST token
// set, fixed32 posting tails, list<list<binary>> positions), SDK 0.39.0
// index_version 2 (FST tokens, posting format_version 2 with impacts and a
// shared position stream), which 0.31.0 cannot open; both read version 0,
// whose files are:
//
//	metadata.lance       no rows of note; schema metadata "partitions" ("[0]"),
//	                     "params" (InvertedIndexParams as JSON), "token_set_format"
//	part_0_tokens.lance  _token utf8, _token_id uint32
//	part_0_docs.lance    _rowid uint64, _num_tokens uint32 (doc id = row number)
//	part_0_invert.lance  row = token id: _posting list<large_binary> (blocks of
//	                     128 docs), _max_score float32, _length uint32 (docs),
//	                     _position list<list<large_binary>> with positions
//
// A posting block is the block's max BM25 score (f32), then for a full
// block the doc ids delta-bit-packed (BitPacker4x sorted: first id, bit
// width, bits) and the frequencies bit-packed (bit width, bits); the last,
// partial block holds its doc ids and frequencies as plain u32s. A doc's
// positions are a list of binaries: the count (u32), then full blocks of
// 128 delta-packed positions, then the rest as plain u32s.
//
// Documents are the non-null values with at least one token (as 0.39.0
// does; 0.31.0 also counted empty ones), numbered in row id order.

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	lancefile "github.com/lancecat/lancecat/lance/file"
)

// The INVERTED index files and their metadata keys.
const (
	FTSMetadataFile    = "metadata.lance"
	InvertedDetailsURL = "/lance.table.InvertedIndexDetails"
)

func ftsPartFile(part uint64, name string) string {
	return "part_" + strconv.FormatUint(part, 10) + "_" + name
}

// FTSBuilder builds one INVERTED index segment (one partition).
type FTSBuilder struct {
	tok     *Tokenizer
	opts    BuildOptions
	tokenID map[string]uint32
	tokens  []string
	// per token: the docs containing it (ascending) and their frequencies
	postDocs  [][]uint32
	postFreqs [][]uint32
	postPos   [][][]uint32 // with_position: per token, per posting entry
	rowIDs    []uint64
	numTokens []uint32
	total     uint64
	scratch   []Token
	pairs     []tokPos
	rows      uint64
	// countEmpty: a non-null value without tokens is a document too (as
	// SDK 0.31.0's Lance counted them; for partitions added to its indices)
	countEmpty bool
}

type tokPos struct{ id, pos uint32 }

// NewFTSBuilder starts an index with the tokenizer of p.
func NewFTSBuilder(p TokenizerParams, opts BuildOptions) (*FTSBuilder, error) {
	tok, err := NewTokenizer(p)
	if err != nil {
		return nil, err
	}
	if opts.Mem == nil {
		opts.Mem = memory.DefaultAllocator
	}
	return &FTSBuilder{tok: tok.withCache(), opts: opts, tokenID: map[string]uint32{}}, nil
}

// Rows is the number of rows added.
func (b *FTSBuilder) Rows() uint64 { return b.rows }

// Params are the tokenizer parameters the index records.
func (b *FTSBuilder) Params() TokenizerParams { return b.tok.p }

// Add tokenizes one batch of a string column; values[i] is row ids[i].
// Row ids must come in ascending order across calls (a scan's order).
func (b *FTSBuilder) Add(values arrow.Array, ids []uint64) error {
	type strs interface {
		Value(int) string
		IsNull(int) bool
		Len() int
	}
	s, ok := values.(strs)
	if !ok || (values.DataType().ID() != arrow.STRING && values.DataType().ID() != arrow.LARGE_STRING) {
		return fmt.Errorf("%w: a full-text index needs a string column, not %s", ErrUnsupported, values.DataType())
	}
	for i := 0; i < s.Len(); i++ {
		b.rows++
		if s.IsNull(i) {
			continue
		}
		if n := len(b.rowIDs); n > 0 && ids[i] <= b.rowIDs[n-1] {
			return fmt.Errorf("lance index: row ids out of order (%d after %d)", ids[i], b.rowIDs[n-1])
		}
		b.addDoc(s.Value(i), ids[i])
	}
	return nil
}

func (b *FTSBuilder) addDoc(text string, rowID uint64) {
	b.scratch = b.tok.Tokenize(text, b.scratch[:0])
	if len(b.scratch) == 0 && !b.countEmpty {
		return
	}
	doc := uint32(len(b.rowIDs))
	b.rowIDs = append(b.rowIDs, rowID)
	b.numTokens = append(b.numTokens, uint32(len(b.scratch)))
	b.total += uint64(len(b.scratch))
	b.pairs = b.pairs[:0]
	for _, t := range b.scratch {
		id, ok := b.tokenID[t.Text]
		if !ok {
			id = uint32(len(b.tokens))
			text := strings.Clone(t.Text) // t.Text may share the batch's buffer
			b.tokenID[text] = id
			b.tokens = append(b.tokens, text)
			b.postDocs = append(b.postDocs, nil)
			b.postFreqs = append(b.postFreqs, nil)
			if b.tok.p.WithPosition {
				b.postPos = append(b.postPos, nil)
			}
		}
		b.pairs = append(b.pairs, tokPos{id, t.Position})
	}
	slices.SortFunc(b.pairs, func(x, y tokPos) int {
		if x.id != y.id {
			return int(x.id) - int(y.id)
		}
		return int(x.pos) - int(y.pos)
	})
	for i := 0; i < len(b.pairs); {
		j := i + 1
		for j < len(b.pairs) && b.pairs[j].id == b.pairs[i].id {
			j++
		}
		id := b.pairs[i].id
		b.postDocs[id] = append(b.postDocs[id], doc)
		b.postFreqs[id] = append(b.postFreqs[id], uint32(j-i))
		if b.tok.p.WithPosition {
			pos := make([]uint32, 0, j-i)
			for _, p := range b.pairs[i:j] {
				pos = append(pos, p.pos)
			}
			b.postPos[id] = append(b.postPos[id], pos)
		}
		i = j
	}
}

// lanceParams is metadata.lance's "params": Lance's InvertedIndexParams
// with the fields SDK 0.31.0 writes (0.39.0 defaults the newer ones).
type lanceParams struct {
	LanceTokenizer  string   `json:"lance_tokenizer"`
	BaseTokenizer   string   `json:"base_tokenizer"`
	Language        string   `json:"language"`
	WithPosition    bool     `json:"with_position"`
	MaxTokenLength  *int     `json:"max_token_length"`
	LowerCase       bool     `json:"lower_case"`
	Stem            bool     `json:"stem"`
	RemoveStopWords bool     `json:"remove_stop_words"`
	CustomStopWords []string `json:"custom_stop_words"`
	AsciiFolding    bool     `json:"ascii_folding"`
	MinNgramLength  int      `json:"min_ngram_length"`
	MaxNgramLength  int      `json:"max_ngram_length"`
	PrefixOnly      bool     `json:"prefix_only"`
}

// ParamsJSON is p as metadata.lance's "params".
func ParamsJSON(p TokenizerParams) ([]byte, error) {
	base := p.BaseTokenizer
	if base == "" {
		base = "simple"
	}
	lang := p.Language
	if lang == "" {
		lang = "English"
	}
	return json.Marshal(lanceParams{LanceTokenizer: "text", BaseTokenizer: base, Language: lang,
		WithPosition: p.WithPosition, MaxTokenLength: p.MaxTokenLength, LowerCase: p.LowerCase,
		Stem: p.Stem, RemoveStopWords: p.RemoveStopWords, CustomStopWords: p.CustomStopWords,
		AsciiFolding: p.AsciiFolding, MinNgramLength: 3, MaxNgramLength: 3})
}

// Finish writes the index files into st.
func (b *FTSBuilder) Finish(ctx context.Context, st Store) ([]File, error) {
	files, err := b.writePartition(ctx, st, 0)
	if err != nil {
		return nil, err
	}
	params, err := ParamsJSON(b.tok.p)
	if err != nil {
		return nil, err
	}
	f, err := b.writeMetadata(ctx, st, []uint64{0}, string(params), nil)
	if err != nil {
		return nil, err
	}
	return append(files, f), nil
}

// writePartition writes the builder's docs as partition part
// (part_<part>_tokens/docs/invert.lance).
func (b *FTSBuilder) writePartition(ctx context.Context, st Store, part uint64) ([]File, error) {
	var files []File
	mem := b.opts.Mem
	// Token ids are the ranks of the tokens in byte order, so the tokens
	// file is sorted both by token and by id: the SDKs load it into an
	// FST, whose builder takes the keys in order (measured: unsorted
	// tokens fail their search with "failed to insert token run", and
	// 0.39.0 misses tokens whose id is not their rank).
	order := make([]uint32, len(b.tokens))
	for i := range order {
		order[i] = uint32(i)
	}
	slices.SortFunc(order, func(x, y uint32) int { return strings.Compare(b.tokens[x], b.tokens[y]) })
	{
		tb := array.NewStringBuilder(mem)
		ib := array.NewUint32Builder(mem)
		for rank, id := range order {
			tb.Append(b.tokens[id])
			ib.Append(uint32(rank))
		}
		schema := arrow.NewSchema([]arrow.Field{
			{Name: "_token", Type: arrow.BinaryTypes.String},
			{Name: "_token_id", Type: arrow.PrimitiveTypes.Uint32},
		}, nil)
		f, err := b.writeRec(ctx, st, ftsPartFile(part, "tokens.lance"), schema, tb.NewArray(), ib.NewArray())
		if err != nil {
			return nil, err
		}
		files = append(files, f)
	}
	// docs
	{
		rb := array.NewUint64Builder(mem)
		nb := array.NewUint32Builder(mem)
		rb.AppendValues(b.rowIDs, nil)
		nb.AppendValues(b.numTokens, nil)
		md := arrow.NewMetadata([]string{"total_tokens"}, []string{strconv.FormatUint(b.total, 10)})
		schema := arrow.NewSchema([]arrow.Field{
			{Name: "_rowid", Type: arrow.PrimitiveTypes.Uint64},
			{Name: "_num_tokens", Type: arrow.PrimitiveTypes.Uint32},
		}, &md)
		f, err := b.writeRec(ctx, st, ftsPartFile(part, "docs.lance"), schema, rb.NewArray(), nb.NewArray())
		if err != nil {
			return nil, err
		}
		files = append(files, f)
	}
	// inverted lists
	{
		sc := bm25Stats{numDocs: uint64(len(b.rowIDs)), totalTokens: b.total}
		avgdl := sc.avgdl()
		pb := array.NewListBuilder(mem, arrow.BinaryTypes.LargeBinary)
		pv := pb.ValueBuilder().(*array.BinaryBuilder)
		msb := array.NewFloat32Builder(mem)
		lb := array.NewUint32Builder(mem)
		fields := []arrow.Field{
			{Name: "_posting", Type: arrow.ListOf(arrow.BinaryTypes.LargeBinary), Nullable: false},
			{Name: "_max_score", Type: arrow.PrimitiveTypes.Float32},
			{Name: "_length", Type: arrow.PrimitiveTypes.Uint32},
		}
		var posb *array.ListBuilder
		if b.tok.p.WithPosition {
			fields = append(fields, arrow.Field{Name: "_position", Type: arrow.ListOf(arrow.ListOf(arrow.BinaryTypes.LargeBinary)), Nullable: true})
			posb = array.NewListBuilder(mem, arrow.ListOf(arrow.BinaryTypes.LargeBinary))
		}
		var buf []byte
		for _, id := range order {
			docs, freqs := b.postDocs[id], b.postFreqs[id]
			idf := bm25IDF(uint64(len(docs)), sc.numDocs)
			pb.Append(true)
			var maxScore float32
			for lo := 0; lo < len(docs); lo += ftsBlock {
				hi := min(lo+ftsBlock, len(docs))
				var blockMax float32
				for k := lo; k < hi; k++ {
					s := idf * bm25DocWeight(freqs[k], b.numTokens[docs[k]], avgdl)
					blockMax = max(blockMax, s)
				}
				maxScore = max(maxScore, blockMax)
				buf = encodePostingBlock(buf[:0], blockMax, docs[lo:hi], freqs[lo:hi])
				pv.Append(buf)
			}
			msb.Append(maxScore)
			lb.Append(uint32(len(docs)))
			if posb != nil {
				posb.Append(true)
				inner := posb.ValueBuilder().(*array.ListBuilder)
				iv := inner.ValueBuilder().(*array.BinaryBuilder)
				for _, pos := range b.postPos[id] {
					inner.Append(true)
					encodePositions(pos, func(p []byte) { iv.Append(p) })
				}
			}
		}
		cols := []arrow.Array{pb.NewArray(), msb.NewArray(), lb.NewArray()}
		if posb != nil {
			cols = append(cols, posb.NewArray())
		}
		f, err := b.writeRec(ctx, st, ftsPartFile(part, "invert.lance"), arrow.NewSchema(fields, nil), cols...)
		if err != nil {
			return nil, err
		}
		files = append(files, f)
	}
	return files, nil
}

// writeMetadata writes metadata.lance naming partitions, with params (as
// metadata.lance's JSON) and extra keys.
func (b *FTSBuilder) writeMetadata(ctx context.Context, st Store, partitions []uint64, params string, extra map[string]string) (File, error) {
	parts, err := json.Marshal(partitions)
	if err != nil {
		return File{}, err
	}
	keys := []string{"partitions", "params", "token_set_format"}
	vals := []string{string(parts), params, "arrow"}
	for k, v := range extra {
		keys, vals = append(keys, k), append(vals, v)
	}
	md := arrow.NewMetadata(keys, vals)
	schema := arrow.NewSchema([]arrow.Field{{Name: "deleted_fragments", Type: arrow.BinaryTypes.Binary}}, &md)
	bb := array.NewBinaryBuilder(b.opts.Mem, arrow.BinaryTypes.Binary)
	bb.Append(emptyRoaring32)
	return b.writeRec(ctx, st, FTSMetadataFile, schema, bb.NewArray())
}

// emptyRoaring32 is an empty 32-bit RoaringBitmap's portable serialization
// (metadata.lance's deleted_fragments, as SDK 0.31.0 writes it).
var emptyRoaring32 = []byte{0x3a, 0x30, 0, 0, 0, 0, 0, 0}

func (b *FTSBuilder) writeRec(ctx context.Context, st Store, name string, schema *arrow.Schema, cols ...arrow.Array) (File, error) {
	n := int64(cols[0].Len())
	rec := array.NewRecordBatch(schema, cols, n)
	defer rec.Release()
	for _, c := range cols {
		c.Release()
	}
	var buf bytes.Buffer
	w, err := lancefile.NewWriter(&buf, schema, lancefile.WriterOptions{Version: b.opts.FileVersion})
	if err != nil {
		return File{}, fmt.Errorf("lance index: %s: %w", name, err)
	}
	if n > 0 {
		if err := w.Write(rec); err != nil {
			return File{}, fmt.Errorf("lance index: %s: %w", name, err)
		}
	}
	if err := w.Close(); err != nil {
		return File{}, fmt.Errorf("lance index: %s: %w", name, err)
	}
	size := int64(buf.Len())
	if err := st.Put(ctx, name, &buf, size); err != nil {
		return File{}, fmt.Errorf("lance index: %s: %w", name, err)
	}
	return File{Path: name, Size: size}, nil
}

// encodePostingBlock appends one posting block (at most 128 docs).
func encodePostingBlock(dst []byte, maxScore float32, docs, freqs []uint32) []byte {
	dst = binary.LittleEndian.AppendUint32(dst, math.Float32bits(maxScore))
	if len(docs) == ftsBlock {
		dst = packSorted4x(dst, (*[ftsBlock]uint32)(docs))
		return packPlain4x(dst, (*[ftsBlock]uint32)(freqs))
	}
	for _, d := range docs {
		dst = binary.LittleEndian.AppendUint32(dst, d)
	}
	for _, f := range freqs {
		dst = binary.LittleEndian.AppendUint32(dst, f)
	}
	return dst
}

// encodePositions emits one doc's positions as Lance's binaries.
func encodePositions(pos []uint32, emit func([]byte)) {
	emit(binary.LittleEndian.AppendUint32(nil, uint32(len(pos))))
	i := 0
	for ; i+ftsBlock <= len(pos); i += ftsBlock {
		emit(packSorted4x(nil, (*[ftsBlock]uint32)(pos[i:i+ftsBlock])))
	}
	if i < len(pos) {
		var b []byte
		for _, p := range pos[i:] {
			b = binary.LittleEndian.AppendUint32(b, p)
		}
		emit(b)
	}
}
