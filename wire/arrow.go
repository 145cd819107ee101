package wire

// The write doors' Arrow IPC bodies.

import (
	"errors"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"

	nserr "github.com/lancecat/lancecat/errors"
	"github.com/lancecat/lancecat/internal/arrowipc"
)

// Rows are the record batches of a write's Arrow IPC stream body (uncompressed or
// LZ4_FRAME/ZSTD-compressed, as the remote clients send it), decoded one at a time, small ones
// gathered into groups (arrowipc.BatchReader), what decoding allocates charged to the body
// budget. An undecodable body is InvalidInput. The caller Releases it.
type Rows struct {
	*arrowipc.BatchReader
	// charge is the body budget's (nil: none).
	charge func(int64) error
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
	return &Rows{BatchReader: br, charge: charge}, nil
}

// Err is the error that stopped the batches, an undecodable stream as InvalidInput.
func (r *Rows) Err() error { return bodyErr(r.BatchReader.Err()) }

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
