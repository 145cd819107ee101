package wire

// The data operations' request shapes: merge_insert's composite `on` key and the query
// operations' `order_by` (spec 9a92264), the query body in both dialects (the spec's and the
// LanceDB remote client's), update's assignments. A malformed request is told what is wrong with
// it before any table is loaded, and nothing is silently ignored.

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"reflect"
	"slices"
	"strings"

	"github.com/lancecat/lancecat/catalog"
	"github.com/lancecat/lancecat/dml"
	nserr "github.com/lancecat/lancecat/errors"
	"github.com/lancecat/lancecat/gen/nsapi"
	"github.com/lancecat/lancecat/query"
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

// MergeInsert is the merge of a merge_insert request's query: its match key (`on`) and its
// clauses. The generated wrapper binds `on` exploded, so both the repeated form (`?on=a&on=b`,
// spec 9a92264) and the single key older clients send (`?on=id`) arrive here.
func MergeInsert(params nsapi.MergeInsertIntoTableParams) (dml.MergeInsert, error) {
	keys, err := mergeKeys(params.On)
	if err != nil {
		return dml.MergeInsert{}, err
	}
	return dml.MergeInsert{
		On:                                 keys,
		WhenMatchedUpdateAll:               isTrue(params.WhenMatchedUpdateAll),
		WhenMatchedUpdateAllFilter:         strOf(params.WhenMatchedUpdateAllFilt),
		WhenNotMatchedInsertAll:            isTrue(params.WhenNotMatchedInsertAll),
		WhenNotMatchedBySourceDelete:       isTrue(params.WhenNotMatchedBySourceDelete),
		WhenNotMatchedBySourceDeleteFilter: strOf(params.WhenNotMatchedBySourceDeleteFilt),
	}, nil
}

// Assignments are an update's `updates`, [column, SQL expression] pairs.
func Assignments(updates [][]string) ([]dml.Assignment, error) {
	set := make([]dml.Assignment, len(updates))
	for i, u := range updates {
		if len(u) != 2 || u[0] == "" || u[1] == "" {
			return nil, nserr.InvalidInputf("updates[%d] must be a [column, expression] pair", i)
		}
		set[i] = dml.Assignment{Column: u[0], Expr: u[1]}
	}
	return set, nil
}

func isTrue(b *bool) bool { return b != nil && *b }

func strOf(p *string) string {
	if p == nil {
		return ""
	}
	return *p
}

