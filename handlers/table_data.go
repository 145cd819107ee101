package handlers

// The table data operations (Arrow IPC bodies and non-JSON answers).

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/labstack/echo/v4"

	"github.com/lancecat/lancecat/catalog"
	"github.com/lancecat/lancecat/dml"
	nserr "github.com/lancecat/lancecat/errors"
	"github.com/lancecat/lancecat/gen/nsapi"
	"github.com/lancecat/lancecat/guards"
	"github.com/lancecat/lancecat/ident"
	"github.com/lancecat/lancecat/internal/arrowipc"
)

// loadTable is the table a data door acts on, once its request decoded without error (err):
// 406 without a catalog, 404 code 4 when there is no such table.
func (s *Server) loadTable(c echo.Context, op string, id ident.ID, err error) (catalog.Table, error) {
	if err = s.backed(c, op, err); err != nil {
		return nil, err
	}
	return s.catalog.LoadTable(c.Request().Context(), id)
}

// arrowBody reads a write's Arrow IPC stream body (uncompressed or LZ4_FRAME/ZSTD-compressed, as
// the remote clients send it) as record batches decoded one at a time, small ones gathered into
// groups (arrowipc.BatchReader), with what decoding allocates charged to the body budget (the
// middleware's, when there is one). retain: the caller keeps every batch. The caller Releases it.
// empty is the error of an empty body.
func arrowBody(c echo.Context, retain bool, empty string) (*bodyBatches, error) {
	charge := decodeCharge(c)
	body, err := readBody(c)
	if err != nil {
		return nil, err
	}
	if len(body) == 0 {
		return nil, nserr.InvalidInputf("%s", empty)
	}
	return decodeArrowBody(body, retain, charge)
}

// decodeArrowBody is arrowBody's reader of a body in memory (non-empty).
func decodeArrowBody(body []byte, retain bool, charge func(int64) error) (*bodyBatches, error) {
	// The framing and metadata of every message are checked before any row is written: a
	// forged message at the end of the body is refused before the write starts.
	if err := arrowipc.Verify(body); err != nil {
		return nil, nserr.InvalidInputf("the body is not a valid Arrow IPC stream: %v", err)
	}
	br, err := arrowipc.NewBatchReader(body, arrowipc.BatchOptions{Retain: retain, Charge: charge})
	if err != nil {
		return nil, bodyErr(err)
	}
	return &bodyBatches{BatchReader: br, charge: charge}, nil
}

const emptyRows = "the body is empty: an Arrow IPC stream of the rows is required"

// bodyBatches is a request body's batches; an undecodable body is InvalidInput.
type bodyBatches struct {
	*arrowipc.BatchReader
	// charge is the body budget's (nil: none); it must be taken before the body is read, which
	// leaves the request without it.
	charge func(int64) error
}

func (b *bodyBatches) Err() error { return bodyErr(b.BatchReader.Err()) }

// all is every batch of b (retained: the caller releases them), and the bytes of their buffers.
func (b *bodyBatches) all() ([]arrow.RecordBatch, int64, error) {
	var recs []arrow.RecordBatch
	var size int64
	for b.Next() {
		rec := b.RecordBatch()
		rec.Retain()
		recs = append(recs, rec)
		size += arrowipc.BufferBytes(rec)
	}
	if err := b.Err(); err != nil {
		releaseAll(recs)
		return nil, 0, err
	}
	return recs, size, nil
}

