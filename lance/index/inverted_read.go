package index

// Reading Lance's INVERTED index, every layout the supported clients
// write: index_version 0 (token set as _token/_token_id columns; what
// lancecat writes, inverted_build.go), 1 (SDK 0.31.0: token set as an fst
// Map, fst.go; fixed32 posting tails; per-doc position lists) and 2 (SDK
// 0.39.0: format_version 2, posting_block_size docs a block, varint-delta
// posting tails, positions in one packed stream per token).

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
)

type ftsPart struct {
	// blockSize is the docs of a full posting block (128 before format 2);
	// varintTail: a partial last block is varint deltas, not fixed32.
	blockSize  int
	varintTail bool
	// format 2 positions: one stream per token, a start offset per block.
	streams         *array.LargeBinary
	streamOffsets   *array.List
	varintPositions bool
	tokens          map[string]uint32
	rowIDs          []uint64
	numTokens       []uint32
	total           uint64
	posting         *array.List
	blocks          *array.LargeBinary
	lengths         []uint32
	positions       *array.List // nil without positions
	recs            []arrow.RecordBatch
}

type ftsReader struct {
	tok   *Tokenizer
	parts []*ftsPart
	stats bm25Stats
	// as metadata.lance names them (a remap or optimize keeps them)
	partIDs    []uint64
	paramsJSON string
	stopList   string
}

// OpenFTS opens an INVERTED index segment.
func OpenFTS(ctx context.Context, st Store) (FTSReader, error) {
	mrec, mr, err := readAll(ctx, st, FTSMetadataFile, nil)
	if err != nil {
		return nil, err
	}
	mrec.Release()
	md := mr.Schema().Metadata()
	get := func(k string) string {
		if i := md.FindKey(k); i >= 0 {
			return md.Values()[i]
		}
		return ""
	}
	if f := get("token_set_format"); f != "" && f != "arrow" && f != "fst" {
		return nil, fmt.Errorf("%w: FTS token set format %q", ErrUnsupported, f)
	}
	var lp lanceParams
	if err := json.Unmarshal([]byte(get("params")), &lp); err != nil {
		return nil, fmt.Errorf("%w: metadata.lance params: %v", ErrCorrupt, err)
	}
	var partIDs []uint64
	if err := json.Unmarshal([]byte(get("partitions")), &partIDs); err != nil {
		return nil, fmt.Errorf("%w: metadata.lance partitions: %v", ErrCorrupt, err)
	}
	if lp.LanceTokenizer != "" && lp.LanceTokenizer != "text" {
		return nil, fmt.Errorf("%w: lance tokenizer %q", ErrUnsupported, lp.LanceTokenizer)
	}
	// The English stop-word list changed between the Lance versions of
	// SDK 0.31.0 (tantivy's Lucene list) and 0.39.0 (NLTK's), and the
	// index does not name its list. An FST token set whose params predate
	// block_size (added with the change) was written by the older Lance:
	// measured on indices each SDK built (0.31.0: fst, no block_size;
	// 0.39.0: fst, block_size 128); lancecat's own (arrow token set) use NLTK.
	stopList := ""
	if f := get("token_set_format"); f == "fst" && !strings.Contains(get("params"), `"block_size"`) {
		stopList = "lucene"
	}
	if get(ftsStopWordsKey) == "lucene" {
		// an index of the older Lance that lancecat rewrote (remap,
		// optimize) in the arrow token set: it says which list it uses
		stopList = "lucene"
	}
	tp := TokenizerParams{StopWordList: stopList, BaseTokenizer: lp.BaseTokenizer, Language: lp.Language, WithPosition: lp.WithPosition,
		MaxTokenLength: lp.MaxTokenLength, LowerCase: lp.LowerCase, Stem: lp.Stem, RemoveStopWords: lp.RemoveStopWords,
		AsciiFolding: lp.AsciiFolding, CustomStopWords: lp.CustomStopWords,
		MinNgramLength: lp.MinNgramLength, MaxNgramLength: lp.MaxNgramLength, PrefixOnly: lp.PrefixOnly}
	tok, err := NewTokenizer(tp)
	if err != nil {
		return nil, err
	}
	r := &ftsReader{tok: tok, partIDs: partIDs, paramsJSON: get("params"), stopList: stopList}
	for _, p := range partIDs {
		part, err := openFTSPart(ctx, st, p, lp.WithPosition)
		if err != nil {
			r.Close()
			return nil, err
		}
		r.parts = append(r.parts, part)
		r.stats.numDocs += uint64(len(part.rowIDs))
		r.stats.totalTokens += part.total
	}
	return r, nil
}

