package lancefile

import (
	"context"
	"fmt"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"google.golang.org/protobuf/proto"

	"github.com/lancecat/lancecat/lance/pb/enc21pb"
	"github.com/lancecat/lancecat/lance/pb/file2pb"
)

// Random access into mini-block pages without repetition: a page is a
// sequence of chunks of known item counts (the chunk metadata buffer), so a
// take fetches the metadata and only the chunks holding wanted rows, and
// decodes those chunks as a page of their own.

// chunkTakeFactor: a take reads chunk by chunk when it wants at most one
// row per chunkTakeFactor rows of the file (tests lower it to force the path).
var chunkTakeFactor uint64 = 8

// takeMiniBlock returns, for leaf n when every page of its column is a
// mini-block page without repetition, an array of the rows of the chunks
// it decoded and, per row of sorted, that row's index in it. ok is false
// when the column is not such a column.
func (r *Reader) takeMiniBlock(ctx context.Context, mem memory.Allocator, n *field, rows []uint64) (a arrow.Array, at []int, ok bool, err error) {
	// Dense takes touch most chunks anyway; decoding whole pages is
	// cheaper then (one page-wide decode, no per-row index). Reading chunk
	// by chunk pays once at most one row in chunkTakeFactor is wanted: the
	// chunks of unwanted rows are then skipped, read and decode alike.
	if r.footer.Version == V2_0 || len(n.children) != 0 || uint64(len(rows))*chunkTakeFactor > r.numRows {
		return nil, nil, false, nil
	}
	pages := r.columns[n.column].GetPages()
	for _, page := range pages {
		pl, err := pageLayout(page)
		if err != nil {
			return nil, nil, false, err
		}
		l := pl.GetMiniBlockLayout()
		if l == nil || l.GetRepCompression() != nil || len(page.GetBufferOffsets()) < 2 {
			return nil, nil, false, nil
		}
	}
	var us unravelers
	var parts []*values
	at = make([]int, len(rows))
	base := 0 // rows decoded so far
	var start uint64
	i := 0
	for p, page := range pages {
		end := start + page.GetLength()
		from := i
		for i < len(rows) && rows[i] < end {
			i++
		}
		if i == from {
			start = end
			continue
		}
		pl, _ := pageLayout(page)
		l := pl.GetMiniBlockLayout()
		offs, sizes := page.GetBufferOffsets(), page.GetBufferSizes()
		meta, err := r.src.ReadRange(ctx, int64(offs[0]), int64(sizes[0]))
		if err != nil {
			return nil, nil, false, err
		}
		mm, err := newMiniMeta(l, meta)
		if err != nil {
			return nil, nil, false, err
		}
		// Select the chunks holding wanted rows.
		nChunks := mm.chunks()
		var seen, pos uint64
		var words []uint32
		var refs []chunkRef
		var count, selBytes uint64 // items and bytes of the selected chunks
		k := from
		for c := 0; c < nChunks && k < i; c++ {
			word := mm.word(c)
			isize, cnt := mm.chunk(c)
			size := uint64(isize)
			if c == nChunks-1 {
				if seen > uint64(l.GetNumItems()) {
					return nil, nil, false, fmt.Errorf("mini-block chunks exceed %d items: %w", l.GetNumItems(), ErrCorrupt)
				}
				cnt = uint64(l.GetNumItems()) - seen
			}
			lo, hi := start+seen, start+seen+cnt
			if rows[k] < hi {
				if pos+size > sizes[1] {
					return nil, nil, false, fmt.Errorf("mini-block chunk %d outside its page: %w", c, ErrCorrupt)
				}
				for ; k < i && rows[k] < hi; k++ {
					at[k] = base + int(count) + int(rows[k]-lo)
				}
				words = append(words, word)
				refs = append(refs, chunkRef{pos, size})
				count += cnt
				selBytes += size
			}
			seen += cnt
			pos += size
		}
		if k < i {
			return nil, nil, false, fmt.Errorf("page %d: rows past its chunks: %w", p, ErrCorrupt)
		}
		lp, err := r.decodeChunks(ctx, page, l, mm, words, refs, count, selBytes)
		if err != nil {
			return nil, nil, false, fmt.Errorf("page %d: %w", p, err)
		}
		us = append(us, newUnraveler(lp.rep, lp.def, lp.layers, lp.vals.n))
		parts = append(parts, lp.vals)
		base += int(count)
		start = end
	}
	vals, err := concatValues(parts)
	if err != nil {
		return nil, nil, false, err
	}
	valid, err := us.validity()
	if err != nil {
		return nil, nil, false, err
	}
	a, err = buildArray(mem, n.arrow.Type, vals, valid)
	if err != nil {
		return nil, nil, false, err
	}
	return a, at, true, nil
}

// pick arranges rows of a (at[k] is the row of a for sorted[k]) in the
// order of rows.
func pick(mem memory.Allocator, a arrow.Array, at []int, sorted, rows []uint64) (arrow.Array, error) {
	var pieces []arrow.Array
	defer func() {
		for _, p := range pieces {
			p.Release()
		}
	}()
	index := make(map[uint64]int, len(sorted))
	for k, r := range sorted {
		index[r] = at[k]
	}
	for i := 0; i < len(rows); {
		first := index[rows[i]]
		j := i + 1
		for j < len(rows) && index[rows[j]] == first+(j-i) {
			j++
		}
		pieces = append(pieces, array.NewSlice(a, int64(first), int64(first+(j-i))))
		i = j
	}
	if len(pieces) == 0 {
		return array.MakeArrayOfNull(mem, a.DataType(), 0), nil
	}
	return array.Concatenate(pieces, mem)
}

