package client

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"sync/atomic"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/ipc"

	"github.com/lancecat/lancecat/client/nsclient"
)

// Media types of the spec's Arrow bodies.
const (
	arrowStream = "application/vnd.apache.arrow.stream"
	arrowFile   = "application/vnd.apache.arrow.file"
)

// arrowBody streams rr as an Arrow IPC stream: the request body reads what a goroutine writes, so
// no more than a batch is held. stop closes the body and waits for the goroutine, which has then
// stopped reading rr (call it once the answer is read).
func arrowBody(rr array.RecordReader) (body io.ReadCloser, stop func()) {
	pr, pw := io.Pipe()
	done := make(chan struct{})
	go func() {
		defer close(done)
		w := ipc.NewWriter(pw, ipc.WithSchema(rr.Schema()))
		var err error
		for err == nil && rr.Next() {
			err = w.Write(rr.RecordBatch())
		}
		if err == nil {
			err = rr.Err()
		}
		if err != nil {
			// Broken before the writer's end-of-stream marker: the server sees a cut stream,
			// never a complete shorter one.
			pw.CloseWithError(err)
			_ = w.Close()
			return
		}
		pw.CloseWithError(w.Close())
	}()
	return pr, func() { pr.Close(); <-done }
}

// WriteResult is what a write answered.
type WriteResult struct {
	// Version is the table's version the write committed.
	Version int64
	// Inserted, Updated and Deleted count the rows the write touched (a merge fills all three).
	Inserted, Updated, Deleted int64
}

// CreateMode is what CreateTable does when the table exists.
type CreateMode string

const (
	// Create fails with ErrTableAlreadyExists.
	Create CreateMode = "create"
	// ExistOK leaves the existing table as it is.
	ExistOK CreateMode = "exist_ok"
	// Overwrite replaces its data (a new version).
	Overwrite CreateMode = "overwrite"
)

// CreateTable creates the table id from the schema and rows of rr (which may yield no batch: an
// empty table), streaming them. mode "" is Create.
func (c *Client) CreateTable(ctx context.Context, id []string, rr array.RecordReader, mode CreateMode) (*WriteResult, error) {
	if err := c.checkID("table", id, 1); err != nil {
		return nil, err
	}
	params := &nsclient.CreateTableParams{}
	if mode != "" {
		params.Mode = ptr(string(mode))
	}
	body, stop := arrowBody(rr)
	defer stop()
	hr, err := c.Spec.CreateTableWithBody(ctx, c.routeID(id), params, arrowStream, body)
	if err != nil {
		return nil, fmt.Errorf("create table: %w", err)
	}
	resp, err := nsclient.ParseCreateTableResponse3(hr)
	if err := check("create table", resp, err); err != nil {
		return nil, err
	}
	return &WriteResult{Version: deref(resp.JSON200.Version)}, nil
}

// InsertMode is how Insert adds rows.
type InsertMode string

const (
	// Append adds the rows to the table's.
	Append InsertMode = "append"
	// Replace replaces the table's rows with these (the spec's "overwrite").
	Replace InsertMode = "overwrite"
)

// Insert streams the rows of rr into the table id (mode "" is Append). A declared table that has
// no data yet is created with them.
func (c *Client) Insert(ctx context.Context, id []string, rr array.RecordReader, mode InsertMode) (*WriteResult, error) {
	if err := c.checkID("table", id, 1); err != nil {
		return nil, err
	}
	params := &nsclient.InsertIntoTableParams{}
	if mode != "" {
		params.Mode = ptr(string(mode))
	}
	body, stop := arrowBody(rr)
	defer stop()
	hr, err := c.Spec.InsertIntoTableWithBody(ctx, c.routeID(id), params, arrowStream, body)
	if err != nil {
		return nil, fmt.Errorf("insert: %w", err)
	}
	resp, err := nsclient.ParseInsertIntoTableResponse3(hr)
	if err := check("insert", resp, err); err != nil {
		return nil, err
	}
	return &WriteResult{Version: deref(resp.JSON200.Version), Inserted: deref(resp.JSON200.NumInsertedRows)}, nil
}

