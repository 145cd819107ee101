package lance

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"slices"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/google/uuid"

	"github.com/lancecat/lancecat/lance/lancefile"
	"github.com/lancecat/lancecat/lance/pb/filepb"
	"github.com/lancecat/lancecat/lance/pb/tablepb"
	"github.com/lancecat/lancecat/storage"
)

// ErrDatasetExists: WriteCreate found a dataset already there.
var ErrDatasetExists = errors.New("lance: dataset already exists")

// Write streams rs into new data files and commits them: an Append, an
// Overwrite, or (WriteCreate, or any mode on a missing dataset) version 1.
// Input is never buffered whole: each file is uploaded while it is
// written, and memory stays at about a page per column. An append must
// match the dataset's schema (same fields and types, columns in any
// order); a mismatch is a TableSchemaValidationError.
//
// Data files of a failed or conflicting write stay behind unreferenced;
// Cleanup removes them.
func (d *Dataset) Write(ctx context.Context, rs RecordStream, opts WriteOptions) (*Version, error) {
	opts = opts.withDefaults()
	head, err := d.OpenLatest(ctx)
	exists := err == nil
	if err != nil && !errors.Is(err, ErrDatasetNotFound) {
		return nil, err
	}
	if exists && opts.Mode == WriteCreate {
		return nil, Errorf(ErrDatasetExists, "%w: version %d", ErrDatasetExists, head.Number())
	}
	if exists {
		if err := CheckWritable(head.Manifest()); err != nil {
			return nil, err
		}
		// Every write goes into the dataset's own data storage version.
		v := head.Manifest().GetDataFormat().GetVersion()
		if _, err := fileVersion(v); err != nil {
			if opts.Mode == WriteAppend {
				return nil, Errorf(ErrUnsupportedFeature, "lance: the dataset stores Lance %s data files; lancecat writes 2.1 and 2.2 (overwrite it to convert)", v)
			}
			v = "2.1" // an overwrite converts
		}
		opts.DataStorageVersion = v
	}
	if _, err := fileVersion(opts.DataStorageVersion); err != nil {
		return nil, err
	}
	in := rs.Schema()
	if exists && opts.Mode == WriteAppend {
		fields := head.Fields()
		target, perm, err := appendSchema(fields, in)
		if err != nil {
			return nil, err
		}
		frags, err := WriteFragments(ctx, d.store, target, fields, reorder(rs, target, perm), opts)
		if err != nil {
			return nil, err
		}
		co := opts.Commit
		if co.ReadVersion == 0 {
			co.ReadVersion = head.Number()
		}
		return d.Commit(ctx, NewAppend(frags...), co)
	}
	fields, err := lancefile.LanceFields(in, 0)
	if err != nil {
		return nil, Errorf(ErrSchemaMismatch, "lance: %v", err)
	}
	var md map[string][]byte
	if m := in.Metadata(); m.Len() > 0 {
		md = map[string][]byte{}
		for i, k := range m.Keys() {
			md[k] = []byte(m.Values()[i])
		}
	}
	frags, err := WriteFragments(ctx, d.store, in, fields, rs, opts)
	if err != nil {
		return nil, err
	}
	op := NewOverwrite(fields, md, frags...)
	op.ConfigUpsert = opts.Config
	op.DataStorageVersion = opts.DataStorageVersion
	if exists {
		co := opts.Commit
		if co.ReadVersion == 0 {
			co.ReadVersion = head.Number()
		}
		return d.Commit(ctx, op, co)
	}
	return d.create(ctx, op, opts)
}

// Append is Write in WriteAppend mode.
func (d *Dataset) Append(ctx context.Context, rs RecordStream, opts WriteOptions) (*Version, error) {
	opts.Mode = WriteAppend
	return d.Write(ctx, rs, opts)
}

// Overwrite is Write in WriteOverwrite mode.
func (d *Dataset) Overwrite(ctx context.Context, rs RecordStream, opts WriteOptions) (*Version, error) {
	opts.Mode = WriteOverwrite
	return d.Write(ctx, rs, opts)
}

