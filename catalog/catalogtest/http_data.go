package catalogtest

// The data plane of a table over HTTP (the remote catalog's table routes): the request shapes are
// the spec's, and the answers are read the way a spec client reads them.

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"reflect"
	"strconv"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/ipc"

	"github.com/lancecat/lancecat/catalog"
	"github.com/lancecat/lancecat/client/nsclient"
	"github.com/lancecat/lancecat/dml"
	"github.com/lancecat/lancecat/lance"
	"github.com/lancecat/lancecat/query"
)

// queryJSON is req (read at at) as the spec's QueryTableRequest.
func queryJSON(at catalog.ReadAt, req query.Request) map[string]any {
	body := branchOf(map[string]any{"k": req.Limit}, at.Branch)
	if at.Version != nil {
		body["version"] = *at.Version
	}
	if req.Filter != "" {
		body["filter"] = req.Filter
	}
	switch {
	case req.Projection != nil:
		aliases := map[string]string{}
		for _, p := range req.Projection {
			aliases[p.Name] = p.Expr
		}
		body["columns"] = map[string]any{"column_aliases": aliases}
	case req.Columns != nil:
		body["columns"] = map[string]any{"column_names": req.Columns}
	}
	if req.WithRowID {
		body["with_row_id"] = true
	}
	if req.Offset > 0 {
		body["offset"] = req.Offset
	}
	if len(req.OrderBy) > 0 {
		order := make([]map[string]any, len(req.OrderBy))
		for i, o := range req.OrderBy {
			order[i] = map[string]any{"column_name": o.Column, "ascending": !o.Descending, "nulls_first": o.NullsFirst}
		}
		body["order_by"] = order
	}
	if v := req.Vector; v != nil {
		if len(v.Vectors) == 1 {
			body["vector"] = map[string]any{"single_vector": v.Vectors[0]}
		} else {
			body["vector"] = map[string]any{"multi_vector": v.Vectors}
		}
		if v.Column != "" {
			body["vector_column"] = v.Column
		}
		if v.Metric != "" {
			body["distance_type"] = v.Metric
		}
		body["k"] = v.K
		if req.Limit > 0 {
			body["k"] = req.Limit
		}
		if v.LowerBound != nil {
			body["lower_bound"] = *v.LowerBound
		}
		if v.UpperBound != nil {
			body["upper_bound"] = *v.UpperBound
		}
		body["prefilter"] = req.Prefilter
	}
	return body
}

// rawPost sends body as JSON to op and returns the answer's body and headers.
func rawPost[P, R any](ctx context.Context, op withBody[P, R], id string, params *P, contentType string, body []byte) ([]byte, http.Header, error) {
	resp, err := op(ctx, id, params, contentType, bytes.NewReader(body))
	if err := decode(resp, err, nil); err != nil {
		return nil, nil, err
	}
	v := reflect.ValueOf(resp).Elem()
	hr := v.FieldByName("HTTPResponse").Interface().(*http.Response)
	return v.FieldByName("Body").Bytes(), hr.Header, nil
}

func jsonBody(v any) []byte {
	b, _ := json.Marshal(v)
	return b
}

func (t *remoteTable) Query(ctx context.Context, at catalog.ReadAt, req query.Request) (array.RecordReader, uint64, error) {
	body, hdr, err := rawPost(ctx, t.r.c.Spec.QueryTableWithBodyWithResponse, t.wire, nil, "application/json", jsonBody(queryJSON(at, req)))
	if err != nil {
		return nil, 0, err
	}
	f, err := ipc.NewFileReader(bytes.NewReader(body))
	if err != nil {
		return nil, 0, err
	}
	defer f.Close()
	var recs []arrow.RecordBatch
	for i := 0; i < f.NumRecords(); i++ {
		rec, err := f.RecordBatch(i)
		if err != nil {
			return nil, 0, err
		}
		rec.Retain()
		recs = append(recs, rec)
	}
	rr, err := array.NewRecordReader(f.Schema(), recs)
	for _, r := range recs {
		r.Release()
	}
	if err != nil {
		return nil, 0, err
	}
	v, _ := strconv.ParseUint(hdr.Get("x-lancedb-version"), 10, 64)
	return rr, v, nil
}

