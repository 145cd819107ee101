package query

// Full-text search (the spec's full_text_query) over Lance's INVERTED
// indices: leaves (match, phrase) are answered by each column's index
// segments (lance.Dataset.OpenFTSIndex), combined here (boolean,
// multi_match, boost), the prefilter and deletions applied to the row
// addresses, and the top rows taken with their _score. Fragments the
// index does not cover (rows appended since the build) are searched flat
// and merged as Lance does (lance/index inverted_flat.go).

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	nserr "github.com/lancecat/lancecat/errors"
	"github.com/lancecat/lancecat/expr"
	"github.com/lancecat/lancecat/lance"
	"github.com/lancecat/lancecat/lance/index"
	"github.com/lancecat/lancecat/lance/index/tableindex"
)

// FullTextQuery is a decoded full_text_query.
type FullTextQuery struct {
	// Columns are the default columns of leaves without one (string_query's
	// columns); nil: every column with a full-text index.
	Columns []string
	Root    FTSNode
}

// FTSNode is one node of a full-text query tree.
type FTSNode struct {
	// Leaf (Kind Match or Phrase) when Children is nil and !IsBoolean.
	Leaf   index.FTSQuery
	Column string
	// Boolean: Must, Should, MustNot over the nodes.
	IsBoolean             bool
	Must, Should, MustNot []FTSNode
	// MultiMatch: the sum of the nodes' scores over the rows any matches.
	MultiMatch []FTSNode
	// Boost: Positive's rows, scores times NegativeBoost where Negative matches.
	Positive, Negative *FTSNode
	NegativeBoost      float32
}

type ftsJSON struct {
	StringQuery *struct {
		Query   string   `json:"query"`
		Columns []string `json:"columns"`
	} `json:"string_query"`
	StructuredQuery *struct {
		Query ftsQueryJSON `json:"query"`
	} `json:"structured_query"`
	// The remote SDK's shapes (../shared/reference/lancedb-remote-client.md):
	// {columns, query: "text"} and {query: FtsQuery}.
	Query   json.RawMessage `json:"query"`
	Columns []string        `json:"columns"`
}

type ftsMatchJSON struct {
	Terms  string   `json:"terms"`
	Column *string  `json:"column"`
	Boost  *float32 `json:"boost"`
	// fuzziness: absent or null (Lance's None, which the SDKs send for fuzziness: null) is an
	// exact match: Lance's search expands only for Some(n > 0) (measured: SDK 0.39.0 embedded
	// answers a misspelled term with fuzziness null by no rows).
	Fuzziness *int32  `json:"fuzziness"`
	Operator  *string `json:"operator"`
	// The spec's and the remote SDK's (it sends both, with their defaults 50 and 0): how many
	// index tokens a fuzzy match expands to at most, and how many leading bytes of a term
	// an expansion keeps.
	MaxExpansions *int   `json:"max_expansions"`
	PrefixLength  *int32 `json:"prefix_length"`
}

// decodeStrict decodes a full_text_query part refusing a field the spec's FTS models do not
// have: a misspelled key (`colums`, `operater`) would otherwise change what the query means
// (every column searched, OR for AND) without a word.
func decodeStrict(raw []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return err
	}
	if dec.More() {
		return errors.New("more than one JSON value")
	}
	return nil
}

type ftsQueryJSON struct {
	Match  *ftsMatchJSON `json:"match"`
	Phrase *struct {
		Terms  string  `json:"terms"`
		Column *string `json:"column"`
		Slop   *int32  `json:"slop"`
	} `json:"phrase"`
	Boolean *struct {
		Must    []ftsQueryJSON `json:"must"`
		Should  []ftsQueryJSON `json:"should"`
		MustNot []ftsQueryJSON `json:"must_not"`
	} `json:"boolean"`
	// multi_match in both shapes: the spec's match_queries, and Lance's own serialization the
	// remote client sends ({query, columns, boost: [per column]}; Lance's MultiMatchQuery
	// serializer leaves the operator out, so a remote multi-match is always OR).
	MultiMatch *struct {
		MatchQueries []ftsMatchJSON `json:"match_queries"`
		Query        *string        `json:"query"`
		Columns      []string       `json:"columns"`
		Boost        []float32      `json:"boost"`
	} `json:"multi_match"`
	Boost *struct {
		Positive      *ftsQueryJSON `json:"positive"`
		Negative      *ftsQueryJSON `json:"negative"`
		NegativeBoost *float32      `json:"negative_boost"`
	} `json:"boost"`
}