// Merge says how MergeInsert matches and applies rows: On names the key columns; the rest are the
// spec's when_* clauses (filters are SQL predicates).
type Merge struct {
	On                           []string
	WhenMatchedUpdateAll         bool
	WhenMatchedUpdateAllFilter   string
	WhenNotMatchedInsertAll      bool
	WhenNotMatchedBySourceDelete bool
	WhenNotMatchedBySourceFilter string
}

// MergeInsert streams the rows of rr into the table id, matching them to its rows on m.On.
func (c *Client) MergeInsert(ctx context.Context, id []string, rr array.RecordReader, m Merge) (*WriteResult, error) {
	if err := c.checkID("table", id, 1); err != nil {
		return nil, err
	}
	if len(m.On) == 0 {
		return nil, fmt.Errorf("merge insert: no key column (Merge.On): %w", ErrInvalidInput)
	}
	params := &nsclient.MergeInsertIntoTableParams{
		On:                           m.On,
		WhenMatchedUpdateAll:         ptr(m.WhenMatchedUpdateAll),
		WhenNotMatchedInsertAll:      ptr(m.WhenNotMatchedInsertAll),
		WhenNotMatchedBySourceDelete: ptr(m.WhenNotMatchedBySourceDelete),
	}
	if m.WhenMatchedUpdateAllFilter != "" {
		params.WhenMatchedUpdateAllFilt = ptr(m.WhenMatchedUpdateAllFilter)
	}
	if m.WhenNotMatchedBySourceFilter != "" {
		params.WhenNotMatchedBySourceDeleteFilt = ptr(m.WhenNotMatchedBySourceFilter)
	}
	body, stop := arrowBody(rr)
	defer stop()
	hr, err := c.Spec.MergeInsertIntoTableWithBody(ctx, c.routeID(id), params, arrowStream, body)
	if err != nil {
		return nil, fmt.Errorf("merge insert: %w", err)
	}
	resp, err := nsclient.ParseMergeInsertIntoTableResponse3(hr)
	if err := check("merge insert", resp, err); err != nil {
		return nil, err
	}
	r := resp.JSON200
	return &WriteResult{Version: deref(r.Version), Inserted: deref(r.NumInsertedRows),
		Updated: deref(r.NumUpdatedRows), Deleted: deref(r.NumDeletedRows)}, nil
}

// CountRows counts the rows of the table id matching predicate (a SQL filter; "" counts all).
func (c *Client) CountRows(ctx context.Context, id []string, predicate string) (int64, error) {
	if err := c.checkID("table", id, 1); err != nil {
		return 0, err
	}
	req := nsclient.CountTableRowsRequest{}
	if predicate != "" {
		req.Predicate = &predicate
	}
	resp, err := c.Spec.CountTableRowsWithResponse(Idempotent(ctx), c.routeID(id), nil, req)
	if err := check("count rows", resp, err); err != nil {
		return 0, err
	}
	if resp.JSON200 == nil {
		return 0, errors.New("count rows: the answer holds no count")
	}
	return *resp.JSON200, nil
}

// Query runs q on the table id and streams its result: batches are decoded from the answer as
// they arrive, never the whole result at once. The reader must be released (it closes the
// answer); Err after Next returns false says whether the result was complete — an answer cut
// short (the server failed mid-way) is an error, never a shorter result. q.K bounds the rows
// (the spec requires it; the server may cap it).
func (c *Client) Query(ctx context.Context, id []string, q nsclient.QueryTableRequest) (array.RecordReader, error) {
	if err := c.checkID("table", id, 1); err != nil {
		return nil, err
	}
	hr, err := c.Spec.QueryTable(Idempotent(ctx), c.routeID(id), nil, q)
	if err != nil {
		return nil, fmt.Errorf("query: %w", err)
	}
	if hr.StatusCode != http.StatusOK {
		defer hr.Body.Close()
		return nil, fmt.Errorf("query: %w", problemOf(hr))
	}
	rr, err := newStreamReader(hr)
	if err != nil {
		hr.Body.Close()
		return nil, fmt.Errorf("query: %w", err)
	}
	return rr, nil
}

