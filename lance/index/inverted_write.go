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

// invertColumns encodes the posting lists as part_N_invert.lance's
// columns: _posting, _max_score, _length and, with positions, _position.
// Each token range's exact encoded size is computed first, so every
// buffer is allocated once at its final size and each range is encoded
// straight into its place (growing buffers cost more than the encoding:
// fresh memory is slow to fault in on the machines we measured).
func (p *ftsPostings) invertColumns(sc bm25Stats, numTokens []uint32, withPos bool) ([]arrow.Array, error) {
	nTok := len(p.tokens)
	nPost := p.off[nTok]
	if nPost > math.MaxInt32 {
		return nil, fmt.Errorf("%w: %d postings in one partition", ErrUnsupported, nPost)
	}
	// token ranges of about equal work (postings and positions), several
	// per goroutine so that one frequent token does not leave a core idle
	workers := runtime.GOMAXPROCS(0)
	target := (nPost+p.posOff[nTok])/(4*workers) + 1
	starts := []int{0}
	for t, acc := 0, 0; t < nTok; t++ {
		acc += p.off[t+1] - p.off[t] + p.posOff[t+1] - p.posOff[t]
		if acc >= target && t+1 < nTok {
			starts = append(starts, t+1)
			acc = 0
		}
	}
	starts = append(starts, nTok)
	ranges := len(starts) - 1
	parallel := func(f func(i int)) {
		var next atomic.Int64
		var wg sync.WaitGroup
		for range min(workers, ranges) {
			wg.Go(func() {
				for i := int(next.Add(1)) - 1; i < ranges; i = int(next.Add(1)) - 1 {
					f(i)
				}
			})
		}
		wg.Wait()
	}
	// where each range's share starts: ranges+1 prefix sums
	base := make([]ftsSizes, ranges+1)
	parallel(func(i int) { base[i+1] = p.sizes(starts[i], starts[i+1], withPos) })
	for i := range ranges {
		base[i+1] = base[i+1].plus(base[i])
	}
	total := base[ranges]
	if total.blocks > math.MaxInt32 || total.bins > math.MaxInt32 {
		return nil, fmt.Errorf("%w: %d posting blocks, %d position binaries in one partition", ErrUnsupported, total.blocks, total.bins)
	}
	e := &ftsEncoded{
		listOff:  make([]int32, nTok+1),
		blockOff: make([]int64, total.blocks+1),
		data:     make([]byte, total.data),
		maxScore: make([]float32, nTok),
		length:   make([]uint32, nTok),
	}
	if withPos {
		e.postOff = make([]int32, nTok+1)
		e.binsOff = make([]int32, nPost+1)
		e.binOff = make([]int64, total.bins+1)
		e.posData = make([]byte, total.posData)
	}
	avgdl := sc.avgdl()
	var bad atomic.Bool
	parallel(func(i int) {
		if !e.encode(p, starts[i], starts[i+1], base[i], base[i+1], sc.numDocs, avgdl, numTokens) {
			bad.Store(true)
		}
	})
	if bad.Load() {
		return nil, fmt.Errorf("lance index: posting sizes disagree with their encoding") // a bug, not bad data
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
	prim := func(typ arrow.DataType, b []byte, n int) arrow.ArrayData {
		return array.NewData(typ, n, []*memory.Buffer{nil, memory.NewBufferBytes(b)}, nil, 0, 0)
	}
	made := func(d arrow.ArrayData) arrow.Array {
		defer d.Release()
		return array.MakeFromData(d)
	}
	cols := []arrow.Array{
		made(list(e.listOff, blob(e.blockOff, e.data))),
		made(prim(arrow.PrimitiveTypes.Float32, arrow.Float32Traits.CastToBytes(e.maxScore), nTok)),
		made(prim(arrow.PrimitiveTypes.Uint32, arrow.Uint32Traits.CastToBytes(e.length), nTok)),
	}
	if withPos {
		cols = append(cols, made(list(e.postOff, list(e.binsOff, blob(e.binOff, e.posData)))))
	}
	return cols, nil
}

// ftsSizes count a token range's encoded share of part_N_invert.lance
// (or, summed, where a range starts).
type ftsSizes struct{ blocks, data, bins, posData int }

func (a ftsSizes) plus(b ftsSizes) ftsSizes {
	return ftsSizes{a.blocks + b.blocks, a.data + b.data, a.bins + b.bins, a.posData + b.posData}
}

// sizes is the exact encoded size of tokens t0:t1 (encodePostingBlock's
// and encodePositions' layouts; a full block's size depends on its bit
// widths).
func (p *ftsPostings) sizes(t0, t1 int, withPos bool) ftsSizes {
	var s ftsSizes
	var d [ftsBlock]uint32
	for t := t0; t < t1; t++ {
		docs, freqs := p.docs[p.off[t]:p.off[t+1]], p.freqs[p.off[t]:p.off[t+1]]
		for lo := 0; lo < len(docs); lo += ftsBlock {
			s.blocks++
			if hi := lo + ftsBlock; hi <= len(docs) {
				s.data += 4 + 5 + 16*int(deltaBits(&d, (*[ftsBlock]uint32)(docs[lo:hi]))) + 1 + 16*int(bitsFor(freqs[lo:hi]))
			} else {
				s.data += 4 + 8*(len(docs)-lo)
			}
		}
		if !withPos {
			continue
		}
		at := p.posOff[t]
		for _, f := range freqs {
			pos := p.pos[at : at+int(f)]
			at += int(f)
			s.bins++
			s.posData += 4
			i := 0
			for ; i+ftsBlock <= len(pos); i += ftsBlock {
				s.bins++
				s.posData += 5 + 16*int(deltaBits(&d, (*[ftsBlock]uint32)(pos[i:i+ftsBlock])))
			}
			if i < len(pos) {
				s.bins++
				s.posData += 4 * (len(pos) - i)
			}
		}
	}
	return s
}

// ftsEncoded are the buffers of part_N_invert.lance's columns.
type ftsEncoded struct {
	listOff  []int32 // _posting: per token, its first block
	blockOff []int64 // per block: its start in data
	data     []byte
	maxScore []float32
	length   []uint32
	postOff  []int32 // _position: per token, its first posting (p.off)
	binsOff  []int32 // per posting: its first position binary
	binOff   []int64 // per binary: its start in posData
	posData  []byte
}

// encode writes tokens t0:t1 into their places in e (from, to: where the
// range's share and the next one's start); false: the sizes were wrong.
func (e *ftsEncoded) encode(p *ftsPostings, t0, t1 int, from, to ftsSizes, numDocs uint64, avgdl float32, numTokens []uint32) bool {
	data := e.data[from.data:from.data:to.data]
	posData := e.posData[from.posData:from.posData:to.posData]
	block, bin := from.blocks, from.bins
	for t := t0; t < t1; t++ {
		docs, freqs := p.docs[p.off[t]:p.off[t+1]], p.freqs[p.off[t]:p.off[t+1]]
		idf := bm25IDF(uint64(len(docs)), numDocs)
		var maxScore float32
		for lo := 0; lo < len(docs); lo += ftsBlock {
			hi := min(lo+ftsBlock, len(docs))
			var blockMax float32
			for k := lo; k < hi; k++ {
				s := idf * bm25DocWeight(freqs[k], numTokens[docs[k]], avgdl)
				blockMax = max(blockMax, s)
			}
			maxScore = max(maxScore, blockMax)
			data = encodePostingBlock(data, blockMax, docs[lo:hi], freqs[lo:hi])
			block++
			e.blockOff[block] = int64(from.data + len(data))
		}
		e.listOff[t+1] = int32(block)
		e.maxScore[t] = maxScore
		e.length[t] = uint32(len(docs))
		if e.postOff == nil {
			continue
		}
		e.postOff[t+1] = int32(p.off[t+1])
		at := p.posOff[t]
		for k, f := range freqs {
			pos := p.pos[at : at+int(f)]
			at += int(f)
			posData = binary.LittleEndian.AppendUint32(posData, uint32(len(pos)))
			bin++
			e.binOff[bin] = int64(from.posData + len(posData))
			i := 0
			for ; i+ftsBlock <= len(pos); i += ftsBlock {
				posData = packSorted4x(posData, (*[ftsBlock]uint32)(pos[i:i+ftsBlock]))
				bin++
				e.binOff[bin] = int64(from.posData + len(posData))
			}
			if i < len(pos) {
				for _, x := range pos[i:] {
					posData = binary.LittleEndian.AppendUint32(posData, x)
				}
				bin++
				e.binOff[bin] = int64(from.posData + len(posData))
			}
			e.binsOff[p.off[t]+k+1] = int32(bin)
		}
	}
	// appending past a share's capacity would have moved it elsewhere
	return block == to.blocks && from.data+len(data) == to.data && bin == to.bins && from.posData+len(posData) == to.posData &&
		(len(data) == 0 || &data[0] == &e.data[from.data]) && (len(posData) == 0 || &posData[0] == &e.posData[from.posData])
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