func (t *remoteTable) Count(ctx context.Context, at catalog.ReadAt, filter string) (uint64, uint64, error) {
	req := branchOf(map[string]any{}, at.Branch)
	if at.Version != nil {
		req["version"] = *at.Version
	}
	if filter != "" {
		req["predicate"] = filter
	}
	body, hdr, err := rawPost(ctx, t.r.c.Spec.CountTableRowsWithBodyWithResponse, t.wire, nil, "application/json", jsonBody(req))
	if err != nil {
		return 0, 0, err
	}
	var n uint64
	if err := json.Unmarshal(body, &n); err != nil {
		return 0, 0, err
	}
	v, _ := strconv.ParseUint(hdr.Get("x-lancedb-version"), 10, 64)
	return n, v, nil
}

func (t *remoteTable) Explain(ctx context.Context, at catalog.ReadAt, req query.Request, verbose bool) (string, error) {
	body, _, err := rawPost(ctx, t.r.c.Spec.ExplainTableQueryPlanWithBodyWithResponse, t.wire, nil, "application/json",
		jsonBody(map[string]any{"query": queryJSON(at, req), "verbose": verbose}))
	if err != nil {
		return "", err
	}
	var plan string
	return plan, json.Unmarshal(body, &plan)
}

func (t *remoteTable) Analyze(ctx context.Context, at catalog.ReadAt, req query.Request) (string, error) {
	body, _, err := rawPost(ctx, t.r.c.Spec.AnalyzeTableQueryPlanWithBodyWithResponse, t.wire, nil, "application/json", jsonBody(queryJSON(at, req)))
	if err != nil {
		return "", err
	}
	var plan string
	return plan, json.Unmarshal(body, &plan)
}

// writeAnswer is the union of the write answers' fields.
type writeAnswer struct {
	Version        uint64 `json:"version"`
	NumInserted    uint64 `json:"num_inserted_rows"`
	NumUpdated     uint64 `json:"num_updated_rows"`
	NumDeleted     uint64 `json:"num_deleted_rows"`
	UpdatedRows    uint64 `json:"updated_rows"`
	NumDeletedSpec uint64 `json:"deleted_rows"`
	RowsUpdatedLDB uint64 `json:"rows_updated"`
}

func (a writeAnswer) result() catalog.WriteResult {
	return catalog.WriteResult{Version: a.Version, Inserted: a.NumInserted,
		Updated: max(a.NumUpdated, a.UpdatedRows, a.RowsUpdatedLDB), Deleted: max(a.NumDeleted, a.NumDeletedSpec)}
}