func openFTSPart(ctx context.Context, st Store, id uint64, withPos bool) (*ftsPart, error) {
	p := &ftsPart{blockSize: ftsBlock}
	ok := false
	defer func() {
		if !ok {
			p.release()
		}
	}()
	if err := p.openInvert(ctx, st, id, withPos); err != nil {
		return nil, err
	}
	if err := p.openTokens(ctx, st, id); err != nil {
		return nil, err
	}
	drec, _, err := readAll(ctx, st, ftsPartFile(id, "docs.lance"), nil)
	if err != nil {
		return nil, err
	}
	p.recs = append(p.recs, drec)
	rc, err := column(drec, "_rowid", arrow.UINT64)
	if err != nil {
		return nil, err
	}
	nc, err := column(drec, "_num_tokens", arrow.UINT32)
	if err != nil {
		return nil, err
	}
	p.rowIDs = rc.(*array.Uint64).Uint64Values()
	p.numTokens = nc.(*array.Uint32).Uint32Values()
	for _, n := range p.numTokens {
		p.total += uint64(n)
	}
	ok = true
	return p, nil
}

// openTokens reads the token map: the _token/_token_id columns of
// index_version 0 or the fst Map of versions 1 and 2 (fst.go).
func (p *ftsPart) openTokens(ctx context.Context, st Store, id uint64) error {
	trec, _, err := readAll(ctx, st, ftsPartFile(id, "tokens.lance"), nil)
	if err != nil {
		return err
	}
	p.recs = append(p.recs, trec)
	if len(trec.Schema().FieldIndices("_token_fst_bytes")) == 1 {
		fc, err := column(trec, "_token_fst_bytes", arrow.LARGE_BINARY)
		if err != nil {
			return err
		}
		bc := fc.(*array.LargeBinary)
		if bc.Len() != 1 || bc.IsNull(0) {
			return fmt.Errorf("%w: FST token set of %d rows", ErrCorrupt, bc.Len())
		}
		p.tokens, err = decodeFSTMap(bc.Value(0), len(p.lengths))
		return err
	}
	p.tokens = map[string]uint32{}
	tc, err := column(trec, "_token", arrow.STRING)
	if err != nil {
		return err
	}
	ic, err := column(trec, "_token_id", arrow.UINT32)
	if err != nil {
		return err
	}
	ts, ids := tc.(*array.String), ic.(*array.Uint32)
	for i := 0; i < ts.Len(); i++ {
		if int(ids.Value(i)) >= len(p.lengths) {
			return fmt.Errorf("%w: token id %d beyond %d posting lists", ErrCorrupt, ids.Value(i), len(p.lengths))
		}
		p.tokens[ts.Value(i)] = ids.Value(i)
	}
	return nil
}

// openInvert reads the posting lists: format 1 (fixed32 tails, per-doc
// position lists) or format 2 (varint-delta tails, posting_block_size
// docs a block, positions in one packed stream per token).
func (p *ftsPart) openInvert(ctx context.Context, st Store, id uint64, withPos bool) error {
	irec, ir, err := readAll(ctx, st, ftsPartFile(id, "invert.lance"), nil)
	if err != nil {
		return err
	}
	p.recs = append(p.recs, irec)
	imd := ir.Schema().Metadata()
	if v, ok := imd.GetValue("format_version"); ok && v != "1" && v != "2" {
		return fmt.Errorf("%w: FTS posting format_version %s", ErrUnsupported, v)
	}
	switch v, _ := imd.GetValue("posting_tail_codec"); v {
	case "", "fixed32_v1":
	case "varint_delta_v1":
		p.varintTail = true
	default:
		return fmt.Errorf("%w: FTS posting tail codec %s", ErrUnsupported, v)
	}
	if v, ok := imd.GetValue("posting_block_size"); ok {
		n, err := strconv.Atoi(v)
		if err != nil || n < ftsBlock || n%ftsBlock != 0 || n > 1<<16 {
			return fmt.Errorf("%w: FTS posting_block_size %q", ErrUnsupported, v)
		}
		p.blockSize = n
	}
	pc, err := column(irec, "_posting", arrow.LIST)
	if err != nil {
		return err
	}
	p.posting = pc.(*array.List)
	bl, isLB := p.posting.ListValues().(*array.LargeBinary)
	if !isLB {
		return fmt.Errorf("%w: _posting of %s", ErrCorrupt, p.posting.DataType())
	}
	p.blocks = bl
	lc, err := column(irec, "_length", arrow.UINT32)
	if err != nil {
		return err
	}
	p.lengths = lc.(*array.Uint32).Uint32Values()
	if len(p.lengths) != p.posting.Len() {
		return fmt.Errorf("%w: _length and _posting differ in length", ErrCorrupt)
	}
	if !withPos {
		return nil
	}
	if len(irec.Schema().FieldIndices("_position")) == 1 {
		pc, err := column(irec, "_position", arrow.LIST)
		if err != nil {
			return err
		}
		p.positions = pc.(*array.List)
		if _, ok := p.positions.ListValues().(*array.List); !ok || p.positions.Len() != len(p.lengths) {
			return fmt.Errorf("%w: _position of %s", ErrCorrupt, p.positions.DataType())
		}
		return nil
	}
	if len(irec.Schema().FieldIndices("_compressed_position")) == 1 {
		switch v, _ := imd.GetValue("positions_codec"); v {
		case "packed_delta_v1":
		case "", "varint_doc_delta_v2":
			p.varintPositions = true
		default:
			return fmt.Errorf("%w: FTS positions codec %s", ErrUnsupported, v)
		}
		cc, err := column(irec, "_compressed_position", arrow.LARGE_BINARY)
		if err != nil {
			return err
		}
		oc, err := column(irec, "_position_block_offset", arrow.LIST)
		if err != nil {
			return err
		}
		p.streams = cc.(*array.LargeBinary)
		p.streamOffsets = oc.(*array.List)
		if _, ok := p.streamOffsets.ListValues().(*array.Uint32); !ok || p.streams.Len() != len(p.lengths) || p.streamOffsets.Len() != len(p.lengths) {
			return fmt.Errorf("%w: position stream columns", ErrCorrupt)
		}
	}
	return nil
}

