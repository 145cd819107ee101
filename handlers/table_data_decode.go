package handlers

// Decoding of the data operations' request shapes that changed with spec 9a92264: merge_insert's
// composite `on` key and the query operations' `order_by`. The data plane acts on what these
// return; until it does, the operations answer Unsupported after decoding (so a malformed request
// is still told what is wrong with it, and nothing is silently ignored).

import (
	"bytes"
	"encoding/json"
	"io"
	"slices"

	"github.com/labstack/echo/v4"

	nserr "github.com/lancecat/lancecat/errors"
	"github.com/lancecat/lancecat/gen/nsapi"
	"github.com/lancecat/lancecat/ident"
)

// mergeKeys is a merge_insert match key: a row matches only when every listed field is equal.
// Fields keep the client's order; a field listed twice counts once.
func mergeKeys(on []string) ([]string, error) {
	if len(on) == 0 {
		return nil, nserr.InvalidInputf("on: merge_insert needs at least one field to match rows on")
	}
	keys := make([]string, 0, len(on))
	for _, f := range on {
		if f == "" {
			return nil, nserr.InvalidInputf("on: a match field path must not be empty")
		}
		if !slices.Contains(keys, f) {
			keys = append(keys, f)
		}
	}
	return keys, nil
}

// mergeInsertRequest is the decoded merge_insert of a REST request: the path id and the match key
// from the query string. The generated wrapper binds `on` exploded, so both the repeated form
// (`?on=a&on=b`, spec 9a92264) and the single key older clients send (`?on=id`) arrive here.
func (s *Server) mergeInsertRequest(c echo.Context, params nsapi.MergeInsertIntoTableParams) (ident.ID, []string, error) {
	id, err := s.pathID(c, params.Delimiter)
	if err != nil {
		return nil, nil, err
	}
	keys, err := mergeKeys(params.On)
	if err != nil {
		return nil, nil, err
	}
	return id, keys, nil
}

// decodeMergeInsertBody decodes the JSON form of MergeInsertIntoTableRequest (what a namespace
// implementation passes through): `on` is an array of field paths since spec 9a92264 and a single
// string before it; both are accepted, and the result's On is the normalized key.
func decodeMergeInsertBody(raw []byte) (*nsapi.MergeInsertIntoTableRequest, error) {
	var body struct {
		nsapi.MergeInsertIntoTableRequest
		On json.RawMessage `json:"on"` // shadows the generated field: a string or an array
	}
	if err := json.Unmarshal(raw, &body); err != nil {
		return nil, nserr.InvalidInputf("request body is not valid JSON for this operation: %s", jsonProblem(err))
	}
	req := body.MergeInsertIntoTableRequest
	var on []string
	switch trimmed := bytes.TrimSpace(body.On); {
	case len(trimmed) == 0:
		return nil, nserr.InvalidInputf("on: merge_insert needs at least one field to match rows on")
	case trimmed[0] == '"':
		var one string
		if err := json.Unmarshal(trimmed, &one); err != nil {
			return nil, nserr.InvalidInputf("on: %v", err)
		}
		on = []string{one}
	default:
		if err := json.Unmarshal(trimmed, &on); err != nil || on == nil {
			return nil, nserr.InvalidInputf("on must be a field path or an array of field paths, not %s", trimmed)
		}
	}
	keys, err := mergeKeys(on)
	if err != nil {
		return nil, err
	}
	req.On = &keys
	return &req, nil
}

// QueryOrdering is one entry of a query's order_by with the spec's defaults applied.
type QueryOrdering struct {
	Column     string
	Ascending  bool // default true
	NullsFirst bool // default false
}

// decodeQueryRequest is decodeRequest for the query operations (query, explain_plan,
// analyze_plan), plus their order_by, found at path in the body ("order_by", or "query",
// "order_by" for explain_plan). It is validated the way the spec asks: null is refused (omit it
// or send [] for the default ordering), every entry names a column, defaults are applied.
func (s *Server) decodeQueryRequest(c echo.Context, delimiter *string, req any, path ...string) (ident.ID, []QueryOrdering, error) {
	body, err := readBody(c)
	if err != nil {
		return nil, nil, err
	}
	c.Request().Body = io.NopCloser(bytes.NewReader(body))
	id, err := s.decodeRequest(c, delimiter, req)
	if err != nil {
		return nil, nil, err
	}
	order, err := queryOrdering(body, path...)
	if err != nil {
		return nil, nil, err
	}
	return id, order, nil
}

// queryOrdering reads the order_by at path in a JSON body. Absent (or an empty body) is nil.
func queryOrdering(body []byte, path ...string) ([]QueryOrdering, error) {
	raw := json.RawMessage(bytes.TrimSpace(body))
	name := "order_by"
	for i, key := range path {
		if len(raw) == 0 || bytes.Equal(raw, []byte("null")) {
			return nil, nil
		}
		var obj map[string]json.RawMessage
		if err := json.Unmarshal(raw, &obj); err != nil {
			return nil, nserr.InvalidInputf("request body is not valid JSON for this operation: %s", jsonProblem(err))
		}
		v, ok := obj[key]
		if !ok {
			return nil, nil
		}
		raw = json.RawMessage(bytes.TrimSpace(v))
		if i == 0 {
			name = key
		} else {
			name += "." + key
		}
	}
	if bytes.Equal(raw, []byte("null")) {
		return nil, nserr.InvalidInputf("%s must not be null: omit it, or send [] for the default ordering", name)
	}
	var entries []*nsapi.QueryTableOrderBy
	if err := json.Unmarshal(raw, &entries); err != nil {
		return nil, nserr.InvalidInputf("%s must be an array of {column_name, ascending, nulls_first}: %s", name, jsonProblem(err))
	}
	order := make([]QueryOrdering, 0, len(entries))
	for i, e := range entries {
		if e == nil || e.ColumnName == "" {
			return nil, nserr.InvalidInputf("%s[%d]: column_name is required and must not be empty", name, i)
		}
		o := QueryOrdering{Column: e.ColumnName, Ascending: true}
		if e.Ascending != nil {
			o.Ascending = *e.Ascending
		}
		if e.NullsFirst != nil {
			o.NullsFirst = *e.NullsFirst
		}
		order = append(order, o)
	}
	return order, nil
}