// DecodeMergeInsertBody decodes the JSON form of MergeInsertIntoTableRequest (what a namespace
// implementation passes through): `on` is an array of field paths since spec 9a92264 and a single
// string before it; both are accepted, and the result's On is the normalized key.
func DecodeMergeInsertBody(raw []byte) (*nsapi.MergeInsertIntoTableRequest, error) {
	var body struct {
		nsapi.MergeInsertIntoTableRequest
		On json.RawMessage `json:"on"` // shadows the generated field: a string or an array
	}
	// Unknown fields are refused as on every spec body (spec_decode.go).
	if err := decodeSpecBody(raw, &body, ""); err != nil {
		return nil, err
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

// ordering reads a query's order_by (raw, as the body held it; name is where, for errors). It is
// validated the way the spec asks: null is refused (omit it or send [] for the default ordering),
// every entry names a column, no entry holds a field the spec does not know, defaults are
// applied. Absent is nil.
func ordering(raw json.RawMessage, name string) ([]QueryOrdering, error) {
	raw = json.RawMessage(bytes.TrimSpace(raw))
	if len(raw) == 0 {
		return nil, nil
	}
	if bytes.Equal(raw, []byte("null")) {
		return nil, nserr.InvalidInputf("%s must not be null: omit it, or send [] for the default ordering", name)
	}
	var entries []*nsapi.QueryTableOrderBy
	// The body holds order_by raw (so that absent and null differ): its entries are checked
	// here as the strict decoder checks every spec struct.
	if err := checkNested(raw, reflect.TypeOf(entries), name); err != nil {
		return nil, err
	}
	if err := json.Unmarshal(raw, &entries); err != nil {
		return nil, nserr.InvalidInputf("%s must be an array of {column_name, ascending, nulls_first}: %s", name, JSONProblem(err))
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

// Query is the body of QueryTable (and AnalyzeTableQueryPlan, and explain_plan's `query`) in
// both dialects: the spec wraps `vector` ({single_vector|multi_vector}) and `columns`
// ({column_names|column_aliases}); a LanceDB remote-mode client sends a bare vector (or an array
// of vectors), a bare column array or an {alias: expression} map, `k` = i64::MAX for "no limit",
// and index tuning fields: nprobes, ef, refine_factor and bypass_vector_index reach the query
// engine (query.VectorQuery), and fast_search (the index alone, no flat search). Decode it, then Resolve it: Request and At
// are what it asks of the table.
type Query struct {
	Id       *[]string       `json:"id,omitempty"`
	Identity *nsapi.Identity `json:"identity,omitempty"`
	Branch   *string         `json:"branch,omitempty"`
	Version  *int64          `json:"version,omitempty"`

	Filter        *string         `json:"filter,omitempty"`
	Columns       json.RawMessage `json:"columns,omitempty"`
	Vector        json.RawMessage `json:"vector,omitempty"`
	VectorColumn  *string         `json:"vector_column,omitempty"`
	DistanceType  *string         `json:"distance_type,omitempty"`
	K             *int64          `json:"k,omitempty"`
	Offset        *int64          `json:"offset,omitempty"`
	Prefilter     *bool           `json:"prefilter,omitempty"`
	WithRowID     *bool           `json:"with_row_id,omitempty"`
	LowerBound    *float32        `json:"lower_bound,omitempty"`
	UpperBound    *float32        `json:"upper_bound,omitempty"`
	FullTextQuery json.RawMessage `json:"full_text_query,omitempty"`
	// OrderBy is kept raw, in the one decode of the body: absent is the default ordering, null
	// is refused (ordering).
	OrderBy json.RawMessage `json:"order_by,omitempty"`
	// vector index tuning (query.VectorQuery)
	Nprobes *int64 `json:"nprobes,omitempty"`
	// MinimumNprobes and MaximumNprobes (the remote client since 0.23.1, spec 0.13.0): when
	// either is given, nprobes is ignored; maximum 0 is "no bound".
	MinimumNprobes    *int64 `json:"minimum_nprobes,omitempty"`
	MaximumNprobes    *int64 `json:"maximum_nprobes,omitempty"`
	RefineFactor      *int64 `json:"refine_factor,omitempty"`
	Ef                *int64 `json:"ef,omitempty"`
	BypassVectorIndex *bool  `json:"bypass_vector_index,omitempty"`
	FastSearch        *bool  `json:"fast_search,omitempty"`
	// UseLsm (the 0.39 client's useLsm(enable), sent when set) asks to read through the
	// table's MemWAL shards too. lancecat keeps no MemWAL (writes land in the table), so the
	// table is the whole of what an LSM read sees: accepted either way.
	UseLsm *bool `json:"use_lsm,omitempty"`

	req query.Request
	at  catalog.ReadAt
}

// Resolve turns the decoded body into the query engine's request (Request) and the version it
// reads (At). Shapes the engine cannot serve are refused here, never ignored.
func (b *Query) Resolve() error { return b.resolve("order_by") }

func (b *Query) resolve(orderAt string) error {
	order, err := ordering(b.OrderBy, orderAt)
	if err == nil {
		b.req, b.at, err = queryRequest(b, order)
	}
	return err
}

// Request is the query engine's request of a resolved body.
func (b *Query) Request() query.Request { return b.req }

// At is the version a resolved body reads.
func (b *Query) At() catalog.ReadAt { return b.at }

// Explain is ExplainTableQueryPlan's body: the query and whether to be verbose.
type Explain struct {
	Id       *[]string       `json:"id,omitempty"`
	Identity *nsapi.Identity `json:"identity,omitempty"`
	Query    Query           `json:"query"`
	Verbose  *bool           `json:"verbose,omitempty"`
}

// Resolve resolves the query of the body (Query.Resolve).
func (b *Explain) Resolve() error { return b.Query.resolve("query.order_by") }

// IsVerbose is whether the plan is asked for in full.
func (b *Explain) IsVerbose() bool { return isTrue(b.Verbose) }

// unlimitedK is where a `k` stops being a limit: remote clients send i64::MAX for "all rows".
const unlimitedK = 1 << 53

func isNull(raw json.RawMessage) bool {
	t := bytes.TrimSpace(raw)
	return len(t) == 0 || bytes.Equal(t, []byte("null"))
}

// queryRequest turns a decoded body (and its order_by) into the query engine's request, and the
// version it reads into at.
func queryRequest(b *Query, order []QueryOrdering) (query.Request, catalog.ReadAt, error) {
	var req query.Request
	at := catalog.ReadAt{Branch: strOf(b.Branch), Version: b.Version}
	if !isNull(b.FullTextQuery) {
		ft, err := query.ParseFullTextQuery(b.FullTextQuery)
		if err != nil {
			return req, at, nserr.InvalidInputf("full_text_query: %v", err)
		}
		req.FullText = ft
	}
	req.Filter = strOf(b.Filter)
	cols, proj, err := queryColumns(b.Columns)
	if err != nil {
		return req, at, err
	}
	req.Columns, req.Projection = cols, proj
	req.WithRowID = b.WithRowID != nil && *b.WithRowID
	if b.Offset != nil {
		if *b.Offset < 0 {
			return req, at, nserr.InvalidInputf("offset %d is negative", *b.Offset)
		}
		req.Offset = *b.Offset
	}
	k := int64(0)
	if b.K != nil {
		if *b.K < 0 {
			return req, at, nserr.InvalidInputf("k %d is negative", *b.K)
		}
		k = *b.K
	}
	for _, o := range order {
		req.OrderBy = append(req.OrderBy, query.OrderBy{Column: o.Column, Descending: !o.Ascending, NullsFirst: o.NullsFirst})
	}
	vectors, err := queryVectors(b.Vector)
	if err != nil {
		return req, at, err
	}
	if len(vectors) == 0 {
		if k > 0 && k < unlimitedK {
			req.Limit = k
		}
		return req, at, nil
	}
	vq := &query.VectorQuery{Column: strOf(b.VectorColumn), Vectors: vectors, LowerBound: b.LowerBound, UpperBound: b.UpperBound}
	if b.DistanceType != nil {
		vq.Metric = strings.ToLower(*b.DistanceType)
	}
	switch {
	case k == 0:
		vq.K = query.DefaultK
	case k >= unlimitedK:
		vq.K = math.MaxInt32 // every row: the table layer caps it at the row count
	default:
		// The top k after skipping offset rows (the search keeps k+offset per query vector).
		vq.K = int(min(k, math.MaxInt32))
	}
	for _, f := range []struct {
		v   *int64
		dst *int
		n   string
	}{{b.Nprobes, &vq.NProbes, "nprobes"}, {b.RefineFactor, &vq.RefineFactor, "refine_factor"}, {b.Ef, &vq.Ef, "ef"}} {
		if f.v != nil {
			if *f.v < 0 || *f.v > math.MaxInt32 {
				return req, at, nserr.InvalidInputf("%s %d is out of range", f.n, *f.v)
			}
			*f.dst = int(*f.v)
		}
	}
	if err := b.probeBounds(vq); err != nil {
		return req, at, err
	}
	vq.BypassVectorIndex = b.BypassVectorIndex != nil && *b.BypassVectorIndex
	vq.FastSearch = b.FastSearch != nil && *b.FastSearch
	req.Vector = vq
	req.Prefilter = b.Prefilter != nil && *b.Prefilter
	return req, at, nil
}

// probeBounds applies minimum_nprobes/maximum_nprobes as Lance's scanner does: the search
// probes at least the minimum and, while it has fewer than k rows, goes on up to the maximum
// (0 or absent: every partition). Given neither, nprobes stays an exact count (LanceDB's
// nprobes(n) sets both to n).
func (b *Query) probeBounds(vq *query.VectorQuery) error {
	if b.MinimumNprobes == nil && b.MaximumNprobes == nil {
		return nil
	}
	lo := int64(query.DefaultNProbes)
	if b.MinimumNprobes != nil {
		lo = *b.MinimumNprobes
		if lo < 1 || lo > math.MaxInt32 {
			return nserr.InvalidInputf("minimum_nprobes %d is out of range: it must be at least 1", lo)
		}
	}
	hi := int64(query.AllPartitions)
	if b.MaximumNprobes != nil && *b.MaximumNprobes != 0 {
		hi = *b.MaximumNprobes
		if hi < 0 || hi > math.MaxInt32 {
			return nserr.InvalidInputf("maximum_nprobes %d is out of range", hi)
		}
		if b.MinimumNprobes == nil {
			lo = min(lo, hi)
		}
		if hi < lo {
			return nserr.InvalidInputf("maximum_nprobes %d is below minimum_nprobes %d", hi, lo)
		}
	}
	vq.NProbes, vq.MaxNProbes = int(lo), int(hi)
	return nil
}

// queryColumns reads `columns`: absent or null is every column; an array of names; the spec's
// {column_names: […]} or {column_aliases: {alias: path}}; or a remote client's
// {alias: expression} map. Aliases keep the client's order (the answer's column order).
func queryColumns(raw json.RawMessage) ([]string, []query.Projection, error) {
	raw = json.RawMessage(bytes.TrimSpace(raw))
	if isNull(raw) {
		return nil, nil, nil
	}
	switch raw[0] {
	case '[':
		var names []string
		if err := json.Unmarshal(raw, &names); err != nil {
			return nil, nil, nserr.InvalidInputf("columns must be an array of column names: %s", JSONProblem(err))
		}
		return orEmptyNames(names), nil, nil
	case '{':
	default:
		return nil, nil, nserr.InvalidInputf("columns must be an array of names or an object, not %s", raw)
	}
	entries, err := orderedObject(raw)
	if err != nil {
		return nil, nil, nserr.InvalidInputf("columns: %v", err)
	}
	allStrings := true
	for _, e := range entries {
		v := bytes.TrimSpace(e.value)
		allStrings = allStrings && len(v) > 0 && v[0] == '"'
	}
	if allStrings {
		proj, err := projections(entries)
		return nil, proj, err
	}
	// The spec's wrapped form.
	var names []string
	var proj []query.Projection
	for _, e := range entries {
		switch e.key {
		case "column_names":
			if err := json.Unmarshal(e.value, &names); err != nil {
				return nil, nil, nserr.InvalidInputf("columns.column_names must be an array of names: %s", JSONProblem(err))
			}
			names = orEmptyNames(names)
		case "column_aliases":
			if isNull(e.value) {
				continue
			}
			inner, err := orderedObject(e.value)
			if err != nil {
				return nil, nil, nserr.InvalidInputf("columns.column_aliases: %v", err)
			}
			if proj, err = projections(inner); err != nil {
				return nil, nil, err
			}
		default:
			return nil, nil, nserr.InvalidInputf("columns: unknown field %q (want column_names or column_aliases)", e.key)
		}
	}
	if names != nil && proj != nil {
		return nil, nil, nserr.InvalidInputf("columns: give column_names or column_aliases, not both")
	}
	return names, proj, nil
}

func orEmptyNames(names []string) []string {
	if names == nil {
		return []string{}
	}
	return names
}

func projections(entries []objectEntry) ([]query.Projection, error) {
	proj := make([]query.Projection, len(entries))
	for i, e := range entries {
		var expr string
		if err := json.Unmarshal(e.value, &expr); err != nil {
			return nil, nserr.InvalidInputf("columns.%s must be a string expression", e.key)
		}
		if e.key == "" || expr == "" {
			return nil, nserr.InvalidInputf("columns: an alias and its expression must not be empty")
		}
		proj[i] = query.Projection{Name: e.key, Expr: expr}
	}
	return proj, nil
}

type objectEntry struct {
	key   string
	value json.RawMessage
}

// orderedObject decodes a JSON object's entries in their order (a Go map would lose it); a key
// given twice is refused.
func orderedObject(raw []byte) ([]objectEntry, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return nil, fmt.Errorf("not a JSON object")
	}
	var out []objectEntry
	seen := map[string]bool{}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, err
		}
		key, _ := tok.(string)
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, err
		}
		if seen[key] {
			return nil, fmt.Errorf("key %q is given twice", key)
		}
		seen[key] = true
		out = append(out, objectEntry{key, v})
	}
	return out, nil
}

