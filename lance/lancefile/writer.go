package lancefile

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"

	"github.com/apache/arrow-go/v18/arrow"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/emptypb"

	"github.com/lancecat/lancecat/lance/pb/enc20pb"
	"github.com/lancecat/lancecat/lance/pb/file2pb"
	"github.com/lancecat/lancecat/lance/pb/filepb"
)

// DefaultPageBytes is how much unencoded data a column accumulates before
// it is written as a page: Lance's cache_bytes_per_column.
const DefaultPageBytes = 8 << 20

// maxPageItems caps the items of one page well below what readers accept.
const maxPageItems = 1 << 22

// pageAlign is the alignment of every page and global buffer (2.1 readers
// require 64).
const pageAlign = 64

// WriterOptions tunes a Writer.
type WriterOptions struct {
	// Fields is the flattened Lance schema to record, with the field ids
	// the dataset's manifest uses (pre-order, as in the manifest). Nil
	// derives it from the Arrow schema with ids 0, 1, … (LanceFields).
	Fields []*filepb.Field
	// PageBytes is the unencoded size at which a column's page is written;
	// 0 means DefaultPageBytes.
	PageBytes int
	// NoCompression writes only the plain encodings (Flat, Variable,
	// FixedSizeList): no bit-packing, no zstd.
	NoCompression bool
	// GlobalBuffers are written as global buffers 1, 2, … after the
	// schema (global buffer 0); Lance's label list index keeps its null
	// rows in one and names it in the schema metadata.
	GlobalBuffers [][]byte
	// Version is the file format to write: V2_1 (the zero value means
	// V2_1) or V2_2, which differs in the mini-block chunk grammar (u32
	// chunk metadata and value buffer sizes, has_large_chunk) and in
	// run-length-encoded levels.
	Version Version
}

// Writer writes one Lance 2.1 or 2.2 data file from Arrow records. Records are
// shredded into per-column pages as they arrive; a column's page is
// encoded and written as soon as it holds PageBytes of data, so memory stays
// bounded by about PageBytes per leaf column whatever the input size.
// Close writes the column metadata, the schema and the footer.
type Writer struct {
	w      io.Writer
	pos    int64
	schema *arrow.Schema
	fields []*filepb.Field
	cols   []*column
	byRoot [][]*column // leaf columns under each top-level field
	opts   WriterOptions
	rows   uint64
	err    error
	closed bool
}

// NewWriter starts a file for records of schema on w.
func NewWriter(w io.Writer, schema *arrow.Schema, opts WriterOptions) (*Writer, error) {
	if opts.PageBytes <= 0 {
		opts.PageBytes = DefaultPageBytes
	}
	switch opts.Version {
	case Version{}:
		opts.Version = V2_1
	case V2_1, V2_2:
	default:
		return nil, fmt.Errorf("lancefile: writing file format %s: %w", opts.Version, ErrUnsupported)
	}
	fields := opts.Fields
	if fields == nil {
		var err error
		if fields, err = LanceFields(schema, 0); err != nil {
			return nil, err
		}
	}
	cols, err := planColumns(schema, fields)
	if err != nil {
		return nil, err
	}
	wr := &Writer{w: w, schema: schema, fields: fields, cols: cols, opts: opts}
	for _, c := range cols {
		c.v22 = opts.Version == V2_2
	}
	// Group leaves by top-level field (pre-order keeps them contiguous).
	wr.byRoot = make([][]*column, len(schema.Fields()))
	k := 0
	for i, f := range schema.Fields() {
		n := countLeaves(f.Type)
		wr.byRoot[i] = cols[k : k+n]
		k += n
	}
	return wr, nil
}

func countLeaves(dt arrow.DataType) int {
	switch t := dt.(type) {
	case *arrow.StructType:
		n := 0
		for _, f := range t.Fields() {
			n += countLeaves(f.Type)
		}
		return n
	case *arrow.ListType:
		return countLeaves(t.Elem())
	case *arrow.LargeListType:
		return countLeaves(t.Elem())
	}
	return 1
}

