// Package arrowipc decodes Arrow IPC streams from untrusted bytes (request bodies) with arrow-go's
// ipc reader, made safe for them: arrow-go trusts the lengths in each message's flatbuffer
// metadata (a vector length goes to make() unchecked, so a few forged bytes can make it allocate
// gigabytes and kill the process with an out-of-memory error no recover catches), so Verify walks
// the stream's framing and checks every table, vector and string of every message first, and every
// batch's nodes and buffers against its schema (structure.go); the reader then allocates through
// a capped allocator, and every decoded array is validated.
package arrowipc

import (
	"bytes"
	"errors"
	"fmt"
	"sync/atomic"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// ErrInvalid is wrapped by every error of a stream that cannot be decoded.
var ErrInvalid = errors.New("not a valid Arrow IPC stream")

// ipcAllocFactor bounds what decoding an Arrow IPC body may allocate, as a multiple of the
// body's size (plus ipcAllocSlack): decoded buffers are the body's bytes, except compressed
// ones, which may grow by about this factor.
const (
	ipcAllocFactor = 16
	ipcAllocSlack  = 1 << 20
)

// Compressed streams (the LanceDB remote client sends LZ4_FRAME bodies) decode to up to
// ipcCompressedFactor times their size: LZ4's ratio tops out near 255:1 (a column of zeros, a
// constant vector), far beyond ipcAllocFactor. What a compressed stream may allocate is still
// bounded, by ipcCompressedMax in all (its declared sizes are allocated before decompression).
const (
	ipcCompressedFactor = 256
	ipcCompressedMax    = 1 << 30
)

// allocLimit is what decoding a stream of size bytes may allocate.
func allocLimit(size int, compressed bool) int64 {
	limit := int64(size)*ipcAllocFactor + ipcAllocSlack
	if compressed {
		limit = max(limit, min(int64(size)*ipcCompressedFactor+ipcAllocSlack, ipcCompressedMax))
	}
	return limit
}

// errIPCTooLarge is the panic of the capped allocator.
var errIPCTooLarge = errors.New("the Arrow IPC stream decodes to more memory than its size allows")

// cappedAllocator fails (by panicking, which the IPC reader recovers into an error) once the
// bytes it handed out exceed limit: a hostile stream that declares huge buffers cannot make the
// server allocate them.
type cappedAllocator struct {
	inner memory.Allocator
	used  atomic.Int64
	limit int64
}

func (a *cappedAllocator) Allocate(size int) []byte {
	if a.used.Add(int64(size)) > a.limit {
		panic(errIPCTooLarge)
	}
	return a.inner.Allocate(size)
}

func (a *cappedAllocator) Reallocate(size int, b []byte) []byte {
	if a.used.Add(int64(size-len(b))) > a.limit {
		panic(errIPCTooLarge)
	}
	return a.inner.Reallocate(size, b)
}

func (a *cappedAllocator) Free(b []byte) {
	a.used.Add(-int64(len(b)))
	a.inner.Free(b)
}

// ReadStream decodes an Arrow IPC stream, bounded by its size: message metadata and bodies
// cannot claim more than the stream holds (Verify runs first), decoded buffers are capped, and
// every record is validated (offsets, child lengths) before anything reads its values.
// Dictionary-encoded top-level columns come back decoded. An empty stream is nil. Every failure
// wraps ErrInvalid; a hostile stream never panics out of it.
func ReadStream(body []byte) (schema *arrow.Schema, recs []arrow.RecordBatch, err error) {
	if len(body) == 0 {
		return nil, nil, nil
	}
	defer func() {
		if p := recover(); p != nil {
			for _, r := range recs {
				r.Release()
			}
			schema, recs, err = nil, nil, fmt.Errorf("%w: %v", ErrInvalid, p)
		}
	}()
	compressed, err := verify(body)
	if err != nil {
		return nil, nil, fmt.Errorf("%w: %w", ErrInvalid, err)
	}
	mem := &cappedAllocator{inner: memory.NewGoAllocator(), limit: allocLimit(len(body), compressed)}
	limit := int64(len(body))
	r, err := ipc.NewReader(bytes.NewReader(body), ipc.WithAllocator(mem),
		ipc.WithMetadataSizeLimit(min(limit, maxIPCMetadata)), ipc.WithBodySizeLimit(limit), ipc.WithEnsureNativeEndian(true))
	if err != nil {
		return nil, nil, fmt.Errorf("%w: %w", ErrInvalid, err)
	}
	defer r.Release()
	fail := func(err error) (*arrow.Schema, []arrow.RecordBatch, error) {
		for _, rec := range recs {
			rec.Release()
		}
		return nil, nil, fmt.Errorf("%w: %w", ErrInvalid, err)
	}
	schema = undictionary(r.Schema())
	for r.Next() {
		rec, err := plainRecord(schema, r.RecordBatch())
		if err != nil {
			return fail(err)
		}
		recs = append(recs, rec)
	}
	if err := r.Err(); err != nil {
		return fail(err)
	}
	return schema, recs, nil
}

// plainRecord is rec validated (validateArray), with its dictionary-encoded top-level columns
// decoded, as a batch of schema (undictionary of rec's schema).
func plainRecord(schema *arrow.Schema, rec arrow.RecordBatch) (arrow.RecordBatch, error) {
	cols := make([]arrow.Array, 0, rec.NumCols())
	defer func() {
		for _, c := range cols {
			c.Release()
		}
	}()
	for i, col := range rec.Columns() {
		if d, ok := col.(*array.Dictionary); ok {
			// Dictionary-encoded columns (JavaScript's Arrow encodes every string column so)
			// are stored with their values.
			if err := validateArray(d.Indices(), 0); err != nil {
				return nil, fmt.Errorf("column %q: %w", rec.Schema().Field(i).Name, err)
			}
			if err := validateArray(d.Dictionary(), 0); err != nil {
				return nil, fmt.Errorf("column %q: %w", rec.Schema().Field(i).Name, err)
			}
			plain, err := decodeDictionary(d)
			if err != nil {
				return nil, fmt.Errorf("column %q: %w", rec.Schema().Field(i).Name, err)
			}
			cols = append(cols, plain)
			continue
		}
		if err := validateArray(col, 0); err != nil {
			return nil, fmt.Errorf("column %q: %w", rec.Schema().Field(i).Name, err)
		}
		col.Retain()
		cols = append(cols, col)
	}
	return array.NewRecordBatch(schema, cols, rec.NumRows()), nil
}

// undictionary is schema with top-level dictionary types replaced by their value types.
func undictionary(schema *arrow.Schema) *arrow.Schema {
	fields := schema.Fields()
	for i, f := range fields {
		if d, ok := f.Type.(*arrow.DictionaryType); ok {
			fields[i].Type = d.ValueType
		}
	}
	md := schema.Metadata()
	return arrow.NewSchema(fields, &md)
}

// validateArray checks what the IPC reader leaves unchecked: offsets inside their buffers and
// children long enough for their parents, recursively.
func validateArray(a arrow.Array, depth int) error {
	if depth > 64 {
		return errors.New("nested too deeply")
	}
	_, union := a.(array.Union)
	// arrow-go's loader gives an empty dense union no offsets buffer, which its ValidateFull
	// dereferences (an empty batch of such a column, as arrow-go's writer writes it, failed).
	if v, ok := a.(interface{ ValidateFull() error }); ok && !(union && a.Len() == 0) {
		if err := v.ValidateFull(); err != nil {
			return err
		}
	}
	if err := checkBuffers(a.Data()); err != nil {
		return err
	}
	need := a.Data().Offset() + a.Len()
	switch arr := a.(type) {
	case *array.Struct:
		for i := range arr.NumField() {
			f := arr.Field(i)
			if f.Data().Offset()+f.Len() < need {
				return fmt.Errorf("struct child %d has %d values, its parent needs %d", i, f.Len(), need)
			}
			if err := validateArray(f, depth+1); err != nil {
				return err
			}
		}
	case *array.FixedSizeList:
		n := int(arr.DataType().(*arrow.FixedSizeListType).Len())
		// need > len/n, not need*n > len: the product of forged counts can overflow.
		if vals := arr.ListValues(); n < 0 || (n > 0 && need > vals.Len()/n) {
			return fmt.Errorf("fixed-size list values has %d values, its parent needs %d", vals.Len(), need*n)
		} else if err := validateArray(vals, depth+1); err != nil {
			return err
		}
	case array.ListLike:
		if err := validateArray(arr.ListValues(), depth+1); err != nil {
			return err
		}
	case *array.Dictionary:
		return errors.New("dictionary-encoded columns are not supported")
	}
	return nil
}

// checkBuffers checks the sizes arrow-go's array constructors leave unchecked: a validity bitmap
// holds a bit per value, and a fixed-width type's values buffer its width per value (a short one
// would be read past its end by the first Value or IsNull).
func checkBuffers(d arrow.ArrayData) error {
	end := int64(d.Offset()) + int64(d.Len())
	if d.Offset() < 0 || d.Len() < 0 || d.NullN() > d.Len() {
		return fmt.Errorf("an array of %d values at offset %d with %d nulls", d.Len(), d.Offset(), d.NullN())
	}
	bufs := d.Buffers()
	if len(bufs) > 0 && bufs[0] != nil && bufs[0].Len() > 0 && int64(bufs[0].Len()) < (end+7)/8 {
		return fmt.Errorf("a validity bitmap of %d bytes for %d values", bufs[0].Len(), end)
	}
	fw, ok := d.DataType().(arrow.FixedWidthDataType)
	if !ok || len(bufs) < 2 || end == 0 {
		return nil
	}
	switch d.DataType().ID() {
	case arrow.NULL, arrow.DICTIONARY, arrow.EXTENSION:
		return nil
	}
	bits := int64(fw.BitWidth())
	if bits <= 0 {
		return nil
	}
	have := int64(0)
	if bufs[1] != nil {
		have = int64(bufs[1].Len())
	}
	// end*bits/8 > have, without the product (end is bounded by the reader, bits by the type).
	if end > (have*8)/bits {
		return fmt.Errorf("a values buffer of %d bytes for %d values of %d bits", have, end, bits)
	}
	return nil
}

// decodeDictionary is d's values in row order (indices are checked against the dictionary).
func decodeDictionary(d *array.Dictionary) (arrow.Array, error) {
	dict := d.Dictionary()
	mem := memory.NewGoAllocator()
	index := func(i int) (int, error) {
		idx := d.GetValueIndex(i)
		if idx < 0 || idx >= dict.Len() {
			return 0, fmt.Errorf("dictionary index %d out of range [0, %d)", idx, dict.Len())
		}
		return idx, nil
	}
	if strs, ok := dict.(*array.String); ok {
		b := array.NewStringBuilder(mem)
		defer b.Release()
		for i := range d.Len() {
			if d.IsNull(i) {
				b.AppendNull()
				continue
			}
			idx, err := index(i)
			if err != nil {
				return nil, err
			}
			if strs.IsNull(idx) {
				b.AppendNull()
			} else {
				b.Append(strs.Value(idx))
			}
		}
		return b.NewArray(), nil
	}
	parts := make([]arrow.Array, 0, d.Len())
	defer func() {
		for _, p := range parts {
			p.Release()
		}
	}()
	for i := range d.Len() {
		if d.IsNull(i) {
			parts = append(parts, array.MakeArrayOfNull(mem, dict.DataType(), 1))
			continue
		}
		idx, err := index(i)
		if err != nil {
			return nil, err
		}
		parts = append(parts, array.NewSlice(dict, int64(idx), int64(idx+1)))
	}
	if len(parts) == 0 {
		return array.MakeArrayOfNull(mem, dict.DataType(), 0), nil
	}
	return array.Concatenate(parts, mem)
}