// queryVectors reads `vector`: absent, null or [] is no vector search; a bare array of numbers is
// one query vector, an array of arrays several (remote clients); the spec's {single_vector} or
// {multi_vector}.
func queryVectors(raw json.RawMessage) ([][]float32, error) {
	raw = json.RawMessage(bytes.TrimSpace(raw))
	if isNull(raw) {
		return nil, nil
	}
	if raw[0] == '{' {
		var spec struct {
			SingleVector *[]float32   `json:"single_vector"`
			MultiVector  *[][]float32 `json:"multi_vector"`
		}
		// A misspelled key would be a plain scan where a kNN was asked for: refused by name.
		if err := checkFields(raw, reflect.TypeOf(&spec), "", "vector."); err != nil {
			return nil, err
		}
		if err := json.Unmarshal(raw, &spec); err != nil {
			return nil, nserr.InvalidInputf("vector must be {single_vector: [numbers]} or {multi_vector: [[numbers]…]}: %s", JSONProblem(err))
		}
		switch {
		case spec.SingleVector != nil && spec.MultiVector != nil:
			return nil, nserr.InvalidInputf("vector: give single_vector or multi_vector, not both")
		case spec.SingleVector != nil && len(*spec.SingleVector) > 0:
			return [][]float32{*spec.SingleVector}, nil
		case spec.MultiVector != nil:
			return nonEmptyVectors(*spec.MultiVector)
		}
		return nil, nil
	}
	var one []float32
	if err := json.Unmarshal(raw, &one); err == nil {
		if len(one) == 0 {
			return nil, nil
		}
		return [][]float32{one}, nil
	}
	var many [][]float32
	if err := json.Unmarshal(raw, &many); err != nil {
		return nil, nserr.InvalidInputf("vector must be an array of numbers or of arrays of numbers: %s", JSONProblem(err))
	}
	return nonEmptyVectors(many)
}

func nonEmptyVectors(vs [][]float32) ([][]float32, error) {
	for i, v := range vs {
		if len(v) == 0 {
			return nil, nserr.InvalidInputf("vector[%d] is empty", i)
		}
	}
	if len(vs) == 0 {
		return nil, nil
	}
	return vs, nil
}