// ErrBadFullTextQuery: a full_text_query of no shape the spec gives.
var ErrBadFullTextQuery = errors.New("query: bad full_text_query")

// ParseFullTextQuery decodes the spec's full_text_query (string_query or
// structured_query with match, phrase, boolean, multi_match, boost).
func ParseFullTextQuery(raw json.RawMessage) (*FullTextQuery, error) {
	var j ftsJSON
	if err := decodeStrict(raw, &j); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrBadFullTextQuery, err)
	}
	switch {
	case j.StringQuery != nil && j.StructuredQuery != nil:
		return nil, fmt.Errorf("%w: give string_query or structured_query, not both", ErrBadFullTextQuery)
	case j.StringQuery != nil:
		return &FullTextQuery{Columns: j.StringQuery.Columns, Root: stringQueryNode(j.StringQuery.Query)}, nil
	case j.StructuredQuery != nil:
		n, err := ftsNodeOf(j.StructuredQuery.Query, 0)
		if err != nil {
			return nil, err
		}
		return &FullTextQuery{Root: n}, nil
	case len(j.Query) > 0 && j.Query[0] == '"':
		var text string
		if err := json.Unmarshal(j.Query, &text); err != nil {
			return nil, fmt.Errorf("%w: %v", ErrBadFullTextQuery, err)
		}
		return &FullTextQuery{Columns: j.Columns, Root: stringQueryNode(text)}, nil
	case len(j.Query) > 0 && j.Query[0] == '{':
		var q ftsQueryJSON
		if err := decodeStrict(j.Query, &q); err != nil {
			return nil, fmt.Errorf("%w: %v", ErrBadFullTextQuery, err)
		}
		n, err := ftsNodeOf(q, 0)
		if err != nil {
			return nil, err
		}
		return &FullTextQuery{Columns: j.Columns, Root: n}, nil
	}
	return nil, fmt.Errorf("%w: neither string_query nor structured_query", ErrBadFullTextQuery)
}

// stringQueryNode is a string query: a phrase when the whole text is in
// double quotes (the remote SDK sends its PhraseQuery as "\"terms\""),
// else a match of its terms.
func stringQueryNode(text string) FTSNode {
	t := strings.TrimSpace(text)
	if len(t) >= 2 && t[0] == '"' && t[len(t)-1] == '"' {
		return FTSNode{Leaf: index.FTSQuery{Kind: index.Phrase, Terms: t[1 : len(t)-1]}}
	}
	return FTSNode{Leaf: index.FTSQuery{Kind: index.Match, Terms: text}}
}

func matchNode(m ftsMatchJSON) (FTSNode, error) {
	q := index.FTSQuery{Kind: index.Match, Terms: m.Terms}
	if m.Boost != nil {
		q.Boost = *m.Boost
	}
	if m.Fuzziness != nil {
		if *m.Fuzziness < 0 || *m.Fuzziness > 2 {
			return FTSNode{}, fmt.Errorf("%w: fuzziness %d (0, 1 or 2)", ErrBadFullTextQuery, *m.Fuzziness)
		}
		q.Fuzziness = int(*m.Fuzziness)
	}
	if m.Operator != nil {
		switch strings.ToUpper(*m.Operator) {
		case "AND", "OR":
			q.Operator = strings.ToUpper(*m.Operator)
		default:
			return FTSNode{}, fmt.Errorf("%w: operator %q (And or Or)", ErrBadFullTextQuery, *m.Operator)
		}
	}
	if m.MaxExpansions != nil {
		if *m.MaxExpansions < 0 {
			return FTSNode{}, fmt.Errorf("%w: negative max_expansions", ErrBadFullTextQuery)
		}
		q.MaxExpansions = *m.MaxExpansions
	}
	if m.PrefixLength != nil {
		if *m.PrefixLength < 0 {
			return FTSNode{}, fmt.Errorf("%w: negative prefix_length", ErrBadFullTextQuery)
		}
		q.PrefixLength = int(*m.PrefixLength)
	}
	n := FTSNode{Leaf: q}
	if m.Column != nil {
		n.Column = *m.Column
	}
	return n, nil
}