func (p *ftsPart) release() {
	for _, r := range p.recs {
		r.Release()
	}
	p.recs = nil
}

func (r *ftsReader) Close() error {
	for _, p := range r.parts {
		p.release()
	}
	r.parts = nil
	return nil
}

// posting decodes token id's posting list: doc ids and frequencies.
func (p *ftsPart) postingOf(id uint32) (docs, freqs []uint32, err error) {
	n := int(p.lengths[id])
	docs = make([]uint32, 0, n)
	freqs = make([]uint32, 0, n)
	err = p.eachPosting(id, func(d, f []uint32) {
		docs = append(docs, d...)
		freqs = append(freqs, f...)
	})
	if err != nil {
		return nil, nil, err
	}
	return docs, freqs, nil
}

// eachPosting decodes token id's posting list a chunk (at most 128
// docs) at a time into reused buffers: fn must not keep the slices.
func (p *ftsPart) eachPosting(id uint32, fn func(docs, freqs []uint32)) error {
	return p.eachPostingSkip(id, nil, fn)
}

// eachPostingSkip is eachPosting without decoding the blocks whose
// stored max score skip rejects (block-max pruning).
func (p *ftsPart) eachPostingSkip(id uint32, skip func(blockMax float32) bool, fn func(docs, freqs []uint32)) error {
	lo, hi := p.posting.ValueOffsets(int(id))
	blocks := make([][]byte, 0, hi-lo)
	for b := lo; b < hi; b++ {
		if p.blocks.IsNull(int(b)) {
			return fmt.Errorf("%w: null posting block", ErrCorrupt)
		}
		blocks = append(blocks, p.blocks.Value(int(b)))
	}
	if skip != nil {
		return p.eachPostingPruned(blocks, int(p.lengths[id]), skip, fn)
	}
	nd := uint32(len(p.rowIDs))
	var bad error
	err := decodePostingEach(blocks, int(p.lengths[id]), p.blockSize, p.varintTail, func(docs, freqs []uint32) {
		for _, d := range docs {
			if d >= nd && bad == nil {
				bad = fmt.Errorf("%w: doc id %d beyond %d docs", ErrCorrupt, d, nd)
			}
		}
		if bad == nil {
			fn(docs, freqs)
		}
	})
	if err != nil {
		return err
	}
	return bad
}

// eachPostingPruned decodes the blocks of a posting list of total docs
// that skip keeps, one at a time (each as a posting list of its own docs:
// blockSize, or the tail's remainder).
func (p *ftsPart) eachPostingPruned(blocks [][]byte, total int, skip func(float32) bool, fn func(docs, freqs []uint32)) error {
	if total < 0 || (total+p.blockSize-1)/p.blockSize != len(blocks) {
		return fmt.Errorf("%w: posting list of %d docs in %d blocks of %d", ErrCorrupt, total, len(blocks), p.blockSize)
	}
	nd := uint32(len(p.rowIDs))
	for i, blk := range blocks {
		docs := p.blockSize
		if i == len(blocks)-1 {
			docs = total - i*p.blockSize
		}
		if len(blk) < 4 {
			return fmt.Errorf("%w: posting block of %d bytes", ErrCorrupt, len(blk))
		}
		if skip(math.Float32frombits(binary.LittleEndian.Uint32(blk))) {
			continue
		}
		var bad error
		err := decodePostingEach([][]byte{blk}, docs, p.blockSize, p.varintTail, func(d, f []uint32) {
			for _, x := range d {
				if x >= nd && bad == nil {
					bad = fmt.Errorf("%w: doc id %d beyond %d docs", ErrCorrupt, x, nd)
				}
			}
			if bad == nil {
				fn(d, f)
			}
		})
		if err != nil {
			return err
		}
		if bad != nil {
			return bad
		}
	}
	return nil
}

// decodePosting decodes a posting list of n docs (decodePostingEach).
func decodePosting(blocks [][]byte, n, blockSize int, varintTail bool) (docs, freqs []uint32, err error) {
	docs = make([]uint32, 0, min(n, 1<<16))
	freqs = make([]uint32, 0, min(n, 1<<16))
	err = decodePostingEach(blocks, n, blockSize, varintTail, func(d, f []uint32) {
		docs = append(docs, d...)
		freqs = append(freqs, f...)
	})
	if err != nil {
		return nil, nil, err
	}
	return docs, freqs, nil
}