// Version is the file format being written.
func (w *Writer) Version() Version { return w.opts.Version }

// Fields is the flattened Lance schema the file records.
func (w *Writer) Fields() []*filepb.Field { return w.fields }

// ColumnFieldIDs lists, per column, the id of its leaf field: a
// DataFile's fields (its column_indices are 0, 1, …).
func (w *Writer) ColumnFieldIDs() []int32 {
	out := make([]int32, len(w.cols))
	for i, c := range w.cols {
		out[i] = c.fieldID
	}
	return out
}

// NumRows is the number of rows written so far.
func (w *Writer) NumRows() uint64 { return w.rows }

// Size is the number of bytes written so far; after Close, the file size.
func (w *Writer) Size() int64 { return w.pos }

// Write adds the rows of rec, whose schema must match the writer's.
func (w *Writer) Write(rec arrow.RecordBatch) error {
	if w.err != nil {
		return w.err
	}
	if w.closed {
		return errors.New("lancefile: write after close")
	}
	if int(rec.NumCols()) != len(w.schema.Fields()) {
		return fmt.Errorf("lancefile: record has %d columns, schema %d", rec.NumCols(), len(w.schema.Fields()))
	}
	for i, f := range w.schema.Fields() {
		if !arrow.TypeEqual(rec.Column(i).DataType(), f.Type) {
			return fmt.Errorf("lancefile: column %q is %s, schema says %s", f.Name, rec.Column(i).DataType(), f.Type)
		}
	}
	n := int(rec.NumRows())
	for i := range w.schema.Fields() {
		arr := rec.Column(i)
		// Large records are shredded in steps of about a quarter page so a
		// page never overshoots its size by much.
		step := max(1, w.opts.PageBytes/4/estimateRowBytes(arr))
		for _, c := range w.byRoot[i] {
			for a := 0; a < n; a += step {
				b := min(n, a+step)
				if err := c.appendRows(arr, a, b); err != nil {
					w.err = fmt.Errorf("lancefile: column %q: %w", w.schema.Field(i).Name, err)
					return w.err
				}
				if c.page.bytes() >= w.opts.PageBytes || c.page.n >= maxPageItems || len(c.page.def) >= maxPageItems {
					if err := w.flushPage(c); err != nil {
						return err
					}
				}
			}
		}
	}
	w.rows += uint64(n)
	return nil
}

func (w *Writer) write(b []byte) error {
	if w.err != nil {
		return w.err
	}
	n, err := w.w.Write(b)
	w.pos += int64(n)
	if err != nil {
		w.err = fmt.Errorf("lancefile: write: %w", err)
	}
	return w.err
}

var zeros [pageAlign]byte

func (w *Writer) align() error {
	if pad := int(-w.pos & (pageAlign - 1)); pad > 0 {
		return w.write(zeros[:pad])
	}
	return nil
}

// flushPage encodes and writes the column's accumulated page.
func (w *Writer) flushPage(c *column) error {
	if c.page.rows == 0 {
		return nil
	}
	parts, err := c.encodePages(!w.opts.NoCompression)
	if err != nil {
		w.err = fmt.Errorf("lancefile: column %d: %w", c.index, err)
		return w.err
	}
	for _, part := range parts {
		if err := w.writePage(c, part); err != nil {
			return err
		}
	}
	c.resetPage()
	return nil
}

// writePage writes one encoded page and records it in the column.
func (w *Writer) writePage(c *column, part pagePart) error {
	ep := part.ep
	page := &file2pb.ColumnMetadata_Page{Length: uint64(part.rows), Priority: c.rowsDone}
	for _, b := range ep.bufs {
		if err := w.align(); err != nil {
			return err
		}
		page.BufferOffsets = append(page.BufferOffsets, uint64(w.pos))
		page.BufferSizes = append(page.BufferSizes, uint64(len(b)))
		if err := w.write(b); err != nil {
			return err
		}
	}
	enc, err := marshalAny("/lance.encodings21.PageLayout", ep.layout)
	if err != nil {
		w.err = err
		return err
	}
	page.Encoding = &file2pb.Encoding{Location: &file2pb.Encoding_Direct{Direct: &file2pb.DirectEncoding{Encoding: enc}}}
	c.pages = append(c.pages, page)
	c.rowsDone += uint64(part.rows)
	return nil
}