func ftsNodeOf(j ftsQueryJSON, depth int) (FTSNode, error) {
	if depth > 32 {
		return FTSNode{}, fmt.Errorf("%w: nested too deep", ErrBadFullTextQuery)
	}
	list := func(qs []ftsQueryJSON) ([]FTSNode, error) {
		var out []FTSNode
		for _, q := range qs {
			n, err := ftsNodeOf(q, depth+1)
			if err != nil {
				return nil, err
			}
			out = append(out, n)
		}
		return out, nil
	}
	switch {
	case j.Match != nil:
		return matchNode(*j.Match)
	case j.Phrase != nil:
		n := FTSNode{Leaf: index.FTSQuery{Kind: index.Phrase, Terms: j.Phrase.Terms}}
		if j.Phrase.Column != nil {
			n.Column = *j.Phrase.Column
		}
		if j.Phrase.Slop != nil {
			if *j.Phrase.Slop < 0 {
				return FTSNode{}, fmt.Errorf("%w: negative slop", ErrBadFullTextQuery)
			}
			n.Leaf.Slop = int(*j.Phrase.Slop)
		}
		return n, nil
	case j.Boolean != nil:
		n := FTSNode{IsBoolean: true}
		var err error
		if n.Must, err = list(j.Boolean.Must); err != nil {
			return n, err
		}
		if n.Should, err = list(j.Boolean.Should); err != nil {
			return n, err
		}
		if n.MustNot, err = list(j.Boolean.MustNot); err != nil {
			return n, err
		}
		return n, nil
	case j.MultiMatch != nil:
		n := FTSNode{}
		mm := j.MultiMatch
		if mm.Query != nil {
			if len(mm.MatchQueries) > 0 {
				return n, fmt.Errorf("%w: multi_match takes match_queries or query and columns, not both", ErrBadFullTextQuery)
			}
			if len(mm.Columns) == 0 {
				return n, fmt.Errorf("%w: multi_match without columns", ErrBadFullTextQuery)
			}
			if mm.Boost != nil && len(mm.Boost) != len(mm.Columns) {
				return n, fmt.Errorf("%w: multi_match has %d boosts for %d columns", ErrBadFullTextQuery, len(mm.Boost), len(mm.Columns))
			}
			for i, c := range mm.Columns {
				q := index.FTSQuery{Kind: index.Match, Terms: *mm.Query, Boost: 1}
				if mm.Boost != nil {
					q.Boost = mm.Boost[i]
				}
				n.MultiMatch = append(n.MultiMatch, FTSNode{Leaf: q, Column: c})
			}
			return n, nil
		}
		for _, m := range mm.MatchQueries {
			c, err := matchNode(m)
			if err != nil {
				return n, err
			}
			n.MultiMatch = append(n.MultiMatch, c)
		}
		if len(n.MultiMatch) == 0 {
			return n, fmt.Errorf("%w: multi_match without match_queries", ErrBadFullTextQuery)
		}
		return n, nil
	case j.Boost != nil:
		if j.Boost.Positive == nil || j.Boost.Negative == nil {
			return FTSNode{}, fmt.Errorf("%w: boost needs positive and negative", ErrBadFullTextQuery)
		}
		p, err := ftsNodeOf(*j.Boost.Positive, depth+1)
		if err != nil {
			return p, err
		}
		ng, err := ftsNodeOf(*j.Boost.Negative, depth+1)
		if err != nil {
			return ng, err
		}
		nb := float32(0.5)
		if j.Boost.NegativeBoost != nil {
			nb = *j.Boost.NegativeBoost
		}
		return FTSNode{Positive: &p, Negative: &ng, NegativeBoost: nb}, nil
	}
	return FTSNode{}, fmt.Errorf("%w: a query needs match, phrase, boolean, multi_match or boost", ErrBadFullTextQuery)
}

