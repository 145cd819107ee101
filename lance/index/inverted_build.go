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
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/lancecat/lancecat/lance/lancefile"
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
//
// Add tokenizes each batch on up to GOMAXPROCS goroutines, each with its
// own tokenizer cache and vocabulary (no locks on the hot path), into
// chunks of compact per-document postings kept in row order; Finish
// merges the chunks into one posting list per token, sized exactly by a
// counting pass (appending per token and document was most of the build's
// time and garbage). The output depends only on the rows: token ids are
// ranks in byte order and documents are numbered in row order, whatever
// goroutine tokenized them.
type FTSBuilder struct {
	tok     *Tokenizer
	opts    BuildOptions
	workers []*ftsWorker
	chunks  []*ftsChunk // in row order
	// pending are the chunks of the batch the inflight goroutines tokenize
	pending   []*ftsChunk
	inflight  sync.WaitGroup
	post      *ftsPostings
	rowIDs    []uint64
	numTokens []uint32
	total     uint64
	rows      uint64
	lastID    uint64
	anyID     bool
	// countEmpty: a non-null value without tokens is a document too (as
	// SDK 0.31.0's Lance counted them; for partitions added to its indices)
	countEmpty bool
}

// ftsPostings are a partition's posting lists, one per token, laid out
// flat: token t (tokens in byte order, so t is also its id) has the
// postings off[t]:off[t+1] of docs (ascending) and freqs, and, with
// positions, each posting's freqs[k] positions one after another in pos
// from posOff[t].
type ftsPostings struct {
	tokens      []string
	off, posOff []int
	docs, freqs []uint32
	pos         []uint32
}

// ftsWorker is one tokenizing goroutine's state, reused across batches.
type ftsWorker struct {
	tok *Tokenizer
	// ids maps a base token as it appears in the text to its local token
	// id (-1: the filters drop it), so a word seen before costs one map
	// lookup without allocation; bounded, as texts may be unbounded.
	ids     map[string]int32
	dict    map[string]uint32 // filtered token → local id
	texts   []string          // local id → filtered token
	spans   []span
	pairs   []tokPos
	scratch ftsChunk
}

type tokPos struct{ id, pos uint32 }

// maxCachedTokens bounds a worker's base-token cache.
const maxCachedTokens = 1 << 20

// ftsChunk is one worker's share of a batch: per document (in row order)
// its number of distinct tokens, then per distinct token (in local id
// order) the local id, frequency and, with positions, the ascending
// positions.
type ftsChunk struct {
	w         int
	rowIDs    []uint64
	numTokens []uint32
	nGroups   []uint32
	gTok      []uint32
	gFreq     []uint32
	pos       []uint32
}

// NewFTSBuilder starts an index with the tokenizer of p.
func NewFTSBuilder(p TokenizerParams, opts BuildOptions) (*FTSBuilder, error) {
	tok, err := NewTokenizer(p)
	if err != nil {
		return nil, err
	}
	return newFTSBuilder(tok, opts), nil
}

func newFTSBuilder(tok *Tokenizer, opts BuildOptions) *FTSBuilder {
	if opts.Mem == nil {
		opts.Mem = memory.DefaultAllocator
	}
	return &FTSBuilder{tok: tok, opts: opts}
}

// Rows is the number of rows added.
func (b *FTSBuilder) Rows() uint64 { return b.rows }

// Params are the tokenizer parameters the index records.
func (b *FTSBuilder) Params() TokenizerParams { return b.tok.p }

// ftsStrings is the part of arrow's String and LargeString the builder reads.
type ftsStrings interface {
	Value(int) string
	IsNull(int) bool
	Len() int
}

// minRowsPerWorker keeps small batches on one goroutine (a goroutine per
// handful of rows costs more than it saves).
const minRowsPerWorker = 512