// Close writes the remaining pages, the schema, the column metadata and
// the footer. The underlying writer is not closed.
func (w *Writer) Close() error {
	if w.closed {
		return w.err
	}
	w.closed = true
	for _, c := range w.cols {
		if err := w.flushPage(c); err != nil {
			return err
		}
	}
	if w.err != nil {
		return w.err
	}
	// Global buffer 0: the schema.
	md := map[string][]byte{}
	if m := w.schema.Metadata(); m.Len() > 0 {
		for i, k := range m.Keys() {
			md[k] = []byte(m.Values()[i])
		}
	}
	fd := &filepb.FileDescriptor{Schema: &filepb.Schema{Fields: w.fields, Metadata: md}, Length: w.rows}
	det := proto.MarshalOptions{Deterministic: true}
	sb, err := det.Marshal(fd)
	if err != nil {
		return err
	}
	if err := w.align(); err != nil {
		return err
	}
	schemaPos := w.pos
	if err := w.write(sb); err != nil {
		return err
	}
	gbo := binary.LittleEndian.AppendUint64(nil, uint64(schemaPos))
	gbo = binary.LittleEndian.AppendUint64(gbo, uint64(len(sb)))
	for _, gb := range w.opts.GlobalBuffers {
		if err := w.align(); err != nil {
			return err
		}
		gbo = binary.LittleEndian.AppendUint64(gbo, uint64(w.pos))
		gbo = binary.LittleEndian.AppendUint64(gbo, uint64(len(gb)))
		if err := w.write(gb); err != nil {
			return err
		}
	}
	colEnc, err := marshalAny("/lance.encodings.ColumnEncoding", &enc20pb.ColumnEncoding{ColumnEncoding: &enc20pb.ColumnEncoding_Values{Values: &emptypb.Empty{}}})
	if err != nil {
		return err
	}
	metaStart := w.pos
	table := make([]byte, 0, 16*len(w.cols))
	for _, c := range w.cols {
		cm := &file2pb.ColumnMetadata{
			Encoding: &file2pb.Encoding{Location: &file2pb.Encoding_Direct{Direct: &file2pb.DirectEncoding{Encoding: colEnc}}},
			Pages:    c.pages,
		}
		b, err := det.Marshal(cm)
		if err != nil {
			return err
		}
		table = binary.LittleEndian.AppendUint64(table, uint64(w.pos))
		table = binary.LittleEndian.AppendUint64(table, uint64(len(b)))
		if err := w.write(b); err != nil {
			return err
		}
	}
	cmoPos := w.pos
	if err := w.write(table); err != nil {
		return err
	}
	gboPos := w.pos
	if err := w.write(gbo); err != nil {
		return err
	}
	footer := make([]byte, 0, FooterSize)
	footer = binary.LittleEndian.AppendUint64(footer, uint64(metaStart))
	footer = binary.LittleEndian.AppendUint64(footer, uint64(cmoPos))
	footer = binary.LittleEndian.AppendUint64(footer, uint64(gboPos))
	footer = binary.LittleEndian.AppendUint32(footer, uint32(1+len(w.opts.GlobalBuffers)))
	footer = binary.LittleEndian.AppendUint32(footer, uint32(len(w.cols)))
	footer = binary.LittleEndian.AppendUint16(footer, w.opts.Version.Major)
	footer = binary.LittleEndian.AppendUint16(footer, w.opts.Version.Minor)
	footer = append(footer, magic[:]...)
	return w.write(footer)
}