// fileMagic opens (and closes) an Arrow IPC file; the stream follows the opening one, padded to 8.
var fileMagic = []byte("ARROW1")

// streamReader decodes an Arrow IPC answer (stream or file) as it is read. A file is read as the
// stream it holds (after its 8-byte opening), and its footer is then checked to be whole.
type streamReader struct {
	refs atomic.Int64
	body io.ReadCloser
	msgs *eosWatch
	ipc  *ipc.Reader
	file bool
	err  error
	done bool
}

func newStreamReader(hr *http.Response) (*streamReader, error) {
	mt, _, _ := mime.ParseMediaType(hr.Header.Get("Content-Type"))
	s := &streamReader{body: hr.Body, msgs: &eosWatch{MessageReader: ipc.NewMessageReader(hr.Body)}}
	switch mt {
	case arrowFile:
		s.file = true
		head := make([]byte, 8)
		if _, err := io.ReadFull(hr.Body, head); err != nil || !bytes.Equal(head[:6], fileMagic) {
			return nil, fmt.Errorf("the answer is not an Arrow IPC file (content type %s)", mt)
		}
	case arrowStream:
	default:
		return nil, fmt.Errorf("the answer is %q, not Arrow IPC", hr.Header.Get("Content-Type"))
	}
	r, err := ipc.NewReaderFromMessageReader(s.msgs)
	if err != nil {
		return nil, fmt.Errorf("reading the result's schema: %w", err)
	}
	s.ipc = r
	s.refs.Store(1)
	return s, nil
}

func (s *streamReader) Retain() { s.refs.Add(1) }

func (s *streamReader) Release() {
	if s.refs.Add(-1) == 0 {
		s.ipc.Release()
		s.body.Close()
	}
}

func (s *streamReader) Schema() *arrow.Schema { return s.ipc.Schema() }

func (s *streamReader) Next() bool {
	if s.done {
		return false
	}
	if s.ipc.Next() {
		return true
	}
	s.done = true
	if s.err = s.ipc.Err(); s.err == nil {
		s.err = s.checkEnd()
	}
	return false
}

// checkEnd: the stream ended with its end-of-stream marker (arrow-go reads a plain EOF between
// messages as the end too: a cut answer), and a file's footer follows whole.
func (s *streamReader) checkEnd() error {
	if !s.msgs.eos {
		return errors.New("query: the result was cut short (no end-of-stream marker)")
	}
	if !s.file {
		return nil
	}
	// The footer lists one block per batch: small, but bounded all the same.
	rest, err := io.ReadAll(io.LimitReader(s.body, 64<<20))
	if err != nil {
		return fmt.Errorf("query: reading the result's footer: %w", err)
	}
	n := len(rest)
	if n < 10 || !bytes.Equal(rest[n-6:], fileMagic) {
		return errors.New("query: the result was cut short (no Arrow file footer)")
	}
	if size := int(int32(binary.LittleEndian.Uint32(rest[n-10 : n-6]))); size <= 0 || size+10 > n {
		return errors.New("query: the result's Arrow file footer is malformed")
	}
	return nil
}

func (s *streamReader) RecordBatch() arrow.RecordBatch { return s.ipc.RecordBatch() }

// Record is RecordBatch.
//
// Deprecated: use RecordBatch (as array.RecordReader says).
func (s *streamReader) Record() arrow.RecordBatch { return s.ipc.RecordBatch() }

func (s *streamReader) Err() error { return s.err }

// eosWatch notes whether the stream ended with its end-of-stream marker: arrow-go's message
// reader answers the marker with a bare io.EOF and a stream that just stops with a wrapped one,
// and its record reader reads both as the end.
type eosWatch struct {
	ipc.MessageReader
	eos bool
}

func (m *eosWatch) Message() (*ipc.Message, error) {
	msg, err := m.MessageReader.Message()
	if err == io.EOF { //nolint:errorlint // the bare EOF is the marker; a wrapped one is a cut
		m.eos = true
	}
	return msg, err
}