// ftsRun is one full-text search's state: the opened indices per column.
type ftsRun struct {
	ds      *lance.Dataset
	ver     *lance.Version
	q       *FullTextQuery
	readers map[string][]index.FTSReader
	names   map[string]string
	allow   func(uint64) bool
	flat    map[string][]index.FlatDoc
	// leafLimit (0: none) caps a leaf's hits per segment: set when the
	// query is one leaf, whose rows are the answer's.
	leafLimit int
	// res turns the stable row ids an index records into row addresses, on
	// a dataset with stable row ids (nil without: the ids are addresses).
	res *tableindex.RowResolver
}

func (r *ftsRun) close() {
	for _, rs := range r.readers {
		for _, x := range rs {
			x.Close()
		}
	}
}

func (r *ftsRun) open(ctx context.Context, column string) ([]index.FTSReader, error) {
	if rs, ok := r.readers[column]; ok {
		return rs, nil
	}
	name, segs, err := tableindex.FTSIndexFor(r.ver, column)
	if err != nil {
		return nil, fmt.Errorf("full-text search on column %q: %w", column, err)
	}
	var rs []index.FTSReader
	for _, s := range segs {
		x, err := tableindex.OpenFTSIndex(ctx, r.ds, r.ver, s)
		if err != nil {
			for _, y := range rs {
				y.Close()
			}
			return nil, err
		}
		rs = append(rs, x)
	}
	r.readers[column] = rs
	r.names[column] = name
	return rs, nil
}

// defaultColumns are the string_query's columns, else every column with a
// full-text index.
func (r *ftsRun) defaultColumns() ([]string, error) {
	if len(r.q.Columns) > 0 {
		return r.q.Columns, nil
	}
	var out []string
	for _, info := range lance.ListIndices(r.ver) {
		if len(info.Columns) != 1 {
			continue
		}
		if name, _, err := tableindex.FTSIndexFor(r.ver, info.Columns[0]); err == nil && name == info.Name {
			out = append(out, info.Columns[0])
		}
	}
	if len(out) == 0 {
		// Lance's words and kind (invalid input): a 404 here reads, through the remote client,
		// as "Table '…' was not found".
		return nil, nserr.InvalidInputf("full-text search: cannot perform full text search unless an INVERTED index has been created on at least one column")
	}
	return out, nil
}

type scores map[uint64]float32

func (r *ftsRun) eval(ctx context.Context, n FTSNode) (scores, error) {
	switch {
	case n.Positive != nil:
		pos, err := r.eval(ctx, *n.Positive)
		if err != nil {
			return nil, err
		}
		neg, err := r.eval(ctx, *n.Negative)
		if err != nil {
			return nil, err
		}
		for row := range pos {
			if _, ok := neg[row]; ok {
				pos[row] *= n.NegativeBoost
			}
		}
		return pos, nil
	case n.MultiMatch != nil:
		// Lance fuses a multi-match's per-column scores by their maximum (Elasticsearch's
		// best_fields), as it does a match without a column over every indexed column.
		out := scores{}
		for _, c := range n.MultiMatch {
			s, err := r.eval(ctx, c)
			if err != nil {
				return nil, err
			}
			maxInto(out, s)
		}
		return out, nil
	case n.IsBoolean:
		return index.CombineBoolean(ctx, n.Must, n.Should, n.MustNot, func(ctx context.Context, c FTSNode) (map[uint64]float32, error) {
			return r.eval(ctx, c)
		})
	}
	cols := []string{n.Column}
	if n.Column == "" {
		var err error
		if cols, err = r.defaultColumns(); err != nil {
			return nil, err
		}
	}
	out := scores{}
	for _, c := range cols {
		col, err := r.leaf(ctx, n, c, len(cols) == 1)
		if err != nil {
			return nil, err
		}
		// a leaf without a column is a multi-match over the indexed columns (Lance's
		// fill_fts_query_column): the best column's score
		maxInto(out, col)
	}
	return out, nil
}

// maxInto keeps, per row, the larger of out's and s's score.
func maxInto(out, s scores) {
	for row, v := range s {
		if w, ok := out[row]; !ok || v > w {
			out[row] = v
		}
	}
}

