package main

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"os"
	"sync/atomic"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/ipc"
)

// openRecords opens what `table create --from` names as a record reader: an Arrow IPC file
// (ARROW1 magic, Feather v2; read batch by batch through its footer) or an IPC stream, or "-"
// for in (read as a stream: a pipe has no footer to seek to). Nothing is read whole into memory:
// the client encodes the body from the reader while it is sent.
func openRecords(path string, in io.Reader) (array.RecordReader, func(), error) {
	if path == "-" {
		rd, err := ipc.NewReader(bufio.NewReaderSize(in, 1<<20))
		if err != nil {
			return nil, nil, fmt.Errorf("not an Arrow IPC stream: %w", err)
		}
		return rd, rd.Release, nil
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, nil, err
	}
	magic := make([]byte, 6)
	if _, err := io.ReadFull(f, magic); err == nil && bytes.Equal(magic, []byte("ARROW1")) {
		st, err := f.Stat()
		if err != nil {
			f.Close()
			return nil, nil, err
		}
		fr, err := ipc.NewFileReader(f)
		if err != nil {
			f.Close()
			return nil, nil, fmt.Errorf("an Arrow IPC file whose footer cannot be read (%d bytes): %w", st.Size(), err)
		}
		r := &fileRecords{f: fr}
		r.refs.Store(1)
		return r, func() { r.Release(); f.Close() }, nil
	}
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		f.Close()
		return nil, nil, err
	}
	rd, err := ipc.NewReader(bufio.NewReaderSize(f, 1<<20))
	if err != nil {
		f.Close()
		return nil, nil, fmt.Errorf("neither an Arrow IPC file nor stream: %w", err)
	}
	return rd, func() { rd.Release(); f.Close() }, nil
}

// fileRecords is an Arrow IPC file's batches as a record reader, one at a time.
type fileRecords struct {
	refs atomic.Int64
	f    *ipc.FileReader
	i    int
	cur  arrow.RecordBatch
	err  error
}

func (r *fileRecords) Retain() { r.refs.Add(1) }

func (r *fileRecords) Release() {
	if r.refs.Add(-1) == 0 {
		r.cur = nil
		_ = r.f.Close()
	}
}

func (r *fileRecords) Schema() *arrow.Schema { return r.f.Schema() }

func (r *fileRecords) Next() bool {
	if r.err != nil || r.i >= r.f.NumRecords() {
		r.cur = nil
		return false
	}
	// The file reader owns the batch until its next RecordBatch call, as a reader's contract asks.
	r.cur, r.err = r.f.RecordBatch(r.i)
	r.i++
	return r.err == nil
}

func (r *fileRecords) RecordBatch() arrow.RecordBatch { return r.cur }

// Record is RecordBatch (the interface's deprecated name).
func (r *fileRecords) Record() arrow.RecordBatch { return r.cur }

func (r *fileRecords) Err() error { return r.err }