// ipcStream is rs as an Arrow IPC stream.
func ipcStream(rs lance.RecordStream) ([]byte, error) {
	var buf bytes.Buffer
	w := ipc.NewWriter(&buf, ipc.WithSchema(rs.Schema()))
	for rs.Next() {
		if err := w.Write(rs.RecordBatch()); err != nil {
			return nil, err
		}
	}
	if err := rs.Err(); err != nil {
		return nil, err
	}
	if err := w.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

func (t *remoteTable) Insert(ctx context.Context, branch string, rs lance.RecordStream, overwrite bool) (catalog.WriteResult, error) {
	b, err := ipcStream(rs)
	if err != nil {
		return catalog.WriteResult{}, err
	}
	p := &nsclient.InsertIntoTableParams{}
	if branch != "" {
		p.Branch = &branch
	}
	if overwrite {
		mode := "overwrite"
		p.Mode = &mode
	}
	body, _, err := rawPost(ctx, t.r.c.Spec.InsertIntoTableWithBodyWithResponse, t.wire, p, "application/vnd.apache.arrow.stream", b)
	return answer(body, err)
}

func answer(body []byte, err error) (catalog.WriteResult, error) {
	if err != nil {
		return catalog.WriteResult{}, err
	}
	var a writeAnswer
	if err := json.Unmarshal(body, &a); err != nil {
		return catalog.WriteResult{}, err
	}
	return a.result(), nil
}

func (t *remoteTable) Delete(ctx context.Context, branch, predicate string) (catalog.WriteResult, error) {
	body, _, err := rawPost(ctx, t.r.c.Spec.DeleteFromTableWithBodyWithResponse, t.wire, nil, "application/json",
		jsonBody(branchOf(map[string]any{"predicate": predicate}, branch)))
	return answer(body, err)
}

func (t *remoteTable) Update(ctx context.Context, branch, predicate string, set []dml.Assignment) (catalog.WriteResult, error) {
	updates := make([][]string, len(set))
	for i, a := range set {
		updates[i] = []string{a.Column, a.Expr}
	}
	req := branchOf(map[string]any{"updates": updates}, branch)
	if predicate != "" {
		req["predicate"] = predicate
	}
	body, _, err := rawPost(ctx, t.r.c.Spec.UpdateTableWithBodyWithResponse, t.wire, nil, "application/json", jsonBody(req))
	return answer(body, err)
}

func (t *remoteTable) Merge(ctx context.Context, branch string, rs lance.RecordStream, m dml.MergeInsert) (catalog.WriteResult, error) {
	b, err := ipcStream(rs)
	if err != nil {
		return catalog.WriteResult{}, err
	}
	p := &nsclient.MergeInsertIntoTableParams{
		On: m.On, WhenMatchedUpdateAll: &m.WhenMatchedUpdateAll, WhenNotMatchedInsertAll: &m.WhenNotMatchedInsertAll,
		WhenNotMatchedBySourceDelete: &m.WhenNotMatchedBySourceDelete,
	}
	if branch != "" {
		p.Branch = &branch
	}
	if m.WhenMatchedUpdateAllFilter != "" {
		p.WhenMatchedUpdateAllFilt = &m.WhenMatchedUpdateAllFilter
	}
	if m.WhenNotMatchedBySourceDeleteFilter != "" {
		p.WhenNotMatchedBySourceDeleteFilt = &m.WhenNotMatchedBySourceDeleteFilter
	}
	body, _, err := rawPost(ctx, t.r.c.Spec.MergeInsertIntoTableWithBodyWithResponse, t.wire, p, "application/vnd.apache.arrow.stream", b)
	return answer(body, err)
}

func (t *remoteTable) AddColumns(ctx context.Context, branch string, cols []dml.NewColumn) (uint64, error) {
	entries := make([]map[string]any, len(cols))
	for i, c := range cols {
		entries[i] = map[string]any{"name": c.Name, "expression": c.Expr}
	}
	var out nsclient.AlterTableAddColumnsResponse
	err := post(ctx, t.r.c.Spec.AlterTableAddColumnsWithBodyWithResponse, t.wire, nil, branchOf(map[string]any{"new_columns": entries}, branch), &out)
	return uint64(out.Version), err
}

func (t *remoteTable) AlterColumns(ctx context.Context, branch string, alts []dml.Alteration) (uint64, error) {
	entries := make([]map[string]any, len(alts))
	for i, a := range alts {
		e := map[string]any{"path": a.Path}
		if a.Rename != nil {
			e["rename"] = *a.Rename
		}
		if a.Nullable != nil {
			e["nullable"] = *a.Nullable
		}
		if a.DataType != nil {
			js, err := lance.ToJSONSchema(arrow.NewSchema([]arrow.Field{{Name: "c", Type: a.DataType, Nullable: true}}, nil))
			if err != nil {
				return 0, err
			}
			e["data_type"] = js.Fields[0].Type
		}
		entries[i] = e
	}
	var out nsclient.AlterTableAlterColumnsResponse
	err := post(ctx, t.r.c.Spec.AlterTableAlterColumnsWithBodyWithResponse, t.wire, nil, branchOf(map[string]any{"alterations": entries}, branch), &out)
	return uint64(out.Version), err
}
