package lancefile

import (
	"context"
	"fmt"
	"math/bits"
	"sort"
	"sync"

	"google.golang.org/protobuf/proto"

	"github.com/lancecat/lancecat/lance/pb/enc21pb"
	"github.com/lancecat/lancecat/lance/pb/file2pb"
)

// Scans of mini-block pages by spans of chunks. A Cursor used to decode a
// page whole at its first window and hand out windows of it: a 200,000-row
// page of strings was decoded (and allocated) at once before the first
// batch could be filtered, on one core, and a task covering part of a
// fragment decoded its pages from their start. For a mini-block page
// without repetition (a chunk's items are its rows) a Cursor instead keeps
// the page's raw bytes — only the chunks its row range needs — and decodes
// the chunks under a span of spanRows rows at a time: memory stays a span,
// a span is filtered while it is in cache, and tasks over row ranges of
// one fragment share no decode.

// spanRows is the rows a Cursor decodes ahead: 4 batches of Lance's 8192.
// A chunk straddling two spans is decoded for both (at most 4096 rows per
// 32768).
const spanRows = 32768

// rawMini is the raw bytes of one mini-block page a Cursor needs.
type rawMini struct {
	layout *enc21pb.MiniBlockLayout
	meta   miniMeta
	starts []uint64 // per chunk, its first row; then the page's row count
	offs   []uint64 // per chunk, its byte offset in the data buffer; then the end
	data   []byte   // data buffer bytes [base, base+len)
	base   uint64
	dict   []byte
	// buf is data's pooled backing (nil: not pooled); pinned once a span
	// decoded from data may hold views of it (not FSST, not bit-packed):
	// then it is never reused.
	buf    *[]byte
	pinned bool
}

// span is the decoded chunks of a column covering page rows [first, first+lp.rows).
type span struct {
	page  int
	first uint64
	lp    *leafPage
}

// SetRowRange tells the cursor that its reads stay within rows [lo, hi):
// a mini-block page is then fetched only for the chunks in that range.
func (c *Cursor) SetRowRange(lo, hi uint64) {
	c.pc.lo, c.pc.hi = lo, min(hi, c.r.numRows)
}

// spanPage returns the decoded chunks of page p (starting at page row
// start) of column col covering page rows [a, b), as a leaf page of its
// own starting at page row first; ok is false when the page is not a
// mini-block page without repetition.
func (r *Reader) spanPage(ctx context.Context, pc *pageCache, col, p int, page *file2pb.ColumnMetadata_Page, start, a, b uint64) (lp *leafPage, first uint64, ok bool, err error) {
	if sp := pc.spans[col]; sp != nil && sp.page == p && sp.first <= a && b <= sp.first+uint64(sp.lp.rows) {
		cp := *sp.lp
		return &cp, sp.first, true, nil
	}
	key := [2]int{col, p}
	raw, seen := pc.raws[key]
	if !seen {
		if raw, err = r.loadRawMini(ctx, pc, page, start); err != nil {
			return nil, 0, false, err
		}
		pc.raws[key] = raw // nil: not such a page (remembered)
	}
	if raw == nil {
		return nil, 0, false, nil
	}
	nc := len(raw.starts) - 1
	// the chunks overlapping [a, end): at least the window, up to a span
	end := max(b, min(a+spanRows, raw.starts[nc]))
	if pc.hi > start {
		end = max(b, min(end, pc.hi-start))
	}
	c0 := sort.Search(nc, func(c int) bool { return raw.starts[c+1] > a })
	c1 := sort.Search(nc, func(c int) bool { return raw.starts[c] >= end })
	if c0 >= c1 {
		return nil, 0, false, fmt.Errorf("rows %d..%d past the page's chunks: %w", a, b, ErrCorrupt)
	}
	if raw.offs[c0] < raw.base || raw.offs[c1] > raw.base+uint64(len(raw.data)) {
		// a read outside the row range the cursor was given: the whole page
		if raw, err = r.loadRawMini(ctx, nil, page, start); err != nil {
			return nil, 0, false, err
		}
		pc.raws[key] = raw
	}
	words := make([]byte, 0, raw.meta.width*(c1-c0))
	for c := c0; c < c1; c++ {
		words = raw.meta.appendWord(words, raw.meta.word(c))
	}
	bufs := [][]byte{words, raw.data[raw.offs[c0]-raw.base : raw.offs[c1]-raw.base]}
	if raw.dict != nil {
		bufs = append(bufs, raw.dict)
	}
	sub := proto.CloneOf(raw.layout)
	sub.NumItems = raw.starts[c1] - raw.starts[c0]
	var spare []uint64
	if raw.layout.GetValueCompression().GetFsst() != nil {
		spare = spanOffsets()
	}
	if lp, err = decodeMiniBlockInto(sub, bufs, spare); err != nil {
		return nil, 0, false, err
	}
	if !lp.fresh {
		raw.pinned = true
	}
	lp.rows = int(sub.NumItems)
	if err := lp.check(); err != nil {
		return nil, 0, false, err
	}
	pc.retire(col)
	pc.spans[col] = &span{page: p, first: raw.starts[c0], lp: lp}
	cp := *lp
	return &cp, raw.starts[c0], true, nil
}