// Add tokenizes one batch of a string column; values[i] is row ids[i].
// Row ids must come in ascending order across calls (a scan's order).
// The batch is read after Add returns (until the next Add or Finish): it
// is retained, so the caller may release it as usual.
func (b *FTSBuilder) Add(values arrow.Array, ids []uint64) error {
	s, ok := values.(ftsStrings)
	if !ok || (values.DataType().ID() != arrow.STRING && values.DataType().ID() != arrow.LARGE_STRING) {
		return fmt.Errorf("%w: a full-text index needs a string column, not %s", ErrUnsupported, values.DataType())
	}
	n := s.Len()
	if len(ids) < n {
		return fmt.Errorf("lance index: %d row ids for %d values", len(ids), n)
	}
	for i := range n {
		if s.IsNull(i) {
			continue
		}
		if b.anyID && ids[i] <= b.lastID {
			return fmt.Errorf("lance index: row ids out of order (%d after %d)", ids[i], b.lastID)
		}
		b.lastID, b.anyID = ids[i], true
	}
	b.rows += uint64(n)
	// The batch is tokenized while the caller reads the next one: wait
	// for the previous batch (its workers are reused), then start this
	// one's and return. Each goroutine holds a reference to the values
	// and releases it when done, so nothing leaks if the builder is
	// dropped mid-build.
	b.flush()
	parts := min(runtime.GOMAXPROCS(0), max(1, n/minRowsPerWorker))
	for len(b.workers) < parts {
		b.workers = append(b.workers, &ftsWorker{tok: b.tok, ids: map[string]int32{}, dict: map[string]uint32{}})
	}
	ids = slices.Clone(ids[:n]) // the caller's row ids may go with its batch
	b.pending = make([]*ftsChunk, parts)
	for w := range parts {
		lo, hi := n*w/parts, n*(w+1)/parts
		values.Retain()
		b.inflight.Go(func() {
			defer values.Release()
			b.pending[w] = b.workers[w].tokenize(w, s, ids, lo, hi, b.countEmpty)
		})
	}
	return nil
}

// flush waits for the batch being tokenized and files its chunks.
func (b *FTSBuilder) flush() {
	b.inflight.Wait()
	for _, c := range b.pending {
		b.rowIDs = append(b.rowIDs, c.rowIDs...)
		b.numTokens = append(b.numTokens, c.numTokens...)
		for _, k := range c.numTokens {
			b.total += uint64(k)
		}
		c.rowIDs, c.numTokens = nil, nil
		b.chunks = append(b.chunks, c)
	}
	b.pending = nil
}

// tokenize turns rows lo:hi of s into a chunk. It gathers into the
// worker's scratch and copies into a chunk of exactly that size: the
// chunks live until Finish, and growing them by appending allocated about
// twice what they keep.
func (w *ftsWorker) tokenize(wi int, s ftsStrings, ids []uint64, lo, hi int, countEmpty bool) *ftsChunk {
	c := &w.scratch
	c.rowIDs, c.numTokens, c.nGroups = c.rowIDs[:0], c.numTokens[:0], c.nGroups[:0]
	c.gTok, c.gFreq, c.pos = c.gTok[:0], c.gFreq[:0], c.pos[:0]
	withPos := w.tok.p.WithPosition
	for i := lo; i < hi; i++ {
		if s.IsNull(i) {
			continue
		}
		text := s.Value(i)
		w.spans = w.tok.baseTokens(text, w.spans[:0])
		w.pairs = w.pairs[:0]
		for p, sp := range w.spans {
			if id := w.lookup(text[sp.start:sp.end]); id >= 0 {
				w.pairs = append(w.pairs, tokPos{uint32(id), uint32(p)})
			}
		}
		if len(w.pairs) == 0 && !countEmpty {
			continue
		}
		c.rowIDs = append(c.rowIDs, ids[i])
		c.numTokens = append(c.numTokens, uint32(len(w.pairs)))
		// positions are ascending already: a stable sort by token keeps
		// them so within each token
		slices.SortStableFunc(w.pairs, func(x, y tokPos) int { return cmp.Compare(x.id, y.id) })
		groups := 0
		for j := 0; j < len(w.pairs); {
			k := j + 1
			for k < len(w.pairs) && w.pairs[k].id == w.pairs[j].id {
				k++
			}
			c.gTok = append(c.gTok, w.pairs[j].id)
			c.gFreq = append(c.gFreq, uint32(k-j))
			if withPos {
				for _, p := range w.pairs[j:k] {
					c.pos = append(c.pos, p.pos)
				}
			}
			groups++
			j = k
		}
		c.nGroups = append(c.nGroups, uint32(groups))
	}
	return &ftsChunk{w: wi, rowIDs: slices.Clone(c.rowIDs), numTokens: slices.Clone(c.numTokens),
		nGroups: slices.Clone(c.nGroups), gTok: slices.Clone(c.gTok), gFreq: slices.Clone(c.gFreq), pos: slices.Clone(c.pos)}
}

// lookup is the local id of a base token, -1 when the filters drop it.
func (w *ftsWorker) lookup(raw string) int32 {
	if id, ok := w.ids[raw]; ok {
		return id
	}
	id := int32(-1)
	if tok, ok := w.tok.filter(raw); ok {
		u, seen := w.dict[tok]
		if !seen {
			tok = strings.Clone(tok) // it may share the batch's buffer
			u = uint32(len(w.texts))
			w.dict[tok] = u
			w.texts = append(w.texts, tok)
		}
		id = int32(u)
	}
	if len(w.ids) < maxCachedTokens {
		w.ids[strings.Clone(raw)] = id
	}
	return id
}