// decodePostingEach decodes a posting list of n docs from its blocks,
// handing fn the docs a chunk at a time: each block opens with its max
// score (f32, skipped); a full block holds blockSize docs as blockSize/128
// pairs of bit-packed chunks (sorted doc ids, then frequencies); the last,
// partial block is fixed32 (doc ids then frequencies, 4 bytes each) or,
// with varintTail (format 2), LEB128 doc id deltas (the first absolute)
// then LEB128 frequencies.
func decodePostingEach(blocks [][]byte, n, blockSize int, varintTail bool, fn func(docs, freqs []uint32)) error {
	if n < 0 || blockSize <= 0 || blockSize%ftsBlock != 0 || (n+blockSize-1)/blockSize != len(blocks) {
		return fmt.Errorf("%w: posting list of %d docs in %d blocks of %d", ErrCorrupt, n, len(blocks), blockSize)
	}
	var dbuf, fbuf [ftsBlock]uint32
	done := 0
	for _, blk := range blocks {
		left := n - done
		if len(blk) < 4 {
			return fmt.Errorf("%w: posting block of %d bytes", ErrCorrupt, len(blk))
		}
		blk = blk[4:]
		if left >= blockSize {
			for range blockSize / ftsBlock {
				k, err := unpackSorted4x(blk, &dbuf)
				if err != nil {
					return err
				}
				blk = blk[k:]
				if k, err = unpackPlain4x(blk, &fbuf); err != nil {
					return err
				}
				blk = blk[k:]
				fn(dbuf[:], fbuf[:])
			}
			done += blockSize
			continue
		}
		if !varintTail {
			if len(blk) < 8*left {
				return fmt.Errorf("%w: posting tail of %d bytes for %d docs", ErrCorrupt, len(blk), left)
			}
			for c := 0; c < left; c += ftsBlock {
				m := min(ftsBlock, left-c)
				for i := 0; i < m; i++ {
					dbuf[i] = binary.LittleEndian.Uint32(blk[4*(c+i):])
					fbuf[i] = binary.LittleEndian.Uint32(blk[4*(left+c+i):])
				}
				fn(dbuf[:m], fbuf[:m])
			}
			done += left
			continue
		}
		// Varint tail: doc deltas first, then frequencies; read the docs
		// of a chunk, then its frequencies further on.
		off := 0
		var prev uint32
		docs := make([]uint32, 0, left)
		for i := 0; i < left; i++ {
			v, k := uvarint32(blk[off:])
			if k <= 0 {
				return fmt.Errorf("%w: posting tail varint", ErrCorrupt)
			}
			off += k
			if i > 0 {
				if prev+v < prev {
					return fmt.Errorf("%w: posting tail doc id overflow", ErrCorrupt)
				}
				v += prev
			}
			prev = v
			docs = append(docs, v)
		}
		for c := 0; c < left; c += ftsBlock {
			m := min(ftsBlock, left-c)
			for i := 0; i < m; i++ {
				v, k := uvarint32(blk[off:])
				if k <= 0 {
					return fmt.Errorf("%w: posting tail varint", ErrCorrupt)
				}
				off += k
				fbuf[i] = v
			}
			fn(docs[c:c+m], fbuf[:m])
		}
		if off != len(blk) {
			return fmt.Errorf("%w: %d bytes after a posting tail", ErrCorrupt, len(blk)-off)
		}
		done += left
	}
	return nil
}

// uvarint32 reads one LEB128 u32 (at most 5 bytes); k <= 0 when b does
// not start with one.
func uvarint32(b []byte) (v uint32, k int) {
	x, k := binary.Uvarint(b)
	if k <= 0 || k > 5 || x > 1<<32-1 {
		return 0, -1
	}
	return uint32(x), k
}

// positionsFor decodes the positions of every entry of token id's
// posting list (freqs are its frequencies).
func (p *ftsPart) positionsFor(id uint32, freqs []uint32) ([][]uint32, error) {
	out := make([][]uint32, len(freqs))
	if p.streams == nil {
		for k := range freqs {
			pos, err := p.positionsOf(id, k)
			if err != nil {
				return nil, err
			}
			out[k] = pos
		}
		return out, nil
	}
	lo, hi := p.streamOffsets.ValueOffsets(int(id))
	offs := p.streamOffsets.ListValues().(*array.Uint32).Uint32Values()[lo:hi]
	if p.streams.IsNull(int(id)) {
		return nil, fmt.Errorf("%w: null position stream", ErrCorrupt)
	}
	stream := p.streams.Value(int(id))
	if len(offs) != (len(freqs)+p.blockSize-1)/p.blockSize {
		return nil, fmt.Errorf("%w: %d position blocks for %d docs", ErrCorrupt, len(offs), len(freqs))
	}
	for b, start := range offs {
		end := uint32(len(stream))
		if b+1 < len(offs) {
			end = offs[b+1]
		}
		if start > end || end > uint32(len(stream)) {
			return nil, fmt.Errorf("%w: position block %d at %d..%d of %d bytes", ErrCorrupt, b, start, end, len(stream))
		}
		f := freqs[b*p.blockSize : min(len(freqs), (b+1)*p.blockSize)]
		pos, err := decodePositionBlock(stream[start:end], f, !p.varintPositions)
		if err != nil {
			return nil, err
		}
		for k := range f {
			out[b*p.blockSize+k], pos = pos[:f[k]:f[k]], pos[f[k]:]
		}
	}
	return out, nil
}