// chunkRef is where one chunk lies in a mini-block page's data buffer.
type chunkRef struct{ off, size uint64 }

// decodeChunks fetches the chunks refs of a mini-block page (words are
// their metadata words, count their items, selBytes their bytes) and the
// page's dictionary, and decodes them as a page of their own.
func (r *Reader) decodeChunks(ctx context.Context, page *file2pb.ColumnMetadata_Page, l *enc21pb.MiniBlockLayout, mm miniMeta, words []uint32, refs []chunkRef, count, selBytes uint64) (*leafPage, error) {
	offs, sizes := page.GetBufferOffsets(), page.GetBufferSizes()
	// One read over the selected chunks when they are dense enough,
	// else one per chunk.
	var data []byte
	spanLo, spanHi := refs[0].off, refs[len(refs)-1].off+refs[len(refs)-1].size
	if spanHi-spanLo <= 2*selBytes+64<<10 {
		span, err := r.src.ReadRange(ctx, int64(offs[1]+spanLo), int64(spanHi-spanLo))
		if err != nil {
			return nil, err
		}
		if spanHi-spanLo == selBytes {
			data = span
		} else {
			data = make([]byte, 0, selBytes)
			for _, ref := range refs {
				data = append(data, span[ref.off-spanLo:ref.off-spanLo+ref.size]...)
			}
		}
	} else {
		data = make([]byte, 0, selBytes)
		for _, ref := range refs {
			chunk, err := r.src.ReadRange(ctx, int64(offs[1]+ref.off), int64(ref.size))
			if err != nil {
				return nil, err
			}
			data = append(data, chunk...)
		}
	}
	bufs := [][]byte{make([]byte, 0, mm.width*len(words)), data}
	for _, word := range words {
		bufs[0] = mm.appendWord(bufs[0], word)
	}
	if l.GetDictionary() != nil {
		if len(offs) < 3 {
			return nil, fmt.Errorf("mini-block dictionary missing: %w", ErrCorrupt)
		}
		dict, err := r.src.ReadRange(ctx, int64(offs[2]), int64(sizes[2]))
		if err != nil {
			return nil, err
		}
		bufs = append(bufs, dict)
	}
	sub := proto.CloneOf(l)
	sub.NumItems = count
	lp, err := decodeMiniBlock(sub, bufs)
	if err != nil {
		return nil, err
	}
	lp.rows = int(count)
	if err := lp.check(); err != nil {
		return nil, err
	}
	return lp, nil
}

// miniBlockRange decodes the chunks of page (a mini-block page without
// repetition, so a chunk's items are its rows) that overlap its rows
// [a, b), and returns them with the page row the first one starts at. ok
// is false when the page is not such a page.
func (r *Reader) miniBlockRange(ctx context.Context, page *file2pb.ColumnMetadata_Page, a, b uint64) (lp *leafPage, first uint64, ok bool, err error) {
	pl, err := pageLayout(page)
	if err != nil {
		return nil, 0, false, err
	}
	l := pl.GetMiniBlockLayout()
	if l == nil || l.GetRepCompression() != nil || len(page.GetBufferOffsets()) < 2 || len(page.GetBufferSizes()) < 2 || a >= b {
		return nil, 0, false, nil
	}
	offs, sizes := page.GetBufferOffsets(), page.GetBufferSizes()
	meta, err := r.src.ReadRange(ctx, int64(offs[0]), int64(sizes[0]))
	if err != nil {
		return nil, 0, false, err
	}
	mm, err := newMiniMeta(l, meta)
	if err != nil {
		return nil, 0, false, err
	}
	nChunks := mm.chunks()
	var seen, pos, count, selBytes uint64
	var words []uint32
	var refs []chunkRef
	first = 0
	for c := 0; c < nChunks && seen < b; c++ {
		isize, cnt := mm.chunk(c)
		size := uint64(isize)
		if c == nChunks-1 {
			if seen > uint64(l.GetNumItems()) {
				return nil, 0, false, fmt.Errorf("mini-block chunks exceed %d items: %w", l.GetNumItems(), ErrCorrupt)
			}
			cnt = uint64(l.GetNumItems()) - seen
		}
		if seen+cnt > a {
			if pos+size > sizes[1] {
				return nil, 0, false, fmt.Errorf("mini-block chunk %d outside its page: %w", c, ErrCorrupt)
			}
			if len(refs) == 0 {
				first = seen
			}
			words = append(words, mm.word(c))
			refs = append(refs, chunkRef{pos, size})
			count += cnt
			selBytes += size
		}
		seen += cnt
		pos += size
	}
	if len(refs) == 0 || first+count < b {
		return nil, 0, false, fmt.Errorf("rows %d..%d past the page's chunks: %w", a, b, ErrCorrupt)
	}
	lp, err = r.decodeChunks(ctx, page, l, mm, words, refs, count, selBytes)
	if err != nil {
		return nil, 0, false, err
	}
	return lp, first, true, nil
}