// postings merges the chunks into the partition's posting lists (once;
// the chunks are released).
func (b *FTSBuilder) postings() *ftsPostings {
	if b.post != nil {
		return b.post
	}
	b.flush()
	// the vocabulary in byte order; each worker's local ids → ranks
	var vocab []string
	for _, w := range b.workers {
		vocab = append(vocab, w.texts...)
	}
	slices.Sort(vocab)
	vocab = slices.Compact(vocab)
	rank := make([][]uint32, len(b.workers))
	for i, w := range b.workers {
		rank[i] = make([]uint32, len(w.texts))
		for id, t := range w.texts {
			r, _ := slices.BinarySearch(vocab, t)
			rank[i][id] = uint32(r)
		}
	}
	// count the postings and positions of each token, then fill each
	// token's exact share in document order
	p := &ftsPostings{tokens: vocab, off: make([]int, len(vocab)+1), posOff: make([]int, len(vocab)+1)}
	for _, c := range b.chunks {
		for g, id := range c.gTok {
			t := rank[c.w][id]
			p.off[t+1]++
			p.posOff[t+1] += int(c.gFreq[g])
		}
	}
	for t := range vocab {
		p.off[t+1] += p.off[t]
		p.posOff[t+1] += p.posOff[t]
	}
	withPos := b.tok.p.WithPosition
	p.docs = make([]uint32, p.off[len(vocab)])
	p.freqs = make([]uint32, len(p.docs))
	next := slices.Clone(p.off[:len(vocab)])
	var nextPos []int
	if withPos {
		p.pos = make([]uint32, p.posOff[len(vocab)])
		nextPos = slices.Clone(p.posOff[:len(vocab)])
	}
	doc := uint32(0)
	for _, c := range b.chunks {
		g, at := 0, 0
		for _, ng := range c.nGroups {
			for _, id := range c.gTok[g : g+int(ng)] {
				t := rank[c.w][id]
				f := c.gFreq[g]
				k := next[t]
				next[t]++
				p.docs[k], p.freqs[k] = doc, f
				if withPos {
					copy(p.pos[nextPos[t]:], c.pos[at:at+int(f)])
					nextPos[t] += int(f)
					at += int(f)
				}
				g++
			}
			doc++
		}
	}
	b.chunks, b.workers = nil, nil
	b.post = p
	return p
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
	minN, maxN := p.MinNgramLength, p.MaxNgramLength
	if minN == 0 && maxN == 0 {
		minN, maxN = 3, 3 // Lance's defaults, recorded whatever the base tokenizer
	}
	return json.Marshal(lanceParams{LanceTokenizer: "text", BaseTokenizer: base, Language: lang,
		WithPosition: p.WithPosition, MaxTokenLength: p.MaxTokenLength, LowerCase: p.LowerCase,
		Stem: p.Stem, RemoveStopWords: p.RemoveStopWords, CustomStopWords: p.CustomStopWords,
		AsciiFolding: p.AsciiFolding, MinNgramLength: minN, MaxNgramLength: maxN, PrefixOnly: p.PrefixOnly})
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
	// The file streams into the store as it is written: buffering it
	// whole took a second copy of the largest file in fresh memory.
	pr, pw := io.Pipe()
	put := make(chan error, 1)
	go func() {
		err := st.Put(ctx, name, pr, -1)
		pr.CloseWithError(cmp.Or(err, io.ErrUnexpectedEOF)) // unblock the writer if Put stopped reading
		put <- err
	}()
	cw := &countingWriter{w: pw}
	err := writeLance(cw, schema, rec, b.opts.FileVersion)
	pw.CloseWithError(err) // nil: Put sees the end of the file
	if perr := <-put; err == nil {
		err = perr
	}
	if err != nil {
		return File{}, fmt.Errorf("lance index: %s: %w", name, err)
	}
	return File{Path: name, Size: cw.n}, nil
}

func writeLance(dst io.Writer, schema *arrow.Schema, rec arrow.RecordBatch, v lancefile.Version) error {
	w, err := lancefile.NewWriter(dst, schema, lancefile.WriterOptions{Version: v})
	if err != nil {
		return err
	}
	if rec.NumRows() > 0 {
		if err := w.Write(rec); err != nil {
			return err
		}
	}
	return w.Close()
}

// countingWriter counts the bytes written through it.
type countingWriter struct {
	w io.Writer
	n int64
}

func (c *countingWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	return n, err
}