// leaf is the scores of a match or phrase on one column's index segments and unindexed rows.
func (r *ftsRun) leaf(ctx context.Context, n FTSNode, c string, only bool) (scores, error) {
	out := scores{}
	{
		rs, err := r.open(ctx, c)
		if err != nil {
			return nil, err
		}
		limit := 0
		if only {
			// The segments and the unindexed rows hold disjoint rows, so
			// each one's best leafLimit rows hold the query's.
			limit = r.leafLimit
		}
		allow := r.allow
		if r.res != nil {
			allow = func(id uint64) bool { a, ok := r.res.Address(id); return ok && r.allow(a) }
		}
		for _, x := range rs {
			hits, err := x.Search(ctx, n.Leaf, limit, allow)
			if err != nil {
				return nil, err
			}
			for _, h := range hits {
				addr := h.RowID
				if r.res != nil {
					var ok bool
					if addr, ok = r.res.Address(h.RowID); !ok {
						continue
					}
				}
				out[addr] += h.Score
			}
		}
		docs, err := r.unindexed(ctx, c)
		if err != nil {
			return nil, err
		}
		flat, err := index.FlatSearch(ctx, rs, n.Leaf, docs, r.allow)
		if err != nil {
			return nil, err
		}
		for row, s := range flat {
			out[row] += s
		}
	}
	return out, nil
}

