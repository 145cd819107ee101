package index

// Writing one INVERTED partition's files (the layout is described in
// inverted_build.go). The posting blocks and positions of disjoint token
// ranges are encoded on up to GOMAXPROCS goroutines into buffers of their
// own and joined in token order, so the bytes do not depend on the
// scheduling; the arrow arrays are then made over those buffers directly
// (arrow's builders grew and copied them value by value).

import (
	"context"
	"encoding/binary"
	"fmt"
	"math"
	"runtime"
	"strconv"
	"sync"
	"sync/atomic"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// writePartition writes the builder's docs as partition part
// (part_<part>_tokens/docs/invert.lance).
func (b *FTSBuilder) writePartition(ctx context.Context, st Store, part uint64) ([]File, error) {
	p := b.postings()
	var files []File
	mem := b.opts.Mem
	// Token ids are the ranks of the tokens in byte order, so the tokens
	// file is sorted both by token and by id: the SDKs load it into an
	// FST, whose builder takes the keys in order (measured: unsorted
	// tokens fail their search with "failed to insert token run", and
	// 0.39.0 misses tokens whose id is not their rank).
	{
		tb := array.NewStringBuilder(mem)
		ib := array.NewUint32Builder(mem)
		for id, t := range p.tokens {
			tb.Append(t)
			ib.Append(uint32(id))
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
	fields := []arrow.Field{
		{Name: "_posting", Type: arrow.ListOf(arrow.BinaryTypes.LargeBinary), Nullable: false},
		{Name: "_max_score", Type: arrow.PrimitiveTypes.Float32},
		{Name: "_length", Type: arrow.PrimitiveTypes.Uint32},
	}
	withPos := b.tok.p.WithPosition
	if withPos {
		fields = append(fields, arrow.Field{Name: "_position", Type: arrow.ListOf(arrow.ListOf(arrow.BinaryTypes.LargeBinary)), Nullable: true})
	}
	cols, err := p.invertColumns(bm25Stats{numDocs: uint64(len(b.rowIDs)), totalTokens: b.total}, b.numTokens, withPos)
	if err != nil {
		return nil, err
	}
	f, err := b.writeRec(ctx, st, ftsPartFile(part, "invert.lance"), arrow.NewSchema(fields, nil), cols...)
	if err != nil {
		return nil, err
	}
	return append(files, f), nil
}

// ftsEncoded is one token range's share of part_N_invert.lance.
type ftsEncoded struct {
	blocks   []int32 // per token: its posting blocks
	blockEnd []int64 // per block: its end in data
	data     []byte
	maxScore []float32
	bins     []int32 // per posting: its position binaries
	binEnd   []int64 // per binary: its end in posData
	posData  []byte
}

// invertColumns encodes the posting lists as part_N_invert.lance's
// columns: _posting, _max_score, _length and, with positions, _position.
func (p *ftsPostings) invertColumns(sc bm25Stats, numTokens []uint32, withPos bool) ([]arrow.Array, error) {
	nTok := len(p.tokens)
	if p.off[nTok] > math.MaxInt32 {
		return nil, fmt.Errorf("%w: %d postings in one partition", ErrUnsupported, p.off[nTok])
	}
	// token ranges of about equal work (postings and positions), several
	// per goroutine so that one frequent token does not leave a core idle
	workers := runtime.GOMAXPROCS(0)
	target := (p.off[nTok]+p.posOff[nTok])/(4*workers) + 1
	starts := []int{0}
	for t, acc := 0, 0; t < nTok; t++ {
		acc += p.off[t+1] - p.off[t] + p.posOff[t+1] - p.posOff[t]
		if acc >= target && t+1 < nTok {
			starts = append(starts, t+1)
			acc = 0
		}
	}
	starts = append(starts, nTok)
	parts := make([]*ftsEncoded, len(starts)-1)
	avgdl := sc.avgdl()
	var next atomic.Int64
	var wg sync.WaitGroup
	for range min(workers, len(parts)) {
		wg.Go(func() {
			for {
				i := int(next.Add(1)) - 1
				if i >= len(parts) {
					return
				}
				parts[i] = p.encode(starts[i], starts[i+1], sc.numDocs, avgdl, numTokens, withPos)
			}
		})
	}
	wg.Wait()

	// join the ranges into arrow buffers
	var nBlocks, nData, nBins, nPosData int
	for _, e := range parts {
		nBlocks += len(e.blockEnd)
		nData += len(e.data)
		nBins += len(e.binEnd)
		nPosData += len(e.posData)
	}
	if nBlocks > math.MaxInt32 || nBins > math.MaxInt32 {
		return nil, fmt.Errorf("%w: %d posting blocks, %d position binaries in one partition", ErrUnsupported, nBlocks, nBins)
	}
	listOff := make([]int32, 1, nTok+1)
	blockOff := make([]int64, 1, nBlocks+1)
	data := make([]byte, 0, nData)
	maxScore := make([]float32, 0, nTok)
	length := make([]uint32, nTok)
	for t := range nTok {
		length[t] = uint32(p.off[t+1] - p.off[t])
	}
	var postOff []int32
	var binOff []int64
	var posData []byte
	if withPos {
		postOff = make([]int32, nTok+1)
		for t := range postOff {
			postOff[t] = int32(p.off[t])
		}
		binOff = make([]int64, 1, nBins+1)
		posData = make([]byte, 0, nPosData)
	}
	var binsOff []int32
	if withPos {
		binsOff = make([]int32, 1, p.off[nTok]+1)
	}
	for _, e := range parts {
		for _, n := range e.blocks {
			listOff = append(listOff, listOff[len(listOff)-1]+n)
		}
		base := int64(len(data))
		for _, end := range e.blockEnd {
			blockOff = append(blockOff, base+end)
		}
		data = append(data, e.data...)
		maxScore = append(maxScore, e.maxScore...)
		if withPos {
			for _, n := range e.bins {
				binsOff = append(binsOff, binsOff[len(binsOff)-1]+n)
			}
			base := int64(len(posData))
			for _, end := range e.binEnd {
				binOff = append(binOff, base+end)
			}
			posData = append(posData, e.posData...)
		}
	}
	blob := func(off []int64, data []byte) arrow.ArrayData {
		return array.NewData(arrow.BinaryTypes.LargeBinary, len(off)-1,
			[]*memory.Buffer{nil, memory.NewBufferBytes(arrow.Int64Traits.CastToBytes(off)), memory.NewBufferBytes(data)}, nil, 0, 0)
	}
	list := func(off []int32, child arrow.ArrayData) arrow.ArrayData {
		defer child.Release()
		return array.NewData(arrow.ListOf(child.DataType()), len(off)-1,
			[]*memory.Buffer{nil, memory.NewBufferBytes(arrow.Int32Traits.CastToBytes(off))}, []arrow.ArrayData{child}, 0, 0)
	}
	prim := func(typ arrow.DataType, b []byte, n int) arrow.Array {
		d := array.NewData(typ, n, []*memory.Buffer{nil, memory.NewBufferBytes(b)}, nil, 0, 0)
		defer d.Release()
		return array.MakeFromData(d)
	}
	made := func(d arrow.ArrayData) arrow.Array {
		defer d.Release()
		return array.MakeFromData(d)
	}
	cols := []arrow.Array{
		made(list(listOff, blob(blockOff, data))),
		prim(arrow.PrimitiveTypes.Float32, arrow.Float32Traits.CastToBytes(maxScore), nTok),
		prim(arrow.PrimitiveTypes.Uint32, arrow.Uint32Traits.CastToBytes(length), nTok),
	}
	if withPos {
		cols = append(cols, made(list(postOff, list(binsOff, blob(binOff, posData)))))
	}
	return cols, nil
}

// encode encodes the posting lists (and positions) of tokens t0:t1.
func (p *ftsPostings) encode(t0, t1 int, numDocs uint64, avgdl float32, numTokens []uint32, withPos bool) *ftsEncoded {
	e := &ftsEncoded{}
	for t := t0; t < t1; t++ {
		docs, freqs := p.docs[p.off[t]:p.off[t+1]], p.freqs[p.off[t]:p.off[t+1]]
		idf := bm25IDF(uint64(len(docs)), numDocs)
		var maxScore float32
		blocks := 0
		for lo := 0; lo < len(docs); lo += ftsBlock {
			hi := min(lo+ftsBlock, len(docs))
			var blockMax float32
			for k := lo; k < hi; k++ {
				s := idf * bm25DocWeight(freqs[k], numTokens[docs[k]], avgdl)
				blockMax = max(blockMax, s)
			}
			maxScore = max(maxScore, blockMax)
			e.data = encodePostingBlock(e.data, blockMax, docs[lo:hi], freqs[lo:hi])
			e.blockEnd = append(e.blockEnd, int64(len(e.data)))
			blocks++
		}
		e.blocks = append(e.blocks, int32(blocks))
		e.maxScore = append(e.maxScore, maxScore)
		if withPos {
			at := p.posOff[t]
			for _, f := range freqs {
				e.encodePositions(p.pos[at : at+int(f)])
				at += int(f)
			}
		}
	}
	return e
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

// encodePositions appends one doc's positions as Lance's binaries: the
// count, full blocks of 128 delta-packed positions, the rest as u32s.
func (e *ftsEncoded) encodePositions(pos []uint32) {
	bins := int32(1)
	e.posData = binary.LittleEndian.AppendUint32(e.posData, uint32(len(pos)))
	e.binEnd = append(e.binEnd, int64(len(e.posData)))
	i := 0
	for ; i+ftsBlock <= len(pos); i += ftsBlock {
		e.posData = packSorted4x(e.posData, (*[ftsBlock]uint32)(pos[i:i+ftsBlock]))
		e.binEnd = append(e.binEnd, int64(len(e.posData)))
		bins++
	}
	if i < len(pos) {
		for _, p := range pos[i:] {
			e.posData = binary.LittleEndian.AppendUint32(e.posData, p)
		}
		e.binEnd = append(e.binEnd, int64(len(e.posData)))
		bins++
	}
	e.bins = append(e.bins, bins)
}