// decodePositionBlock decodes the positions of one posting block's docs
// (format 2's shared stream; freqs give each doc's count): every doc's
// positions are deltas, the first from 0. packed (packed_delta_v1): the
// block's deltas in bit-packed chunks of 128 (bit width byte, then
// BitPacker4x), the remainder LEB128; else (varint_doc_delta_v2) all LEB128.
func decodePositionBlock(src []byte, freqs []uint32, packed bool) ([]uint32, error) {
	total := 0
	for _, f := range freqs {
		total += int(f)
		// a position costs at least 1/128 byte (a packed chunk of 128
		// zero deltas is one byte), so a corrupt count cannot allocate more
		if total > 128*len(src) {
			return nil, fmt.Errorf("%w: %d positions in %d bytes", ErrCorrupt, total, len(src))
		}
	}
	deltas := make([]uint32, 0, total)
	off := 0
	if packed {
		var buf [ftsBlock]uint32
		for range total / ftsBlock {
			k, err := unpackPlain4x(src[off:], &buf)
			if err != nil {
				return nil, err
			}
			off += k
			deltas = append(deltas, buf[:]...)
		}
	}
	for len(deltas) < total {
		v, k := uvarint32(src[off:])
		if k <= 0 {
			return nil, fmt.Errorf("%w: position varint", ErrCorrupt)
		}
		off += k
		deltas = append(deltas, v)
	}
	if off != len(src) {
		return nil, fmt.Errorf("%w: %d bytes after a position block", ErrCorrupt, len(src)-off)
	}
	i := 0
	for _, f := range freqs {
		var prev uint32
		for j := 0; j < int(f); j++ {
			if j > 0 {
				if prev+deltas[i] < prev {
					return nil, fmt.Errorf("%w: position overflow", ErrCorrupt)
				}
				deltas[i] += prev
			}
			prev = deltas[i]
			i++
		}
	}
	return deltas, nil
}

// positionsOf decodes the positions of the k-th entry of token id's posting.
func (p *ftsPart) positionsOf(id uint32, k int) ([]uint32, error) {
	if p.positions == nil {
		return nil, fmt.Errorf("%w: the index has no positions (create it with with_position)", ErrUnsupported)
	}
	lo, hi := p.positions.ValueOffsets(int(id))
	if int64(k) >= hi-lo {
		return nil, fmt.Errorf("%w: positions of posting entry %d", ErrCorrupt, k)
	}
	inner := p.positions.ListValues().(*array.List)
	ilo, ihi := inner.ValueOffsets(int(lo) + k)
	bins, ok := inner.ListValues().(*array.LargeBinary)
	if !ok || ihi <= ilo {
		return nil, fmt.Errorf("%w: positions of posting entry %d", ErrCorrupt, k)
	}
	head := bins.Value(int(ilo))
	if len(head) != 4 {
		return nil, fmt.Errorf("%w: positions count", ErrCorrupt)
	}
	n := int(binary.LittleEndian.Uint32(head))
	out := make([]uint32, 0, min(n, 1<<16))
	var buf [ftsBlock]uint32
	for b := ilo + 1; b < ihi && len(out) < n; b++ {
		blk := bins.Value(int(b))
		if n-len(out) >= ftsBlock {
			if _, err := unpackSorted4x(blk, &buf); err != nil {
				return nil, err
			}
			out = append(out, buf[:]...)
			continue
		}
		left := n - len(out)
		if len(blk) < 4*left {
			return nil, fmt.Errorf("%w: positions tail", ErrCorrupt)
		}
		for i := 0; i < left; i++ {
			out = append(out, binary.LittleEndian.Uint32(blk[4*i:]))
		}
	}
	if len(out) != n {
		return nil, fmt.Errorf("%w: %d positions of %d", ErrCorrupt, len(out), n)
	}
	return out, nil
}

// hits are per-row scores of one (sub)query.
type hits map[uint64]float32

// Search implements FTSReader.
func (r *ftsReader) Search(ctx context.Context, q FTSQuery, limit int, allow func(uint64) bool) ([]ScoredRow, error) {
	if q.Kind == Match && q.Fuzziness == 0 {
		return r.searchMatch(ctx, q, limit, allow)
	}
	if q.Kind == Phrase && limit > 0 && len(r.parts) == 1 && q.Boost >= 0 {
		return r.searchPhrase(q, limit, allow)
	}
	h, err := r.eval(ctx, q)
	if err != nil {
		return nil, err
	}
	out := make([]ScoredRow, 0, len(h))
	for id, s := range h {
		if allow != nil && !allow(id) {
			continue
		}
		out = append(out, ScoredRow{RowID: id, Score: s})
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Score != out[j].Score {
			return out[i].Score > out[j].Score
		}
		return out[i].RowID < out[j].RowID
	})
	if limit > 0 && len(out) > limit {
		out = out[:limit]
	}
	return out, nil
}

