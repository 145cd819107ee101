package arrowipc

import (
	"fmt"
	"unsafe"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// Small batches are gathered into groups before a writer sees them: a batch's decoded form costs
// about a kilobyte of headers (the record, an array, its data and buffers per column) whatever its
// rows, so a body of 1.5 M one-row batches (252 MB) held 1.77 GB once decoded. A group is flushed
// at groupRows rows, groupBytes bytes or groupParts batches (which bounds the headers held while
// it gathers); a batch of passRows rows or passBytes bytes is large enough to go on as it is.
const (
	groupRows  = 8192
	groupBytes = 4 << 20
	groupParts = 1024
	passRows   = groupRows
	passBytes  = 256 << 10
)

// BatchOptions configure a BatchReader.
type BatchOptions struct {
	// Retain says the caller keeps every batch it is handed (a create or a merge that needs all
	// rows at once): what they allocated stays charged. Otherwise a batch is released by the next
	// call to Next and its bytes count only while it is current.
	Retain bool
	// Charge, when set, is called with more bytes each time what the reader's live batches
	// allocated beyond the body grows past what was charged so far (a compressed batch before it
	// is decompressed, a group before it is concatenated): what decoding allocates is charged to
	// the same budget as the body. Its error ends the stream and is Err as it is. Nothing is
	// uncharged: the caller's budget is freed when the request ends.
	Charge func(n int64) error
}

// A BatchReader reads an Arrow IPC stream held in memory (a request body) batch by batch, as
// NewBytesReader does (uncompressed buffers are the body's own bytes), with small batches gathered
// into groups of about groupRows rows: memory stays at the body plus the current batch and one
// group, whatever the number of batches. Every failure of the input wraps ErrInvalid.
type BatchReader struct {
	sr      *StreamReader
	body    []byte
	opts    BatchOptions
	pending []owned // small batches gathered for the next group
	rows    int64   // of pending
	bytes   int64   // buffer bytes of pending
	next    *owned  // a large batch that arrived while a group was gathering: it follows the group
	cur     *owned
	done    bool
	err     error
	refs    int64
	// live is what the batches held allocated beyond the body; charged is what Charge was given.
	live, charged int64
}

// owned is a batch and the bytes it allocated beyond the body.
type owned struct {
	rec   arrow.RecordBatch
	bytes int64
}

// NewBatchReader reads body; it reads the schema message before it returns. An empty body is an
// error wrapping ErrInvalid.
func NewBatchReader(body []byte, opts BatchOptions) (*BatchReader, error) {
	b := &BatchReader{body: body, opts: opts, refs: 1}
	sr, err := NewBytesReader(body, StreamOptions{Reserve: b.need})
	if err != nil {
		return nil, err
	}
	b.sr = sr
	return b, nil
}

// need makes sure what is charged covers what is live plus n more bytes.
func (b *BatchReader) need(n int64) error {
	if b.opts.Charge == nil || b.live+n <= b.charged {
		return nil
	}
	if err := b.opts.Charge(b.live + n - b.charged); err != nil {
		return err
	}
	b.charged = b.live + n
	return nil
}

// Schema is the stream's schema (dictionary-encoded top-level columns as their value types).
func (b *BatchReader) Schema() *arrow.Schema { return b.sr.Schema() }

// RecordBatch is the batch Next read: valid until the next call to Next, or, when the options
// say Retain, for as long as the caller holds it (it must Retain it).
func (b *BatchReader) RecordBatch() arrow.RecordBatch {
	if b.cur == nil {
		return nil
	}
	return b.cur.rec
}

// Record is RecordBatch (array.RecordReader's older name).
func (b *BatchReader) Record() arrow.RecordBatch { return b.RecordBatch() }

// Err is the error that ended Next, if any.
func (b *BatchReader) Err() error { return b.err }

// Next reads the next batch or group; false at the end of the stream or on an error (Err).
func (b *BatchReader) Next() bool {
	b.drop(b.cur, true)
	b.cur = nil
	if b.err != nil {
		return false
	}
	for {
		if b.next != nil {
			b.cur, b.next = b.next, nil
			return true
		}
		if b.done {
			return b.flush()
		}
		if !b.sr.Next() {
			b.done = true
			if err := b.sr.Err(); err != nil {
				b.fail(err)
				return false
			}
			continue
		}
		rec := b.sr.RecordBatch()
		if rec.NumRows() == 0 {
			continue
		}
		rec.Retain()
		o := &owned{rec: rec, bytes: b.allocated(rec)}
		if err := b.need(o.bytes); err != nil {
			rec.Release()
			b.fail(err)
			return false
		}
		b.live += o.bytes
		size := BufferBytes(rec)
		if rec.NumRows() >= passRows || size >= passBytes {
			if len(b.pending) == 0 {
				b.cur = o
				return true
			}
			b.next = o
			return b.flush()
		}
		b.pending = append(b.pending, *o)
		b.rows += rec.NumRows()
		b.bytes += size
		if b.rows >= groupRows || b.bytes >= groupBytes || len(b.pending) >= groupParts {
			return b.flush()
		}
	}
}

// flush makes the gathered batches the current one (concatenated if more than one).
func (b *BatchReader) flush() bool {
	parts := b.pending
	b.pending, b.rows, b.bytes = nil, 0, 0
	switch len(parts) {
	case 0:
		return false
	case 1:
		b.cur = &parts[0]
		return true
	}
	defer func() {
		for i := range parts {
			b.drop(&parts[i], false)
		}
	}()
	var size int64
	for _, p := range parts {
		size += BufferBytes(p.rec)
	}
	if err := b.need(size); err != nil {
		b.fail(err)
		return false
	}
	schema := parts[0].rec.Schema()
	cols := make([]arrow.Array, schema.NumFields())
	defer func() {
		for _, c := range cols {
			if c != nil {
				c.Release()
			}
		}
	}()
	chunk := make([]arrow.Array, len(parts))
	var rows int64
	for _, p := range parts {
		rows += p.rec.NumRows()
	}
	for i := range cols {
		for j, p := range parts {
			chunk[j] = p.rec.Column(i)
		}
		c, err := array.Concatenate(chunk, memory.DefaultAllocator)
		if err != nil {
			b.fail(fmt.Errorf("%w: column %q: %w", ErrInvalid, schema.Field(i).Name, err))
			return false
		}
		cols[i] = c
	}
	rec := array.NewRecordBatch(schema, cols, rows)
	o := &owned{rec: rec, bytes: BufferBytes(rec)}
	b.live += o.bytes
	b.cur = o
	return true
}

// drop releases o; its bytes are no longer live unless it was handed to a caller that retains
// what it is handed.
func (b *BatchReader) drop(o *owned, handed bool) {
	if o == nil {
		return
	}
	o.rec.Release()
	if !handed || !b.opts.Retain {
		b.live -= o.bytes
	}
}

func (b *BatchReader) fail(err error) {
	b.err = err
	for i := range b.pending {
		b.pending[i].rec.Release()
	}
	b.pending = nil
	if b.next != nil {
		b.next.rec.Release()
		b.next = nil
	}
}

// Retain adds a reference (array.RecordReader).
func (b *BatchReader) Retain() { b.refs++ }

// Release drops a reference; the last one frees the current batch, what was gathered, and the
// stream reader.
func (b *BatchReader) Release() {
	if b.refs--; b.refs > 0 {
		return
	}
	if b.cur != nil {
		b.cur.rec.Release()
		b.cur = nil
	}
	if b.err == nil {
		b.fail(errReleased)
	} else {
		b.fail(b.err)
	}
	b.sr.Release()
}

var errReleased = fmt.Errorf("arrowipc: reader released")

// allocated is what rec's buffers hold outside the body: decompressed and dictionary-decoded
// buffers (uncompressed ones are slices of the body).
func (b *BatchReader) allocated(rec arrow.RecordBatch) int64 {
	lo := uintptr(unsafe.Pointer(unsafe.SliceData(b.body)))
	hi := lo + uintptr(len(b.body))
	var n int64
	for _, c := range rec.Columns() {
		walkBuffers(c.Data(), func(buf []byte) {
			p := uintptr(unsafe.Pointer(unsafe.SliceData(buf)))
			if p < lo || p >= hi {
				n += int64(len(buf))
			}
		})
	}
	return n
}

// BufferBytes is the bytes of rec's buffers (children's and dictionaries' included).
func BufferBytes(rec arrow.RecordBatch) int64 {
	var n int64
	for _, c := range rec.Columns() {
		walkBuffers(c.Data(), func(buf []byte) { n += int64(len(buf)) })
	}
	return n
}

func walkBuffers(d arrow.ArrayData, f func([]byte)) {
	for _, buf := range d.Buffers() {
		if buf != nil && buf.Len() > 0 {
			f(buf.Bytes())
		}
	}
	for _, c := range d.Children() {
		walkBuffers(c, f)
	}
	if dict, ok := d.Dictionary().(*array.Data); ok && dict != nil {
		walkBuffers(dict, f)
	}
}