func releaseAll(recs []arrow.RecordBatch) {
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

// decodeCharge is the body budget's charge for what decoding the request's body allocates (nil
// without the server's body middleware, as in handler tests).
func decodeCharge(c echo.Context) func(int64) error {
	if b, ok := c.Request().Body.(interface{ Charge(n int64) error }); ok {
		return b.Charge
	}
	return nil
}

// InsertIntoTable is POST /v1/table/{id}/insert: the body is an Arrow IPC stream; mode append
// (default) or overwrite. The answer is sent only once the commit is done, and nothing after the
// commit can fail the request (a remote client re-sends a failed insert, which would duplicate
// its rows).
func (s *Server) InsertIntoTable(c echo.Context, _ nsapi.Id, params nsapi.InsertIntoTableParams) error {
	id, err := s.pathID(c, params.Delimiter)
	if err == nil {
		err = guards.CanonicalEnum("mode", params.Mode, "Append", "Overwrite")
	}
	t, err := s.loadTable(c, "InsertIntoTable", id, err)
	if err != nil {
		return err
	}
	rs, err := arrowBody(c, false, emptyRows)
	if err != nil {
		return err
	}
	defer rs.Release()
	r, err := t.Insert(c.Request().Context(), strOf(params.Branch), rs, strOf(params.Mode) == "Overwrite")
	if err != nil {
		return err
	}
	return writeJSON(c, writeReply(r))
}

// writeReply is the answer of a row write, with the field names of both dialects: the spec's
// (updated_rows) and the LanceDB remote client's (rows_updated, num_deleted_rows, num_*_rows).
func writeReply(r catalog.WriteResult) map[string]any {
	return map[string]any{
		"version":           r.Version,
		"num_inserted_rows": r.Inserted,
		"num_updated_rows":  r.Updated,
		"num_deleted_rows":  r.Deleted,
		"rows_updated":      r.Updated,
		"updated_rows":      r.Updated,
		"deleted_rows":      r.Deleted,
	}
}

// MergeInsertIntoTable is POST /v1/table/{id}/merge_insert (`on`: one or more match fields; the
// body an Arrow IPC stream of the source rows).
func (s *Server) MergeInsertIntoTable(c echo.Context, _ nsapi.Id, params nsapi.MergeInsertIntoTableParams) error {
	id, keys, err := s.mergeInsertRequest(c, params)
	t, err := s.loadTable(c, "MergeInsertIntoTable", id, err)
	if err != nil {
		return err
	}
	m := dml.MergeInsert{
		On:                                 keys,
		WhenMatchedUpdateAll:               params.WhenMatchedUpdateAll != nil && *params.WhenMatchedUpdateAll,
		WhenMatchedUpdateAllFilter:         strOf(params.WhenMatchedUpdateAllFilt),
		WhenNotMatchedInsertAll:            params.WhenNotMatchedInsertAll != nil && *params.WhenNotMatchedInsertAll,
		WhenNotMatchedBySourceDelete:       params.WhenNotMatchedBySourceDelete != nil && *params.WhenNotMatchedBySourceDelete,
		WhenNotMatchedBySourceDeleteFilter: strOf(params.WhenNotMatchedBySourceDeleteFilt),
	}
	// A merge holds every source row (dml.Merge matches them all against the table, and may
	// retry): the batches are kept, and the one record dml makes of them is charged besides.
	rs, err := arrowBody(c, true, emptyRows)
	if err != nil {
		return err
	}
	defer rs.Release()
	recs, size, err := rs.all()
	if err != nil {
		return err
	}
	defer releaseAll(recs)
	if rs.charge != nil {
		if err := rs.charge(size); err != nil {
			return err
		}
	}
	src, err := array.NewRecordReader(rs.Schema(), recs)
	if err != nil {
		return nserr.InvalidInputf("the body is not a valid Arrow IPC stream: %v", err)
	}
	defer src.Release()
	r, err := t.Merge(c.Request().Context(), strOf(params.Branch), src, m)
	if err != nil {
		return err
	}
	reply := writeReply(r)
	reply["num_attempts"] = 1
	return writeJSON(c, reply)
}

// UpdateTable is POST /v1/table/{id}/update: `updates` are [column, SQL expression] pairs.
func (s *Server) UpdateTable(c echo.Context, _ nsapi.Id, params nsapi.UpdateTableParams) error {
	var req nsapi.UpdateTableRequest
	t, err := s.tableRequest(c, "UpdateTable", params.Delimiter, &req)
	if err != nil {
		return err
	}
	set := make([]dml.Assignment, len(req.Updates))
	for i, u := range req.Updates {
		if len(u) != 2 || u[0] == "" || u[1] == "" {
			return nserr.InvalidInputf("updates[%d] must be a [column, expression] pair", i)
		}
		set[i] = dml.Assignment{Column: u[0], Expr: u[1]}
	}
	r, err := t.Update(c.Request().Context(), strOf(req.Branch), strOf(req.Predicate), set)
	if err != nil {
		return err
	}
	return writeJSON(c, writeReply(r))
}

// DeleteFromTable is POST /v1/table/{id}/delete.
func (s *Server) DeleteFromTable(c echo.Context, _ nsapi.Id, params nsapi.DeleteFromTableParams) error {
	var req nsapi.DeleteFromTableRequest
	t, err := s.tableRequest(c, "DeleteFromTable", params.Delimiter, &req)
	if err != nil {
		return err
	}
	r, err := t.Delete(c.Request().Context(), strOf(req.Branch), req.Predicate)
	if err != nil {
		return err
	}
	return writeJSON(c, writeReply(r))
}

// QueryTable is POST /v1/table/{id}/query: the rows, streamed as an Arrow IPC file.
func (s *Server) QueryTable(c echo.Context, _ nsapi.Id, params nsapi.QueryTableParams) error {
	var body queryBody
	id, order, err := s.decodeQueryRequest(c, params.Delimiter, &body, "order_by")
	t, err := s.loadTable(c, "QueryTable", id, err)
	if err != nil {
		return err
	}
	req, at, err := queryRequest(&body, order)
	if err != nil {
		return err
	}
	rr, version, err := t.Query(c.Request().Context(), at, req)
	if err != nil {
		return err
	}
	defer rr.Release()
	c.Response().Header().Set(VersionHeader, strconv.FormatUint(version, 10))
	return writeArrowFile(c, rr)
}

// CountTableRows is POST /v1/table/{id}/count_rows: a bare integer.
func (s *Server) CountTableRows(c echo.Context, _ nsapi.Id, params nsapi.CountTableRowsParams) error {
	var req nsapi.CountTableRowsRequest
	t, err := s.tableRequest(c, "CountTableRows", params.Delimiter, &req)
	if err != nil {
		return err
	}
	n, version, err := t.Count(c.Request().Context(), catalog.ReadAt{Branch: strOf(req.Branch), Version: req.Version}, strOf(req.Predicate))
	if err != nil {
		return err
	}
	c.Response().Header().Set(VersionHeader, strconv.FormatUint(version, 10))
	return writeCount(c, int64(n))
}

// CreateTable is POST /v1/table/{id}/create: the body is an Arrow IPC stream (an empty body or
// a stream with a schema and no batches makes an empty table).
func (s *Server) CreateTable(c echo.Context, _ nsapi.Id, params nsapi.CreateTableParams) error {
	id, req, err := s.createTableRequest(c, &params)
	if err = s.backed(c, "CreateTable", err); err != nil {
		return err
	}
	nt := catalog.NewTable{Mode: strOf(req.Mode), Location: c.Request().Header.Get("x-lance-table-location")}
	propsJSON := strOf(req.Properties)
	if propsJSON == "" {
		propsJSON = c.Request().Header.Get("x-lance-table-properties")
	}
	if propsJSON != "" {
		if err := json.Unmarshal([]byte(propsJSON), &nt.Properties); err != nil {
			return nserr.InvalidInputf("properties must be a JSON object of strings: %v", err)
		}
	}
	// The table's rows are kept until the create is done (it may write them more than once,
	// racing other creators of the name): small batches gathered into groups, uncompressed ones
	// the body's own bytes, what decoding allocated charged to the body budget.
	rs, err := arrowBody(c, true, "the body is empty: an Arrow IPC stream with at least the table's schema is required")
	if err != nil {
		return err
	}
	defer rs.Release()
	recs, _, err := rs.all()
	if err != nil {
		return err
	}
	defer releaseAll(recs)
	nt.Schema, nt.Records = rs.Schema(), recs
	opts, err := overwriteOptions(c, nt.Mode)
	if err != nil {
		return err
	}
	ctx := c.Request().Context()
	t, version, err := s.catalog.CreateTable(ctx, id, nt, opts...)
	if err != nil {
		return remoteExists(c, id, err, s.delimiter)
	}
	resp := nsapi.CreateTableResponse{Location: &t.URI, Properties: &t.Properties}
	if version > 0 {
		resp.Version = ptr(int64(version))
	}
	if resp.StorageOptions, err = s.storageOptions(ctx, id, t.URI, t.StorageOptions, nil); err != nil {
		return createdWithoutOptions(err, "created", id, s.delimiter, "")
	}
	return writeJSON(c, resp)
}

// remoteExists is err as a remote-mode client must see it: a table that already exists is 400
// with "Table '<name>' already exists" in the body (the client raises TableAlreadyExists only
// from that; a 409 is a generic HTTP error to it). The code stays 5, which spec clients read.
func remoteExists(c echo.Context, id ident.ID, err error, delimiter string) error {
	if !IsRemote(c) || nserr.CodeOf(err) != nserr.TableAlreadyExists {
		return err
	}
	return nserr.Transport(http.StatusBadRequest, nserr.TableAlreadyExists,
		fmt.Sprintf("Table '%s' already exists", id.Join(delimiter)))
}

// ExplainTableQueryPlan is POST /v1/table/{id}/explain_plan: the plan as a JSON string.
func (s *Server) ExplainTableQueryPlan(c echo.Context, _ nsapi.Id, params nsapi.ExplainTableQueryPlanParams) error {
	var body explainBody
	id, order, err := s.decodeQueryRequest(c, params.Delimiter, &body, "query", "order_by")
	t, err := s.loadTable(c, "ExplainTableQueryPlan", id, err)
	if err != nil {
		return err
	}
	req, at, err := queryRequest(&body.Query, order)
	if err != nil {
		return err
	}
	plan, err := t.Explain(c.Request().Context(), at, req, body.Verbose != nil && *body.Verbose)
	if err != nil {
		return err
	}
	return writeText(c, plan)
}

// AnalyzeTableQueryPlan is POST /v1/table/{id}/analyze_plan: the query runs; the plan with its
// rows and time per stage, as a JSON string.
func (s *Server) AnalyzeTableQueryPlan(c echo.Context, _ nsapi.Id, params nsapi.AnalyzeTableQueryPlanParams) error {
	var body queryBody
	id, order, err := s.decodeQueryRequest(c, params.Delimiter, &body, "order_by")
	t, err := s.loadTable(c, "AnalyzeTableQueryPlan", id, err)
	if err != nil {
		return err
	}
	req, at, err := queryRequest(&body, order)
	if err != nil {
		return err
	}
	plan, err := t.Analyze(c.Request().Context(), at, req)
	if err != nil {
		return err
	}
	return writeText(c, plan)
}