// create publishes version 1 (an Overwrite with read version 0, as Lance
// records a new dataset). Losing the race to another creator is
// ErrDatasetExists.
func (d *Dataset) create(ctx context.Context, op *Overwrite, opts WriteOptions) (*Version, error) {
	var flags uint64
	if opts.EnableStableRowIDs {
		flags = FlagStableRowIDs
	}
	// An empty version 0 to build on: commit machinery without a head.
	zero := &Version{
		Location: ManifestLocation{Version: 0, Scheme: NamingV2},
		File: &ManifestFile{Manifest: &tablepb.Manifest{
			ReaderFeatureFlags: flags, WriterFeatureFlags: flags,
			DataFormat: &tablepb.Manifest_DataStorageFormat{FileFormat: "lance", Version: opts.DataStorageVersion},
		}},
	}
	next, err := d.buildNext(ctx, op, zero, 0, opts.Commit.Now)
	if err != nil {
		return nil, err
	}
	v, err := d.publish(ctx, zero, next)
	if errors.Is(err, ErrVersionExists) {
		return nil, Errorf(ErrDatasetExists, "%w: created concurrently", ErrDatasetExists)
	}
	return v, err
}

// appendSchema checks an appended stream's schema against the dataset's
// fields and returns the schema to write (the dataset's column order, the
// input's types) and, per output column, the input column it comes from.
func appendSchema(fields []*filepb.Field, in *arrow.Schema) (*arrow.Schema, []int, error) {
	var roots []*filepb.Field
	for _, f := range fields {
		if f.GetParentId() == -1 {
			roots = append(roots, f)
		}
	}
	if len(roots) != in.NumFields() {
		return nil, nil, Errorf(ErrSchemaMismatch, "lance: appended data has %d columns, the dataset %d (%s)",
			in.NumFields(), len(roots), rootNames(roots))
	}
	perm := make([]int, len(roots))
	out := make([]arrow.Field, len(roots))
	for i, r := range roots {
		idx := in.FieldIndices(r.GetName())
		if len(idx) != 1 {
			return nil, nil, Errorf(ErrSchemaMismatch, "lance: appended data has no column %q (the dataset has %s)", r.GetName(), rootNames(roots))
		}
		perm[i] = idx[0]
		out[i] = in.Field(idx[0])
	}
	target := arrow.NewSchema(out, nil)
	got, err := lancefile.LanceFields(target, 0)
	if err != nil {
		return nil, nil, Errorf(ErrSchemaMismatch, "lance: %v", err)
	}
	if len(got) != len(fields) {
		return nil, nil, Errorf(ErrSchemaMismatch, "lance: appended data does not match the dataset's schema (%d fields, the dataset %d)", len(got), len(fields))
	}
	for i, g := range got {
		f := fields[i]
		if g.GetName() != f.GetName() || g.GetLogicalType() != f.GetLogicalType() {
			return nil, nil, Errorf(ErrSchemaMismatch, "lance: column %q is %s in the appended data, %s in the dataset",
				FieldPath(fields, f.GetId()), g.GetLogicalType(), f.GetLogicalType())
		}
	}
	return target, perm, nil
}

func rootNames(roots []*filepb.Field) string {
	s := ""
	for i, r := range roots {
		if i > 0 {
			s += ", "
		}
		s += r.GetName()
	}
	return s
}

// reorder presents rs with its columns permuted into target's order.
func reorder(rs RecordStream, target *arrow.Schema, perm []int) RecordStream {
	identity := true
	for i, p := range perm {
		identity = identity && i == p
	}
	if identity {
		return rs
	}
	return &reordered{RecordStream: rs, schema: target, perm: perm}
}

type reordered struct {
	RecordStream
	schema *arrow.Schema
	perm   []int
	cur    arrow.RecordBatch
}

func (r *reordered) Schema() *arrow.Schema { return r.schema }

func (r *reordered) Next() bool {
	if r.cur != nil {
		r.cur.Release()
		r.cur = nil
	}
	if !r.RecordStream.Next() {
		return false
	}
	rec := r.RecordStream.RecordBatch()
	cols := make([]arrow.Array, len(r.perm))
	for i, p := range r.perm {
		cols[i] = rec.Column(p)
	}
	r.cur = array.NewRecordBatch(r.schema, cols, rec.NumRows())
	return true
}

func (r *reordered) RecordBatch() arrow.RecordBatch { return r.cur }