// searchMatch is Search of a plain match: scores accumulate in a dense
// array per partition (doc ids are dense) and the best limit rows are
// selected with a heap, not a map and a full sort.
func (r *ftsReader) searchMatch(ctx context.Context, q FTSQuery, limit int, allow func(uint64) bool) ([]ScoredRow, error) {
	toks := r.queryTokens(q.Terms)
	and := strings.EqualFold(q.Operator, "AND")
	boost := q.Boost
	if boost == 0 {
		boost = 1
	}
	avgdl := r.stats.avgdl()
	top := &rowHeap{limit: limit}
	for _, p := range r.parts {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		type term struct {
			id  uint32
			idf float32
		}
		var terms []term
		total := 0
		for _, t := range toks {
			if id, ok := p.tokens[t.Text]; ok {
				terms = append(terms, term{id, bm25IDF(r.docFreq(t.Text), r.stats.numDocs)})
				total += int(p.lengths[id])
			}
		}
		if and && len(terms) < len(toks) || len(terms) == 0 {
			continue
		}
		if len(terms) == 1 {
			// One term: score each posting as it is decoded, straight
			// into the heap (no accumulator); the prefilter is asked
			// only for rows that would enter it.
			t := terms[0]
			var skip func(float32) bool
			if len(r.parts) == 1 && limit > 0 && boost > 0 {
				// Block-max pruning: with one partition the stored block
				// max is this query's own bound (the builder scored with
				// the same statistics); a block whose bound, given a
				// margin for float rounding, is below the heap's minimum
				// cannot place a row.
				skip = func(bm float32) bool {
					if len(top.h) < top.limit {
						return false
					}
					return (bm*(1+1e-4)+1e-6)*boost < top.h[0].Score
				}
			}
			err := p.eachPostingSkip(t.id, skip, func(docs, freqs []uint32) {
				for k, d := range docs {
					x := ScoredRow{RowID: p.rowIDs[d], Score: t.idf * bm25DocWeight(freqs[k], p.numTokens[d], avgdl) * boost}
					if top.accepts(x) && (allow == nil || allow(x.RowID)) {
						top.offer(x)
					}
				}
			})
			if err != nil {
				return nil, err
			}
			continue
		}
		if len(r.parts) == 1 && limit > 0 && boost > 0 {
			// Several terms, top-k: block-max over the blocks' stored
			// maxima (wand.go), valid with one partition as above.
			bts := make([]*bmTerm, len(terms))
			for i, t := range terms {
				bt, err := p.openBMTerm(t.id, t.idf)
				if err != nil {
					return nil, err
				}
				bts[i] = bt
			}
			var err error
			if and {
				err = p.searchAnd(bts, boost, avgdl, top, allow)
			} else {
				err = p.searchBlockMax(bts, false, boost, avgdl, top, allow, nil)
			}
			if err == nil {
				continue
			}
			if !errors.Is(err, errNoPruning) {
				return nil, err
			}
		}
		acc := make([]float32, len(p.rowIDs))
		var cnt []uint8
		if and {
			cnt = make([]uint8, len(p.rowIDs))
		}
		touched := make([]uint32, 0, min(total, len(p.rowIDs)))
		for _, t := range terms {
			err := p.eachPosting(t.id, func(docs, freqs []uint32) {
				for k, d := range docs {
					if acc[d] == 0 {
						touched = append(touched, d)
					}
					acc[d] += t.idf * bm25DocWeight(freqs[k], p.numTokens[d], avgdl)
					if and && cnt[d] < 255 {
						cnt[d]++
					}
				}
			})
			if err != nil {
				return nil, err
			}
		}
		for _, d := range touched {
			if and && int(cnt[d]) < len(toks) {
				continue
			}
			x := ScoredRow{RowID: p.rowIDs[d], Score: acc[d] * boost}
			if top.accepts(x) && (allow == nil || allow(x.RowID)) {
				top.offer(x)
			}
		}
	}
	return top.sorted(), nil
}

// rowHeap keeps the best limit rows (all when limit <= 0): a min-heap by
// (score, -row id).
type rowHeap struct {
	limit int
	h     []ScoredRow
}

func better(a, b ScoredRow) bool {
	return a.Score > b.Score || a.Score == b.Score && a.RowID < b.RowID
}

// accepts reports whether offer(x) would keep x.
func (t *rowHeap) accepts(x ScoredRow) bool {
	return t.limit <= 0 || len(t.h) < t.limit || better(x, t.h[0])
}