// unindexed is column's text in the fragments its index does not cover
// (read once per query), searched flat as Lance does.
func (r *ftsRun) unindexed(ctx context.Context, column string) ([]index.FlatDoc, error) {
	if d, ok := r.flat[column]; ok {
		return d, nil
	}
	_, segs, err := tableindex.FTSIndexFor(r.ver, column)
	if err != nil {
		return nil, err
	}
	frags, err := tableindex.UnindexedFragments(r.ver, segs)
	if err != nil || len(frags) == 0 {
		return nil, err
	}
	sc, err := r.ds.Scan(ctx, lance.ScanOptions{At: r.ver, Columns: []string{column}, WithRowAddress: true, Fragments: frags})
	if err != nil {
		return nil, err
	}
	defer sc.Release()
	var docs []index.FlatDoc
	for sc.Next() {
		rec := sc.RecordBatch()
		addrs, ok := rec.Column(1).(*array.Uint64)
		if !ok {
			return nil, fmt.Errorf("full-text search: scan returned _rowaddr of type %s", rec.Column(1).DataType())
		}
		var text func(i int) (string, bool)
		switch c := rec.Column(0).(type) {
		case *array.String:
			text = func(i int) (string, bool) { return c.Value(i), c.IsValid(i) }
		case *array.LargeString:
			text = func(i int) (string, bool) { return c.Value(i), c.IsValid(i) }
		default:
			return nil, fmt.Errorf("full-text search: column %q is %s", column, c.DataType())
		}
		for i := 0; i < int(rec.NumRows()); i++ {
			d := index.FlatDoc{Row: addrs.Value(i)}
			if s, ok := text(i); ok {
				d.Text = &s
			}
			docs = append(docs, d)
		}
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	r.flat[column] = docs
	return docs, nil
}

// allowed is the prefilter: the live row addresses of ver matching filter
// ("" : every live row).
func allowed(ctx context.Context, ds *lance.Dataset, ver *lance.Version, filter string, mem memory.Allocator) (func(uint64) bool, error) {
	schema, err := ver.ArrowSchema()
	if err != nil {
		return nil, err
	}
	var bound *expr.Bound
	var cols []string
	if filter = expr.FilterText(filter); filter != "" {
		e, err := expr.Parse(filter)
		if err != nil {
			return nil, err
		}
		cols = referenced(e, schema)
		if bound, err = expr.Compile(filter, subSchema(schema, cols)); err != nil {
			return nil, err
		}
	}
	if cols == nil {
		cols = []string{}
	}
	var whole map[uint64]uint64 // fragment id -> rows, of fragments all live and unfiltered
	var scan []uint64
	if bound == nil {
		// Without a filter, a row of a fragment that has no deletions is
		// live when the fragment is still in the version: only the
		// fragments with deletion files are scanned for their live rows
		// (an index may list rows of fragments since deleted or rewritten).
		whole = map[uint64]uint64{}
		for _, f := range ver.Manifest().GetFragments() {
			if f.GetDeletionFile() == nil {
				whole[f.GetId()] = f.GetPhysicalRows()
			} else {
				scan = append(scan, f.GetId())
			}
		}
		if len(scan) == 0 {
			return func(a uint64) bool { n, ok := whole[a>>32]; return ok && a&(1<<32-1) < n }, nil
		}
	}
	sc, err := ds.Scan(ctx, lance.ScanOptions{At: ver, Columns: cols, WithRowAddress: true, Mem: mem, Fragments: scan})
	if err != nil {
		return nil, err
	}
	defer sc.Release()
	live := map[uint64]struct{}{}
	for sc.Next() {
		rec := sc.RecordBatch()
		if bound != nil {
			f, err := bound.Filter(ctx, rec)
			if err != nil {
				return nil, err
			}
			rec = f
			defer f.Release()
		}
		addrs := rec.Column(int(rec.NumCols()) - 1).(*array.Uint64).Uint64Values()
		for _, a := range addrs {
			live[a] = struct{}{}
		}
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	return func(a uint64) bool {
		if n, ok := whole[a>>32]; ok {
			return a&(1<<32-1) < n
		}
		_, ok := live[a]
		return ok
	}, nil
}

// runFTS answers a request with FullText set: the rows of the best
// Offset+Limit scores, their columns and _score (float32), best first.
func runFTS(ctx context.Context, ds *lance.Dataset, req Request) (array.RecordReader, error) {
	if req.Vector != nil {
		return nil, fmt.Errorf("%w: hybrid (vector and full-text) search", lance.ErrUnsupportedFeature)
	}
	if len(req.Projection) > 0 || len(req.OrderBy) > 0 {
		return nil, fmt.Errorf("%w: projections or order_by with full-text search", lance.ErrUnsupportedFeature)
	}
	mem := req.Mem
	if mem == nil {
		mem = memory.DefaultAllocator
	}
	ver := req.At
	if ver == nil {
		var err error
		if ver, err = ds.OpenLatest(ctx); err != nil {
			return nil, err
		}
	}
	allow, err := allowed(ctx, ds, ver, req.Filter, mem)
	if err != nil {
		return nil, err
	}
	run := &ftsRun{ds: ds, ver: ver, q: req.FullText, readers: map[string][]index.FTSReader{}, names: map[string]string{}, allow: allow, flat: map[string][]index.FlatDoc{}}
	defer run.close()
	if ver.StableRowIDs() {
		// An inverted index records stable row ids (Lance's and lancecat's alike); every
		// other row of the query is a row address. Found with pylance 14: FTS on a table with
		// stable row ids matched only the rows of its first fragment.
		frags := make([]uint64, 0, len(ver.Manifest().GetFragments()))
		for _, f := range ver.Manifest().GetFragments() {
			frags = append(frags, f.GetId())
		}
		if run.res, err = tableindex.NewRowResolver(ctx, ds, ver, frags); err != nil {
			return nil, err
		}
	}
	if root := req.FullText.Root; req.Limit > 0 && !root.IsBoolean && root.MultiMatch == nil && root.Positive == nil {
		run.leafLimit = int(req.Limit + max(req.Offset, 0))
	}
	sc, err := run.eval(ctx, req.FullText.Root)
	if err != nil {
		return nil, err
	}
	type hit struct {
		addr  uint64
		score float32
	}
	hs := make([]hit, 0, len(sc))
	for a, s := range sc {
		if allow(a) {
			hs = append(hs, hit{a, s})
		}
	}
	sort.Slice(hs, func(i, j int) bool {
		if hs[i].score != hs[j].score {
			return hs[i].score > hs[j].score
		}
		return hs[i].addr < hs[j].addr
	})
	lo := min(int(max(req.Offset, 0)), len(hs))
	hs = hs[lo:]
	if req.Limit > 0 && int64(len(hs)) > req.Limit {
		hs = hs[:req.Limit]
	}
	schema, err := ver.ArrowSchema()
	if err != nil {
		return nil, err
	}
	cols := req.Columns
	if cols == nil {
		for _, f := range schema.Fields() {
			cols = append(cols, f.Name)
		}
	}
	var take []string
	for _, c := range cols {
		if c != "_score" && c != "_rowid" {
			take = append(take, c)
		}
	}
	addrs := make([]uint64, len(hs))
	sb := array.NewFloat32Builder(mem)
	defer sb.Release()
	for i, h := range hs {
		addrs[i] = h.addr
		sb.Append(h.score)
	}
	rec, err := ds.TakeRowAddresses(ctx, addrs, lance.TakeOptions{At: ver, Columns: take, WithRowID: req.WithRowID, Mem: mem})
	if err != nil {
		return nil, err
	}
	defer rec.Release()
	score := sb.NewArray()
	defer score.Release()
	fields := slices.Clone(rec.Schema().Fields())
	arrs := slices.Clone(rec.Columns())
	at := len(take)
	fields = slices.Insert(fields, at, arrow.Field{Name: "_score", Type: arrow.PrimitiveTypes.Float32, Nullable: true})
	arrs = slices.Insert(arrs, at, score)
	out := array.NewRecordBatch(arrow.NewSchema(fields, nil), arrs, int64(len(hs)))
	defer out.Release()
	return array.NewRecordReader(out.Schema(), []arrow.RecordBatch{out})
}

// explainFTS renders the plan of a full-text request: the indices that
// serve each leaf.
func explainFTS(ctx context.Context, ds *lance.Dataset, req Request) (string, error) {
	ver := req.At
	if ver == nil {
		var err error
		if ver, err = ds.OpenLatest(ctx); err != nil {
			return "", err
		}
	}
	run := &ftsRun{ds: ds, ver: ver, q: req.FullText}
	var b strings.Builder
	b.WriteString("ProjectionExec: _score\n  Take\n    SortExec: _score DESC")
	if req.Limit > 0 {
		fmt.Fprintf(&b, " limit=%d", req.Limit+max(req.Offset, 0))
	}
	b.WriteString("\n")
	if req.Filter != "" {
		fmt.Fprintf(&b, "      PreFilter: %s\n", req.Filter)
	}
	var walk func(n FTSNode, depth int) error
	walk = func(n FTSNode, depth int) error {
		pad := strings.Repeat("  ", depth)
		switch {
		case n.Positive != nil:
			fmt.Fprintf(&b, "%sBoostQuery: negative_boost=%g\n", pad, n.NegativeBoost)
			if err := walk(*n.Positive, depth+1); err != nil {
				return err
			}
			return walk(*n.Negative, depth+1)
		case n.MultiMatch != nil:
			fmt.Fprintf(&b, "%sMultiMatchQuery\n", pad)
			for _, c := range n.MultiMatch {
				if err := walk(c, depth+1); err != nil {
					return err
				}
			}
			return nil
		case n.IsBoolean:
			fmt.Fprintf(&b, "%sBooleanQuery: must=%d should=%d must_not=%d\n", pad, len(n.Must), len(n.Should), len(n.MustNot))
			for _, c := range slices.Concat(n.Must, n.Should, n.MustNot) {
				if err := walk(c, depth+1); err != nil {
					return err
				}
			}
			return nil
		}
		cols := []string{n.Column}
		if n.Column == "" {
			var err error
			if cols, err = run.defaultColumns(); err != nil {
				return err
			}
		}
		kind := "MatchQuery"
		if n.Leaf.Kind == index.Phrase {
			kind = "PhraseQuery"
		}
		for _, c := range cols {
			name, segs, err := tableindex.FTSIndexFor(ver, c)
			if err != nil {
				return err
			}
			fmt.Fprintf(&b, "%s%s: column=%s, query=%q, index=%s (INVERTED, %d segment(s))\n", pad, kind, c, n.Leaf.Terms, name, len(segs))
		}
		return nil
	}
	if err := walk(req.FullText.Root, 3); err != nil {
		return "", err
	}
	return b.String(), nil
}