// WriteFragments writes rs as new fragments of a dataset in store: data
// files under data/ of at most opts.MaxRowsPerFile rows and about
// opts.MaxBytesPerFile bytes, one file per fragment, each uploaded as it is
// written. schema is the Arrow schema of rs's batches and fields its Lance
// schema with the dataset's field ids. The fragments have id 0 (the commit
// assigns ids) and physical_rows set; commit them with NewAppend or
// NewOverwrite.
func WriteFragments(ctx context.Context, store storage.Bucket, schema *arrow.Schema, fields []*filepb.Field, rs RecordStream, opts WriteOptions) ([]*tablepb.DataFragment, error) {
	opts = opts.withDefaults()
	var required []int
	roots := 0
	for _, f := range fields {
		if f.GetParentId() == -1 {
			if !f.GetNullable() {
				required = append(required, roots)
			}
			roots++
		}
	}
	var frags []*tablepb.DataFragment
	var cur *fileSink
	defer func() {
		if cur != nil {
			cur.abort(errors.New("lance: write abandoned"))
		}
	}()
	for rs.Next() {
		rec := rs.RecordBatch()
		if int(rec.NumCols()) != schema.NumFields() {
			return nil, Errorf(ErrSchemaMismatch, "lance: record of %d columns, schema of %d", rec.NumCols(), schema.NumFields())
		}
		for _, c := range required {
			if rec.Column(c).NullN() > 0 {
				return nil, Errorf(ErrSchemaMismatch, "lance: column %q is not nullable but the data has %d nulls",
					schema.Field(c).Name, rec.Column(c).NullN())
			}
		}
		n := rec.NumRows()
		for off := int64(0); off < n; {
			if cur == nil {
				var err error
				if cur, err = newFileSink(ctx, store, schema, fields, opts); err != nil {
					return nil, err
				}
			}
			step := min(n-off, int64(opts.MaxRowsPerGroup), int64(opts.MaxRowsPerFile)-int64(cur.w.NumRows()))
			piece := rec
			if off != 0 || step != n {
				piece = rec.NewSlice(off, off+step)
			}
			err := cur.w.Write(piece)
			if piece != rec {
				piece.Release()
			}
			if err != nil {
				return nil, fmt.Errorf("lance: write %s: %w", cur.key, err)
			}
			off += step
			if cur.w.NumRows() >= uint64(opts.MaxRowsPerFile) || cur.w.Size() >= opts.MaxBytesPerFile {
				frag, err := cur.finish()
				cur = nil
				if err != nil {
					return nil, err
				}
				frags = append(frags, frag)
			}
		}
	}
	if err := rs.Err(); err != nil {
		return nil, fmt.Errorf("lance: read input: %w", err)
	}
	if cur != nil {
		frag, err := cur.finish()
		cur = nil
		if err != nil {
			return nil, err
		}
		frags = append(frags, frag)
	}
	return frags, nil
}

// fileSink is one data file being written: the lancefile writer feeds a
// pipe that an upload goroutine drains into the store.
type fileSink struct {
	key  string
	name string
	w    *lancefile.Writer
	buf  *bufio.Writer
	pw   *io.PipeWriter
	done chan error
}

func newFileSink(ctx context.Context, store storage.Bucket, schema *arrow.Schema, fields []*filepb.Field, opts WriteOptions) (*fileSink, error) {
	name := uuid.NewString() + ".lance"
	s := &fileSink{key: DataDir + name, name: name, done: make(chan error, 1)}
	pr, pw := io.Pipe()
	s.pw = pw
	s.buf = bufio.NewWriterSize(pw, 1<<20)
	version, err := fileVersion(opts.DataStorageVersion)
	if err != nil {
		return nil, err
	}
	w, err := lancefile.NewWriter(s.buf, schema, lancefile.WriterOptions{Fields: fields, PageBytes: opts.PageBytes, Version: version})
	if err != nil {
		return nil, Errorf(ErrSchemaMismatch, "lance: %v", err)
	}
	s.w = w
	go func() {
		_, err := store.Put(ctx, s.key, pr, -1)
		if err != nil {
			pr.CloseWithError(err)
		} else {
			pr.Close()
		}
		s.done <- err
	}()
	return s, nil
}

func (s *fileSink) finish() (*tablepb.DataFragment, error) {
	err := s.w.Close()
	if err == nil {
		err = s.buf.Flush()
	}
	if err != nil {
		s.abort(err)
		return nil, fmt.Errorf("lance: write %s: %w", s.key, err)
	}
	s.pw.Close()
	if err := <-s.done; err != nil {
		return nil, fmt.Errorf("lance: upload %s: %w", s.key, err)
	}
	ids := s.w.ColumnFieldIDs()
	cols := make([]int32, len(ids))
	for i := range cols {
		cols[i] = int32(i)
	}
	return &tablepb.DataFragment{
		Files: []*tablepb.DataFile{{
			Path: s.name, Fields: slices.Clone(ids), ColumnIndices: cols,
			FileMajorVersion: uint32(s.w.Version().Major), FileMinorVersion: uint32(s.w.Version().Minor), FileSizeBytes: uint64(s.w.Size()),
		}},
		PhysicalRows: s.w.NumRows(),
	}, nil
}

// abort fails the upload (the store drops a body that ends in an error)
// and waits for it.
func (s *fileSink) abort(err error) {
	s.pw.CloseWithError(err)
	<-s.done
}