func (t *rowHeap) offer(x ScoredRow) {
	if t.limit <= 0 {
		t.h = append(t.h, x)
		return
	}
	if len(t.h) < t.limit {
		t.h = append(t.h, x)
		for i := len(t.h) - 1; i > 0; {
			p := (i - 1) / 2
			if !better(t.h[p], t.h[i]) {
				break
			}
			t.h[p], t.h[i] = t.h[i], t.h[p]
			i = p
		}
		return
	}
	if !better(x, t.h[0]) {
		return
	}
	t.h[0] = x
	for i := 0; ; {
		l, rr, m := 2*i+1, 2*i+2, i
		if l < len(t.h) && better(t.h[m], t.h[l]) {
			m = l
		}
		if rr < len(t.h) && better(t.h[m], t.h[rr]) {
			m = rr
		}
		if m == i {
			break
		}
		t.h[i], t.h[m] = t.h[m], t.h[i]
		i = m
	}
}

func (t *rowHeap) sorted() []ScoredRow {
	out := t.h
	sort.Slice(out, func(i, j int) bool { return better(out[i], out[j]) })
	return out
}

// Tokens is the query text's distinct tokens, in order of appearance.
func (r *ftsReader) queryTokens(text string) []Token {
	toks := r.tok.Tokenize(text, nil)
	seen := map[string]bool{}
	out := toks[:0]
	for _, t := range toks {
		if !seen[t.Text] {
			seen[t.Text] = true
			out = append(out, t)
		}
	}
	return out
}

func (r *ftsReader) eval(ctx context.Context, q FTSQuery) (hits, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	boost := q.Boost
	if boost == 0 {
		boost = 1
	}
	var h hits
	var err error
	switch q.Kind {
	case Match:
		h, err = r.match(q)
	case Phrase:
		h, err = r.phrase(q)
	case Boolean:
		h, err = r.boolean(ctx, q)
	default:
		return nil, fmt.Errorf("%w: full-text query kind %d", ErrUnsupported, q.Kind)
	}
	if err != nil {
		return nil, err
	}
	if boost != 1 {
		for k := range h {
			h[k] *= boost
		}
	}
	return h, nil
}

func (r *ftsReader) match(q FTSQuery) (hits, error) {
	toks := r.queryTokens(q.Terms)
	and := strings.EqualFold(q.Operator, "AND")
	h := hits{}
	count := map[uint64]int{}
	avgdl := r.stats.avgdl()
	var expanded [][]string
	if q.Fuzziness > 0 {
		expanded = r.fuzzy(toks, q)
	}
	for i, t := range toks {
		texts := []string{t.Text}
		if expanded != nil {
			texts = expanded[i]
		}
		seen := map[uint64]bool{}
		for _, text := range texts {
			df := r.docFreq(text)
			if df == 0 {
				continue
			}
			idf := bm25IDF(df, r.stats.numDocs)
			for _, p := range r.parts {
				id, ok := p.tokens[text]
				if !ok {
					continue
				}
				docs, freqs, err := p.postingOf(id)
				if err != nil {
					return nil, err
				}
				for k, d := range docs {
					row := p.rowIDs[d]
					h[row] += idf * bm25DocWeight(freqs[k], p.numTokens[d], avgdl)
					if !seen[row] {
						seen[row] = true
						count[row]++
					}
				}
			}
		}
	}
	if and {
		for row := range h {
			if count[row] < len(toks) {
				delete(h, row)
			}
		}
	}
	return h, nil
}

func (r *ftsReader) docFreq(text string) uint64 {
	var n uint64
	for _, p := range r.parts {
		if id, ok := p.tokens[text]; ok {
			n += uint64(p.lengths[id])
		}
	}
	return n
}

// fuzzy expands a fuzzy match's query tokens to the index's tokens as Lance does
// (InvertedPartition::expand_fuzzy): for each query token in turn, the index tokens within
// q.Fuzziness edits (Levenshtein over characters) that begin with the token's first
// q.PrefixLength bytes, in byte order, until q.MaxExpansions tokens are taken over all query
// tokens; a token two query tokens expand to is scored once, for the first. The candidates
// are those of every partition merged, so that every partition scores the same expansion.
func (r *ftsReader) fuzzy(toks []Token, q FTSQuery) [][]string {
	budget := q.MaxExpansions
	if budget <= 0 {
		budget = 50
	}
	taken := map[string]bool{}
	out := make([][]string, len(toks))
	for i, t := range toks {
		if budget <= len(taken) {
			break
		}
		prefix := t.Text[:min(q.PrefixLength, len(t.Text))]
		set := map[string]bool{}
		for _, p := range r.parts {
			for tok := range p.tokens {
				if !set[tok] && strings.HasPrefix(tok, prefix) && levenshtein(t.Text, tok, q.Fuzziness) <= q.Fuzziness {
					set[tok] = true
				}
			}
		}
		cands := make([]string, 0, len(set))
		for k := range set {
			cands = append(cands, k)
		}
		slices.Sort(cands)
		for _, c := range cands {
			if len(taken) >= budget {
				break
			}
			if !taken[c] {
				taken[c] = true
				out[i] = append(out[i], c)
			}
		}
	}
	return out
}