// loadRawMini reads what a cursor needs of a mini-block page without
// repetition: its chunk metadata, dictionary, and the data of the chunks
// overlapping the cursor's row range (pc nil: the whole page). nil: not
// such a page.
func (r *Reader) loadRawMini(ctx context.Context, pc *pageCache, page *file2pb.ColumnMetadata_Page, start uint64) (*rawMini, error) {
	pl, err := pageLayout(page)
	if err != nil {
		return nil, err
	}
	l := pl.GetMiniBlockLayout()
	offs, sizes := page.GetBufferOffsets(), page.GetBufferSizes()
	if l == nil || l.GetRepCompression() != nil || len(offs) < 2 || len(sizes) < 2 || page.GetLength() != l.GetNumItems() || l.GetNumItems() > maxValues {
		return nil, nil
	}
	if l.GetDictionary() != nil && len(offs) < 3 {
		return nil, fmt.Errorf("mini-block dictionary missing: %w", ErrCorrupt)
	}
	metaBytes, err := r.src.ReadRange(ctx, int64(offs[0]), int64(sizes[0]))
	if err != nil {
		return nil, err
	}
	mm, err := newMiniMeta(l, metaBytes)
	if err != nil {
		return nil, err
	}
	nc := mm.chunks()
	raw := &rawMini{layout: l, meta: mm, starts: make([]uint64, nc+1), offs: make([]uint64, nc+1)}
	var row, pos uint64
	for c := 0; c < nc; c++ {
		size, n := mm.chunk(c)
		if c == nc-1 {
			if row > l.GetNumItems() {
				return nil, fmt.Errorf("mini-block chunks exceed %d items: %w", l.GetNumItems(), ErrCorrupt)
			}
			n = l.GetNumItems() - row
		}
		raw.starts[c], raw.offs[c] = row, pos
		row += n
		pos += uint64(size)
	}
	raw.starts[nc], raw.offs[nc] = row, pos
	if row != l.GetNumItems() || pos > sizes[1] || nc == 0 {
		return nil, fmt.Errorf("mini-block chunks hold %d of %d items in %d of %d bytes: %w", row, l.GetNumItems(), pos, sizes[1], ErrCorrupt)
	}
	// the chunks of the cursor's rows (page-relative [lo, hi))
	lo, hi := uint64(0), row
	if pc != nil && pc.hi > pc.lo {
		lo, hi = max(pc.lo, start)-start, min(pc.hi-start, row)
		if pc.lo >= start+row || pc.hi <= start {
			lo, hi = 0, row
		}
	}
	c0 := sort.Search(nc, func(c int) bool { return raw.starts[c+1] > lo })
	c1 := sort.Search(nc, func(c int) bool { return raw.starts[c] >= hi })
	if c1 <= c0 {
		c0, c1 = 0, nc
	}
	raw.base = raw.offs[c0]
	off, n := int64(offs[1]+raw.base), int64(raw.offs[c1]-raw.base)
	if into, ok := r.src.(intoReader); ok && pc != nil && n >= minPooledRaw {
		raw.buf = rawBuffer(int(n))
		if err := into.ReadRangeInto(ctx, off, *raw.buf); err != nil {
			return nil, err
		}
		raw.data = *raw.buf
	} else if raw.data, err = r.src.ReadRange(ctx, off, n); err != nil {
		return nil, err
	}
	if l.GetDictionary() != nil {
		if raw.dict, err = r.src.ReadRange(ctx, int64(offs[2]), int64(sizes[2])); err != nil {
			return nil, err
		}
	}
	return raw, nil
}

