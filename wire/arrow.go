package wire

// The write doors' Arrow IPC bodies.

import (
	"errors"
	"io"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"

	nserr "github.com/lancecat/lancecat/errors"
	"github.com/lancecat/lancecat/internal/arrowipc"
)

// Rows are the record batches of a write's Arrow IPC stream body (uncompressed or
// LZ4_FRAME/ZSTD-compressed, as the remote clients send it), decoded one at a time: from a body
// held in memory, small ones gathered into groups (ArrowRows), or as a body arrives
// (ArrowStream). What decoding allocates is charged to the body budget. An undecodable body is
// InvalidInput. The caller Releases it.
type Rows struct {
	batches
	// charge is the body budget's (nil: none).
	charge func(int64) error
}

// batches is what both readers of arrowipc are.
type batches interface {
	Schema() *arrow.Schema
	Next() bool
	RecordBatch() arrow.RecordBatch
	Err() error
	Release()
}

// ArrowRows reads body (not empty) as Rows. retain: the caller keeps every batch. charge is the
// body budget's charge for what decoding allocates (nil: none); the framing and metadata of every
// message are checked before any row is handed on, so a forged message at the end of the body is
// refused before the write starts.
func ArrowRows(body []byte, retain bool, charge func(int64) error) (*Rows, error) {
	if err := arrowipc.Verify(body); err != nil {
		return nil, nserr.InvalidInputf("the body is not a valid Arrow IPC stream: %v", err)
	}
	br, err := arrowipc.NewBatchReader(body, arrowipc.BatchOptions{Retain: retain, Charge: charge})
	if err != nil {
		return nil, bodyErr(err)
	}
	return &Rows{batches: br, charge: charge}, nil
}

// ArrowStream reads a body that is not held in memory (r, not empty) as Rows, one batch at a
// time as it arrives (arrowipc.NewStreamReader: every message framed and checked before arrow-go
// sees it, arrow-go's allocations capped); what decompressing a batch allocates is charged
// (nil: no budget). Unlike ArrowRows it cannot check the whole body before the first row is
// handed on: a forged or cut message ends the stream with InvalidInput after the rows before it,
// so its writer must commit only once the stream ended without error (every writer does). An
// error of r (a limit, a deadline) ends it as it is.
func ArrowStream(r io.Reader, charge func(int64) error) (*Rows, error) {
	sr, err := arrowipc.NewStreamReader(r, arrowipc.StreamOptions{Reserve: charge})
	if err != nil {
		return nil, bodyErr(err)
	}
	return &Rows{batches: sr, charge: charge}, nil
}

// Err is the error that stopped the batches, an undecodable stream as InvalidInput.
func (r *Rows) Err() error { return bodyErr(r.batches.Err()) }

// All is every batch (retained: the caller releases them, ReleaseAll), and the bytes of their
// buffers.
func (r *Rows) All() ([]arrow.RecordBatch, int64, error) {
	var recs []arrow.RecordBatch
	var size int64
	for r.Next() {
		rec := r.RecordBatch()
		rec.Retain()
		recs = append(recs, rec)
		size += arrowipc.BufferBytes(rec)
	}
	if err := r.Err(); err != nil {
		ReleaseAll(recs)
		return nil, 0, err
	}
	return recs, size, nil
}

// Held is every batch as one reader, for a write that holds all its source rows (a merge matches
// them all against the table, and may retry): the batches are kept, and the one record the
// writer makes of them is charged to the body budget besides. The caller releases the reader.
func (r *Rows) Held() (array.RecordReader, error) {
	recs, size, err := r.All()
	if err != nil {
		return nil, err
	}
	defer ReleaseAll(recs)
	if r.charge != nil {
		if err := r.charge(size); err != nil {
			return nil, err
		}
	}
	src, err := array.NewRecordReader(r.Schema(), recs)
	if err != nil {
		return nil, nserr.InvalidInputf("the body is not a valid Arrow IPC stream: %v", err)
	}
	return src, nil
}

// ReleaseAll releases every batch of recs.
func ReleaseAll(recs []arrow.RecordBatch) {
	for _, r := range recs {
		r.Release()
	}
}

// bodyErr is an error reading a body's batches as the client sees it: an undecodable stream is
// InvalidInput; a refusal of the budget stays as it is.
func bodyErr(err error) error {
	if errors.Is(err, arrowipc.ErrInvalid) {
		return nserr.InvalidInputf("the body is %v", err)
	}
	return err
}
