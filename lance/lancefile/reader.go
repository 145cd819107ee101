package lancefile

import (
	"context"
	"fmt"

	"github.com/apache/arrow-go/v18/arrow"
	"google.golang.org/protobuf/proto"

	"github.com/lancecat/lancecat/lance/pb/file2pb"
	"github.com/lancecat/lancecat/lance/pb/filepb"
)

// tailSize is how much of the end of a file Open reads at once: enough for
// the footer and, in typical files, all metadata (Rust prefetches the same).
const tailSize = 64 << 10

// Reader reads one Lance data file. It holds only metadata; pages are
// fetched per Read. Safe for concurrent Reads if the Source is.
type Reader struct {
	src     Source
	footer  Footer
	numRows uint64
	roots   []*field
	schema  *arrow.Schema
	columns []*file2pb.ColumnMetadata
	global  []bufferRange
}

// Open reads the footer and metadata of the file behind src.
func Open(ctx context.Context, src Source) (*Reader, error) {
	size := src.Size()
	if size < FooterSize {
		return nil, fmt.Errorf("file of %d bytes has no footer: %w", size, ErrCorrupt)
	}
	tailStart := max(size-tailSize, 0)
	tail, err := src.ReadRange(ctx, tailStart, size-tailStart)
	if err != nil {
		return nil, err
	}
	f, err := ParseFooter(tail[len(tail)-FooterSize:], size)
	if err != nil {
		return nil, err
	}
	r := &Reader{src: src, footer: f}
	// Everything from the first column metadata to the footer is metadata;
	// read it in one go when the tail did not already cover it.
	metaStart := int64(f.ColumnMetaStart)
	meta := tail
	metaBase := tailStart
	if metaStart < tailStart {
		if meta, err = src.ReadRange(ctx, metaStart, size-metaStart); err != nil {
			return nil, err
		}
		metaBase = metaStart
	}
	region := func(pos, n uint64) ([]byte, error) {
		if err := (bufferRange{pos, n}).check(size); err != nil {
			return nil, err
		}
		if int64(pos) >= metaBase {
			return meta[int64(pos)-metaBase : int64(pos)-metaBase+int64(n)], nil
		}
		return src.ReadRange(ctx, int64(pos), int64(n))
	}
	cmoBytes, err := region(f.ColumnMetaOffsets, 16*uint64(f.NumColumns))
	if err != nil {
		return nil, err
	}
	cmo, err := parseOffsetTable(cmoBytes, f.NumColumns, size, "column metadata")
	if err != nil {
		return nil, err
	}
	gboBytes, err := region(f.GlobalBufOffsets, 16*uint64(f.NumGlobalBuffers))
	if err != nil {
		return nil, err
	}
	if r.global, err = parseOffsetTable(gboBytes, f.NumGlobalBuffers, size, "global buffer"); err != nil {
		return nil, err
	}
	r.columns = make([]*file2pb.ColumnMetadata, len(cmo))
	for i, e := range cmo {
		b, err := region(e.Pos, e.Size)
		if err != nil {
			return nil, err
		}
		cm := &file2pb.ColumnMetadata{}
		if err := proto.Unmarshal(b, cm); err != nil {
			return nil, fmt.Errorf("column %d metadata: %v: %w", i, err, ErrCorrupt)
		}
		for p, page := range cm.GetPages() {
			if len(page.GetBufferOffsets()) != len(page.GetBufferSizes()) {
				return nil, fmt.Errorf("column %d page %d: %d buffer offsets, %d sizes: %w", i, p, len(page.GetBufferOffsets()), len(page.GetBufferSizes()), ErrCorrupt)
			}
			for k, off := range page.GetBufferOffsets() {
				if err := (bufferRange{off, page.GetBufferSizes()[k]}).check(size); err != nil {
					return nil, fmt.Errorf("column %d page %d buffer %d: %w", i, p, k, err)
				}
			}
		}
		r.columns[i] = cm
	}
	if len(r.global) == 0 {
		return nil, fmt.Errorf("no global buffers, so no schema: %w", ErrCorrupt)
	}
	sb, err := region(r.global[0].Pos, r.global[0].Size)
	if err != nil {
		return nil, err
	}
	fd := &filepb.FileDescriptor{}
	if err := proto.Unmarshal(sb, fd); err != nil {
		return nil, fmt.Errorf("schema: %v: %w", err, ErrCorrupt)
	}
	r.numRows = fd.GetLength()
	if r.roots, r.schema, err = buildSchema(fd.GetSchema().GetFields(), fd.GetSchema().GetMetadata()); err != nil {
		return nil, err
	}
	if err := r.assignColumns(); err != nil {
		return nil, err
	}
	if err := r.checkPageRows(); err != nil {
		return nil, err
	}
	return r, nil
}

