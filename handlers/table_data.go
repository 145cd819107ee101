package handlers

// The table data operations (Arrow IPC bodies and non-JSON answers).

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"

	"github.com/labstack/echo/v4"

	"github.com/lancecat/lancecat/catalog"
	nserr "github.com/lancecat/lancecat/errors"
	"github.com/lancecat/lancecat/gen/nsapi"
	"github.com/lancecat/lancecat/guards"
	"github.com/lancecat/lancecat/ident"
	"github.com/lancecat/lancecat/wire"
)

// loadTable is the table a data door acts on, once its request decoded without error (err):
// 406 without a catalog, 404 code 4 when there is no such table.
func (s *Server) loadTable(c echo.Context, op string, id ident.ID, err error) (catalog.Table, error) {
	if err = s.backed(c, op, err); err != nil {
		return nil, err
	}
	return s.catalog.LoadTable(c.Request().Context(), id)
}

// arrowBody reads a write's Arrow IPC stream body as record batches decoded one at a time, what
// decoding allocates charged to the body budget (the middleware's, when there is one). A body
// the server's middleware holds in full is decoded from its own bytes (wire.ArrowRows); any
// other is decoded as it arrives, one batch at a time (wire.ArrowStream), so the writer writes
// as the client sends. retain: the caller keeps every batch (a merge): the body is then read
// whole first, so that its small batches are gathered into groups (wire.ArrowRows) rather than
// each kept with its own headers. The caller Releases it. empty is the error of an empty body.
func arrowBody(c echo.Context, retain bool, empty string) (*wire.Rows, error) {
	// The budget's charge is taken before the body is read, which leaves the request without it.
	charge := decodeCharge(c)
	r := c.Request()
	if wb, ok := r.Body.(wholeBody); retain || ok && wb.Len() == len(wb.Bytes()) {
		body, err := readBody(c)
		if err != nil {
			return nil, err
		}
		if len(body) == 0 {
			return nil, nserr.InvalidInputf("%s", empty)
		}
		return wire.ArrowRows(body, retain, charge)
	}
	br := bufio.NewReaderSize(bodyReader{r.Body}, 64<<10)
	if _, err := br.Peek(1); errors.Is(err, io.EOF) {
		return nil, nserr.InvalidInputf("%s", empty)
	} else if err != nil {
		return nil, err
	}
	return wire.ArrowStream(br, charge)
}

// bodyReader is a request body whose read errors are the client's (bodyReadError: a body over
// its limit is 413, a cut one 400), as they end a streamed write.
type bodyReader struct{ r io.Reader }

func (b bodyReader) Read(p []byte) (int, error) {
	n, err := b.r.Read(p)
	if err != nil && !errors.Is(err, io.EOF) {
		err = bodyReadError(err)
	}
	return n, err
}

// createRows is a create's rows as the catalog opens them (catalog.RowSource): first is the body
// already opened for its schema, body its bytes when the middleware held it (else nil). A body held in memory is decoded again from its bytes when the
// create opens it again (it lost a race and writes at the winner's location); a streamed one was
// read once and can only be sent again: ConcurrentModification. release releases what the
// create did not open.
func createRows(c echo.Context, body []byte, first *wire.Rows) (rows catalog.RowSource, release func()) {
	charge := decodeCharge(c)
	opened := false
	return func() (catalog.RecordStream, error) {
			if !opened {
				opened = true
				return first, nil
			}
			if body == nil {
				return nil, nserr.ConcurrentModificationf("the table was created or dropped by another writer while its rows were read from the request, which cannot be read again: try again")
			}
			return wire.ArrowRows(body, false, charge)
		}, func() {
			if !opened {
				first.Release()
			}
		}
}

const emptyRows = "the body is empty: an Arrow IPC stream of the rows is required"

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
	id, err := s.pathID(c, params.Delimiter)
	if err != nil {
		return err
	}
	m, err := wire.MergeInsert(params)
	t, err := s.loadTable(c, "MergeInsertIntoTable", id, err)
	if err != nil {
		return err
	}
	// A merge holds every source row (wire.Rows.Held): it matches them all against the table
	// and may run again on a newer version. The body is read whole (bounded by its limit), its
	// decoded rows charged to the body budget.
	rs, err := arrowBody(c, true, emptyRows)
	if err != nil {
		return err
	}
	defer rs.Release()
	src, err := rs.Held()
	if err != nil {
		return err
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
	set, err := wire.Assignments(req.Updates)
	if err != nil {
		return err
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
	var body wire.Query
	t, err := s.tableRequest(c, "QueryTable", params.Delimiter, &body)
	if err != nil {
		return err
	}
	rr, version, err := t.Query(c.Request().Context(), body.At(), body.Request())
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
	nt, err := wire.NewTable(req, c.Request().Header)
	if err != nil {
		return err
	}
	// The table's rows stream into its data file as they are decoded, none kept: the body's
	// schema now, its batches when the create writes them.
	var held []byte
	if wb, ok := c.Request().Body.(wholeBody); ok {
		held = wb.Bytes()
	}
	rs, err := arrowBody(c, false, "the body is empty: an Arrow IPC stream with at least the table's schema is required")
	if err != nil {
		return err
	}
	rows, release := createRows(c, held, rs)
	defer release()
	nt.Schema, nt.Rows = rs.Schema(), rows
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
	var body wire.Explain
	t, err := s.tableRequest(c, "ExplainTableQueryPlan", params.Delimiter, &body)
	if err != nil {
		return err
	}
	plan, err := t.Explain(c.Request().Context(), body.Query.At(), body.Query.Request(), body.IsVerbose())
	if err != nil {
		return err
	}
	return writeText(c, plan)
}

// AnalyzeTableQueryPlan is POST /v1/table/{id}/analyze_plan: the query runs; the plan with its
// rows and time per stage, as a JSON string.
func (s *Server) AnalyzeTableQueryPlan(c echo.Context, _ nsapi.Id, params nsapi.AnalyzeTableQueryPlanParams) error {
	var body wire.Query
	t, err := s.tableRequest(c, "AnalyzeTableQueryPlan", params.Delimiter, &body)
	if err != nil {
		return err
	}
	plan, err := t.Analyze(c.Request().Context(), body.At(), body.Request())
	if err != nil {
		return err
	}
	return writeText(c, plan)
}