func levenshtein(a, b string, bound int) int {
	ra, rb := []rune(a), []rune(b)
	if d := len(ra) - len(rb); d > bound || -d > bound {
		return bound + 1
	}
	prev := make([]int, len(rb)+1)
	cur := make([]int, len(rb)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(ra); i++ {
		cur[0] = i
		for j := 1; j <= len(rb); j++ {
			c := 1
			if ra[i-1] == rb[j-1] {
				c = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+c)
		}
		prev, cur = cur, prev
	}
	return prev[len(rb)]
}

// phrase: docs with the query's tokens at consecutive positions (Slop
// extra positions allowed between neighbours), scored as a match of the
// phrase's tokens.
func (r *ftsReader) phrase(q FTSQuery) (hits, error) {
	toks := r.tok.Tokenize(q.Terms, nil)
	if len(toks) == 0 {
		return hits{}, nil
	}
	all, err := r.match(FTSQuery{Terms: q.Terms, Operator: "AND"})
	if err != nil {
		return nil, err
	}
	out := hits{}
	for _, p := range r.parts {
		// positions of each query token per doc of this partition
		per := make([]map[uint32][]uint32, len(toks))
		for i, t := range toks {
			id, ok := p.tokens[t.Text]
			if !ok {
				per = nil
				break
			}
			docs, freqs, err := p.postingOf(id)
			if err != nil {
				return nil, err
			}
			if p.positions == nil && p.streams == nil {
				return nil, fmt.Errorf("%w: the index has no positions (create it with with_position)", ErrUnsupported)
			}
			all2, err := p.positionsFor(id, freqs)
			if err != nil {
				return nil, err
			}
			per[i] = map[uint32][]uint32{}
			for k, d := range docs {
				if _, in := all[p.rowIDs[d]]; !in {
					continue
				}
				per[i][d] = all2[k]
			}
		}
		if per == nil {
			continue
		}
		for d, first := range per[0] {
			if phraseAt(per, d, first, toks, q.Slop) {
				row := p.rowIDs[d]
				out[row] = all[row]
			}
		}
	}
	return out, nil
}

func phraseAt(per []map[uint32][]uint32, d uint32, first []uint32, toks []Token, slop int) bool {
	lists := make([][]uint32, len(toks))
	lists[0] = first
	for i := 1; i < len(toks); i++ {
		lists[i] = per[i][d]
	}
	return phraseMatch(lists, toks, slop)
}

// boolean: with Must, the rows every Must matches (scored by all Must and
// Should that match); without, the rows some Should matches; MustNot
// rows are dropped.
func (r *ftsReader) boolean(ctx context.Context, q FTSQuery) (hits, error) {
	return CombineBoolean(ctx, q.Must, q.Should, q.MustNot, func(ctx context.Context, c FTSQuery) (map[uint64]float32, error) {
		return r.eval(ctx, c)
	})
}

// CombineBoolean merges the row→score answers of a boolean query's clauses
// as Lance does: with Must, the rows every Must matches (scored by all Must
// and the Should that match); without, the rows some Should matches;
// MustNot rows are dropped. The index reader and the query engine's
// multi-column boolean both use it.
func CombineBoolean[Q any](ctx context.Context, must, should, mustNot []Q, eval func(context.Context, Q) (map[uint64]float32, error)) (map[uint64]float32, error) {
	var out map[uint64]float32
	for i, m := range must {
		h, err := eval(ctx, m)
		if err != nil {
			return nil, err
		}
		if i == 0 {
			out = h
			continue
		}
		for row, s := range out {
			if hs, ok := h[row]; ok {
				out[row] = s + hs
			} else {
				delete(out, row)
			}
		}
	}
	for _, sq := range should {
		h, err := eval(ctx, sq)
		if err != nil {
			return nil, err
		}
		if len(must) > 0 {
			for row := range out {
				out[row] += h[row]
			}
			continue
		}
		if out == nil {
			out = map[uint64]float32{}
		}
		for row, s := range h {
			out[row] += s
		}
	}
	if out == nil {
		out = map[uint64]float32{}
	}
	for _, mn := range mustNot {
		h, err := eval(ctx, mn)
		if err != nil {
			return nil, err
		}
		for row := range h {
			delete(out, row)
		}
	}
	return out, nil
}

// FTSParams is the tokenizer configuration of the INVERTED index segment in st: metadata.lance's
// "params", Lance's InvertedIndexParams as JSON, which is what a client deserializes to
// tokenize as the index does (the remote client's Table.tokenize reads it from the index
// listing's index_details). Only the schema of the small metadata file is read.
func FTSParams(ctx context.Context, st Store) (string, error) {
	r, err := openFile(ctx, st, FTSMetadataFile)
	if err != nil {
		return "", err
	}
	md := r.Schema().Metadata()
	v, ok := md.GetValue("params")
	if !ok || !json.Valid([]byte(v)) {
		return "", fmt.Errorf("%w: metadata.lance has no params", ErrCorrupt)
	}
	return v, nil
}
