package lancefile

import (
	"context"
	"fmt"
	"sync"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"google.golang.org/protobuf/proto"

	"github.com/lancecat/lancecat/lance/pb/enc21pb"
	"github.com/lancecat/lancecat/lance/pb/file2pb"
)

// Random access into full-zip pages of fixed-width values (vectors and
// other wide fixed values): every entry is a control word and the value,
// so row r of a page starts at r times the entry size and a take reads
// only the entries it needs, never the whole page.

// takeGap is how far apart two wanted entries may be and still be fetched
// in one read.
const takeGap = 16 << 10

// maxTakeReads bounds the range reads in flight for one column.
const maxTakeReads = 16

// fullZipStride is the entry size of a full-zip page of fixed-width values
// without repetition, or 0 when the page is not one.
func fullZipStride(l *enc21pb.FullZipLayout) int {
	if l == nil || l.GetBitsRep() != 0 || l.GetBitsDef() > 16 {
		return 0
	}
	dec, err := newZipValueDecoder(l)
	if err != nil || dec.fixedBytes <= 0 {
		return 0
	}
	return controlWordBytes(0, l.GetBitsDef()) + dec.fixedBytes
}

// takeFullZip reads sorted, distinct rows of leaf n when every page of its
// column is a fixed-width full-zip page; ok is false otherwise (the caller
// decodes whole pages instead).
func (r *Reader) takeFullZip(ctx context.Context, mem memory.Allocator, n *field, rows []uint64) (a arrow.Array, ok bool, err error) {
	if r.footer.Version == V2_0 || len(n.children) != 0 {
		return nil, false, nil
	}
	pages := r.columns[n.column].GetPages()
	layouts := make([]*enc21pb.FullZipLayout, len(pages))
	strides := make([]int, len(pages))
	for p, page := range pages {
		pl, err := pageLayout(page)
		if err != nil {
			return nil, false, err
		}
		l := pl.GetFullZipLayout()
		if strides[p] = fullZipStride(l); strides[p] == 0 || len(page.GetBufferOffsets()) == 0 {
			return nil, false, nil
		}
		layouts[p] = l
	}
	// Group rows by page, then into reads.
	type read struct {
		off, size int64
		first     int // index into rows of the first row it serves
		last      int // index after the last
		data      []byte
	}
	type pageRows struct {
		p       int
		from    int // rows[from:to] fall into page p
		to      int
		start   uint64
		readsAt int
		nReads  int
	}
	var plan []pageRows
	var reads []*read
	var start uint64
	i := 0
	for p, page := range pages {
		end := start + page.GetLength()
		from := i
		for i < len(rows) && rows[i] < end {
			i++
		}
		if i > from {
			pr := pageRows{p: p, from: from, to: i, start: start, readsAt: len(reads)}
			base := int64(page.GetBufferOffsets()[0])
			size := int64(page.GetBufferSizes()[0])
			stride := int64(strides[p])
			for k := from; k < i; {
				off := base + int64(rows[k]-start)*stride
				last := k + 1
				for last < i && int64(rows[last]-rows[last-1]-1)*stride <= takeGap {
					last++
				}
				endOff := base + int64(rows[last-1]-start+1)*stride
				if endOff > base+size {
					return nil, false, fmt.Errorf("full-zip row %d past its page of %d bytes: %w", rows[last-1], size, ErrCorrupt)
				}
				reads = append(reads, &read{off: off, size: endOff - off, first: k, last: last})
				k = last
			}
			pr.nReads = len(reads) - pr.readsAt
			plan = append(plan, pr)
		}
		start = end
	}
	// Fetch in parallel.
	var wg sync.WaitGroup
	sem := make(chan struct{}, maxTakeReads)
	errs := make([]error, len(reads))
	for k, rd := range reads {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			rd.data, errs[k] = r.src.ReadRange(ctx, rd.off, rd.size)
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return nil, false, err
		}
	}
	// Decode each page's wanted entries as a page of their own.
	var us unravelers
	var parts []*values
	for _, pr := range plan {
		stride := strides[pr.p]
		buf := make([]byte, 0, (pr.to-pr.from)*stride)
		for _, rd := range reads[pr.readsAt : pr.readsAt+pr.nReads] {
			first := rows[rd.first]
			for k := rd.first; k < rd.last; k++ {
				o := int(rows[k]-first) * stride
				buf = append(buf, rd.data[o:o+stride]...)
			}
		}
		l := proto.CloneOf(layouts[pr.p])
		l.NumItems = uint32(pr.to - pr.from)
		lp, err := decodeFullZip(l, [][]byte{buf}, pr.to-pr.from)
		if err != nil {
			return nil, false, fmt.Errorf("page %d: %w", pr.p, err)
		}
		lp.rows = pr.to - pr.from
		if err := lp.check(); err != nil {
			return nil, false, fmt.Errorf("page %d: %w", pr.p, err)
		}
		us = append(us, newUnraveler(lp.rep, lp.def, lp.layers, lp.vals.n))
		parts = append(parts, lp.vals)
	}
	vals, err := concatValues(parts)
	if err != nil {
		return nil, false, err
	}
	valid, err := us.validity()
	if err != nil {
		return nil, false, err
	}
	a, err = buildArray(mem, n.arrow.Type, vals, valid)
	if err != nil {
		return nil, false, err
	}
	return a, true, nil
}

// fullZipRange decodes rows [a, b) of page when it is a full-zip page of
// fixed-width values without repetition, reading only their entries; ok is
// false when the page is not one.
func (r *Reader) fullZipRange(ctx context.Context, page *file2pb.ColumnMetadata_Page, a, b uint64) (lp *leafPage, ok bool, err error) {
	pl, err := pageLayout(page)
	if err != nil {
		return nil, false, err
	}
	l := pl.GetFullZipLayout()
	stride := uint64(fullZipStride(l))
	if stride == 0 || len(page.GetBufferOffsets()) == 0 || len(page.GetBufferSizes()) == 0 || a >= b {
		return nil, false, nil
	}
	if b > maxValues || b*stride > page.GetBufferSizes()[0] {
		return nil, false, fmt.Errorf("full-zip rows %d..%d outside %d bytes: %w", a, b, page.GetBufferSizes()[0], ErrCorrupt)
	}
	data, err := r.src.ReadRange(ctx, int64(page.GetBufferOffsets()[0]+a*stride), int64((b-a)*stride))
	if err != nil {
		return nil, false, err
	}
	sub := proto.CloneOf(l)
	sub.NumItems = uint32(b - a)
	if lp, err = decodeFullZip(sub, [][]byte{data}, int(b-a)); err != nil {
		return nil, false, err
	}
	lp.rows = int(b - a)
	if err := lp.check(); err != nil {
		return nil, false, err
	}
	return lp, true, nil
}