// The offsets of FSST-decoded spans are scratch: every array built from a
// span copies them (buildArray converts them to the array's offset type),
// so once the read that used a span has built its arrays they go back to
// a pool for the next span of any cursor. A scan of strings otherwise
// allocated and zeroed 8 bytes per row (a count's tasks are a few spans
// each: a pool per cursor would rarely be used).
var offsetsPool sync.Pool // *[]uint64 of cap spanOffsetsCap

// spanOffsetsCap fits the offsets of any span: a chunk more than spanRows
// on each side.
const spanOffsetsCap = spanRows + 2*maxChunkValues + 1

func spanOffsets() []uint64 {
	if p, ok := offsetsPool.Get().(*[]uint64); ok {
		return (*p)[:0]
	}
	return make([]uint64, 0, spanOffsetsCap)
}

// retire sets aside the offsets of column col's span (the span is being
// replaced or dropped): the current read may still hold a view of them (a
// window over two pages), so they are pooled when it ends (release).
func (pc *pageCache) retire(col int) {
	if old := pc.spans[col]; old != nil && old.lp.vals.kind == kindVariable && cap(old.lp.vals.offsets) == spanOffsetsCap {
		pc.retired = append(pc.retired, old.lp.vals.offsets)
	}
}

// release pools the retired offsets: a read has built its arrays.
func (pc *pageCache) release() {
	for i, o := range pc.retired {
		o = o[:0]
		offsetsPool.Put(&o)
		pc.retired[i] = nil
	}
	pc.retired = pc.retired[:0]
}

// The raw chunk bytes a Cursor reads of a mini-block page (loadRawMini)
// are read into pooled buffers when the source can (a local file): the
// buffers go back when the cursor is done with its row range, unless a
// span decoded from them may share their bytes (rawMini.pinned). A
// count_rows scan otherwise allocated (and faulted in) every page's bytes
// afresh.
var rawPools [48]sync.Pool // by capacity class: 1<<k bytes

// minPooledRaw: smaller reads are allocated as before.
const minPooledRaw = 64 << 10

func rawBuffer(n int) *[]byte {
	k := bits.Len(uint(n - 1))
	if p, ok := rawPools[k].Get().(*[]byte); ok {
		*p = (*p)[:n]
		return p
	}
	b := make([]byte, n, 1<<k)
	return &b
}

// releaseRaws releases every raw page of the cursor (releaseRaw).
func (pc *pageCache) releaseRaws() {
	for key := range pc.raws {
		pc.releaseRaw(key)
	}
}

// releaseRaw forgets a raw page of the cursor (a later read loads it
// again) and pools its buffer unless a span may share its bytes.
func (pc *pageCache) releaseRaw(key [2]int) {
	raw := pc.raws[key]
	delete(pc.raws, key)
	if raw == nil || raw.buf == nil || raw.pinned {
		return
	}
	if k := bits.Len(uint(cap(*raw.buf) - 1)); cap(*raw.buf) == 1<<k && k < len(rawPools) {
		rawPools[k].Put(raw.buf)
	}
	raw.buf, raw.data = nil, nil
}