// checkPageRows verifies that the pages of every row-aligned column add up
// to the file's row count, so a corrupt page length cannot make a read
// decode (and allocate for) rows the file does not have. Item columns of
// 2.0 lists count items instead and are checked against their offsets when
// read.
func (r *Reader) checkPageRows() error {
	var walk func(n *field, underList bool) error
	walk = func(n *field, underList bool) error {
		if !underList && (len(n.children) == 0 || r.footer.Version == V2_0) {
			var sum uint64
			for _, p := range r.columns[n.column].GetPages() {
				if p.GetLength() > maxValues || sum+p.GetLength() < sum {
					return fmt.Errorf("column %d: page of %d rows: %w", n.column, p.GetLength(), ErrCorrupt)
				}
				sum += p.GetLength()
			}
			if sum != r.numRows {
				return fmt.Errorf("column %d pages hold %d rows, file has %d: %w", n.column, sum, r.numRows, ErrCorrupt)
			}
		}
		_, isList := n.arrow.Type.(arrow.ListLikeType)
		_, isFSL := n.arrow.Type.(*arrow.FixedSizeListType)
		for _, c := range n.children {
			if err := walk(c, underList || (isList && !isFSL && r.footer.Version == V2_0)); err != nil {
				return err
			}
		}
		return nil
	}
	for _, n := range r.roots {
		if err := walk(n, false); err != nil {
			return err
		}
	}
	return nil
}

// assignColumns maps schema nodes to columns in pre-order: every node in
// 2.0, only leaves in 2.1.
func (r *Reader) assignColumns() error {
	next := 0
	var walk func(n *field)
	walk = func(n *field) {
		n.column = next
		if r.footer.Version == V2_0 || len(n.children) == 0 {
			next++
		}
		for _, c := range n.children {
			walk(c)
		}
	}
	for _, n := range r.roots {
		walk(n)
	}
	if next != len(r.columns) {
		return fmt.Errorf("schema needs %d columns, file has %d: %w", next, len(r.columns), ErrUnsupported)
	}
	return nil
}

// Schema is the Arrow schema of the file.
func (r *Reader) Schema() *arrow.Schema { return r.schema }

// NumRows is the number of rows in the file.
func (r *Reader) NumRows() uint64 { return r.numRows }

// Version is the file format version from the footer.
func (r *Reader) Version() Version { return r.footer.Version }

// NumColumns is the number of physical columns.
func (r *Reader) NumColumns() int { return len(r.columns) }

// readPageBuffers fetches all buffers of a page, coalescing them into one
// request when they are close together (Lance writes them back to back).
func (r *Reader) readPageBuffers(ctx context.Context, page *file2pb.ColumnMetadata_Page) ([][]byte, error) {
	offs, sizes := page.GetBufferOffsets(), page.GetBufferSizes()
	out := make([][]byte, len(offs))
	if len(offs) == 0 {
		return out, nil
	}
	lo, hi, total := offs[0], offs[0], uint64(0)
	for i, o := range offs {
		lo = min(lo, o)
		hi = max(hi, o+sizes[i])
		total += sizes[i]
	}
	if hi-lo <= 2*total+4096 {
		all, err := r.src.ReadRange(ctx, int64(lo), int64(hi-lo))
		if err != nil {
			return nil, err
		}
		for i, o := range offs {
			out[i] = all[o-lo : o-lo+sizes[i]]
		}
		return out, nil
	}
	for i, o := range offs {
		b, err := r.src.ReadRange(ctx, int64(o), int64(sizes[i]))
		if err != nil {
			return nil, err
		}
		out[i] = b
	}
	return out, nil
}

// NumGlobalBuffers is the number of global buffers (buffer 0 is the schema).
func (r *Reader) NumGlobalBuffers() int { return len(r.global) }

// GlobalBuffer reads global buffer i (its range was checked against the
// file size when the file was opened).
func (r *Reader) GlobalBuffer(ctx context.Context, i int) ([]byte, error) {
	if i < 0 || i >= len(r.global) {
		return nil, fmt.Errorf("global buffer %d of %d: %w", i, len(r.global), ErrCorrupt)
	}
	g := r.global[i]
	return r.src.ReadRange(ctx, int64(g.Pos), int64(g.Size))
}
