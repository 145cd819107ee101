package handlers

// The index operations: scalar and vector (IVF_FLAT, IVF_PQ) indices in Lance's format
// (namespace/indices.go, indices_vector.go). The remote client creates every index type through
// create_index; the list answers a vector index's kind (IVF_PQ, ...) and the stats its distance
// type.

import (
	"context"
	"slices"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/lancecat/lancecat/catalog"
	nserr "github.com/lancecat/lancecat/errors"
	"github.com/lancecat/lancecat/gen/nsapi"
	"github.com/lancecat/lancecat/ident"
)

// createIndexBody is the create doors' body: the spec's, the remote client's name of the
// distance type, and the Python remote client's replace flag (lancedb 0.40.0 sends it; absent,
// an index of the same name is replaced, the SDKs' default).
type createIndexBody struct {
	nsapi.CreateTableIndexRequest
	MetricType *string `json:"metric_type,omitempty"`
	Replace    *bool   `json:"replace,omitempty"`
	// Lance's InvertedIndexParams the remote client merges into the body beyond the spec's
	// fields (wire.ftsParams): the tokenizer's custom stop words and ngram lengths.
	CustomStopWords []string `json:"custom_stop_words,omitempty"`
	MinNgramLength  *int     `json:"min_ngram_length,omitempty"`
	MaxNgramLength  *int     `json:"max_ngram_length,omitempty"`
	PrefixOnly      *bool    `json:"prefix_only,omitempty"`
}

// createIndex is both create doors: the request is the same, the default name <column>_idx,
// and an index of the same name is replaced (the SDK's default; the spec has no flag).
func (s *Server) createIndex(c echo.Context, op string, delimiter *string) error {
	// The remote client names the distance metric_type (rust/lancedb remote/table.rs), the spec
	// distance_type: both are read, and must agree when both are sent.
	var body createIndexBody
	t, err := s.tableRequest(c, op, delimiter, &body)
	if err != nil {
		return err
	}
	req := body.CreateTableIndexRequest
	if body.MetricType != nil {
		switch {
		case req.DistanceType == nil:
			req.DistanceType = body.MetricType
		case !strings.EqualFold(*req.DistanceType, *body.MetricType):
			return nserr.InvalidInputf("metric_type %q and distance_type %q differ: send one of them", *body.MetricType, *req.DistanceType)
		}
	}
	// A name given is held to the name rule; the default <column>_idx is what the SDKs wait for.
	if req.Name != nil {
		if err := ident.CheckName(ident.Index, *req.Name); err != nil {
			return err
		}
	}
	_, err = t.CreateIndex(c.Request().Context(), catalog.CreateIndexRequest{
		Branch: strOf(req.Branch), Column: req.Column, IndexType: req.IndexType, Name: strOf(req.Name), Replace: body.Replace == nil || *body.Replace,
		Vector: catalog.VectorIndexParams{
			DistanceType: strOf(req.DistanceType), NumPartitions: intOf(req.NumPartitions),
			NumSubVectors: intOf(req.NumSubVectors), NumBits: intOf(req.NumBits),
			MaxIterations: intOf(req.MaxIterations), SampleRate: intOf(req.SampleRate),
			TargetPartitionSize: intOf(req.TargetPartitionSize), M: intOf(req.M),
			EfConstruction: intOf(req.EfConstruction),
		},
		FTS: catalog.FTSIndexParams{
			WithPosition: req.WithPosition, BaseTokenizer: req.BaseTokenizer, Language: req.Language,
			MaxTokenLength: req.MaxTokenLength, LowerCase: req.LowerCase, Stem: req.Stem,
			RemoveStopWords: req.RemoveStopWords, AsciiFolding: req.AsciiFolding,
			CustomStopWords: body.CustomStopWords, MinNgramLength: body.MinNgramLength,
			MaxNgramLength: body.MaxNgramLength, PrefixOnly: body.PrefixOnly,
		},
	})
	return err
}

// intOf is *p, or 0 when absent.
func intOf(p *int) int {
	if p == nil {
		return 0
	}
	return *p
}

// CreateTableIndex is POST /v1/table/{id}/create_index.
func (s *Server) CreateTableIndex(c echo.Context, _ nsapi.Id, params nsapi.CreateTableIndexParams) error {
	if err := s.createIndex(c, "CreateTableIndex", params.Delimiter); err != nil {
		return err
	}
	return writeJSON(c, nsapi.CreateTableIndexResponse{})
}

// CreateTableScalarIndex is POST /v1/table/{id}/create_scalar_index.
func (s *Server) CreateTableScalarIndex(c echo.Context, _ nsapi.Id, params nsapi.CreateTableScalarIndexParams) error {
	if err := s.createIndex(c, "CreateTableScalarIndex", params.Delimiter); err != nil {
		return err
	}
	return writeJSON(c, nsapi.CreateTableScalarIndexResponse{})
}

// remoteIndexTypes are the index_type names the remote client parses; it refuses a whole listing
// with any other, and asks the stats of an index listed without one.
var remoteIndexTypes = map[string]bool{
	"BTREE": true, "BITMAP": true, "LABEL_LIST": true, "FTS": true, "IVF_FLAT": true, "IVF_PQ": true,
	"IVF_SQ": true, "IVF_RQ": true, "IVF_HNSW_SQ": true, "IVF_HNSW_PQ": true,
}

// ListTableIndices is POST /v1/table/{id}/index/list. index_type is the upper-case name, left
// out for an index type the remote client does not know (a vector index whose kind is in its
// files, a Lance-only scalar type).
func (s *Server) ListTableIndices(c echo.Context, _ nsapi.Id, params nsapi.ListTableIndicesParams) error {
	var req nsapi.ListTableIndicesRequest
	t, err := s.tableRequest(c, "ListTableIndices", params.Delimiter, &req)
	if err != nil {
		return err
	}
	list, err := t.ListIndices(c.Request().Context(), strOf(req.Branch), req.Version)
	if err != nil {
		return err
	}
	out := nsapi.ListTableIndicesResponse{Indexes: make([]nsapi.IndexContent, len(list))}
	for i, d := range list {
		ic := nsapi.IndexContent{
			IndexName: d.Name, IndexUuid: d.UUID, Columns: d.Columns, Status: "succeeded",
			CreatedAt: d.CreatedAt, IndexVersion: &d.IndexVersion, TypeUrl: &d.TypeURL,
			NumIndexedRows: ptr(int64(d.NumIndexedRows)), NumUnindexedRows: ptr(int64(d.NumUnindexedRows)),
			NumSegments: ptr(int32(d.Segments)),
		}
		if remoteIndexTypes[d.Type] {
			ic.IndexType = ptr(d.Type)
		}
		if d.SizeBytes > 0 {
			ic.SizeBytes = ptr(d.SizeBytes)
		}
		if d.Details != "" {
			ic.IndexDetails = ptr(d.Details)
		}
		if ic.Columns == nil {
			ic.Columns = []string{}
		}
		out.Indexes[i] = ic
	}
	return writeJSON(c, out)
}

// DescribeTableIndexStats is POST /v1/table/{id}/index/{index_name}/stats.
func (s *Server) DescribeTableIndexStats(c echo.Context, _ nsapi.Id, name string, params nsapi.DescribeTableIndexStatsParams) error {
	var req nsapi.DescribeTableIndexStatsRequest
	t, err := s.tableRequest(c, "DescribeTableIndexStats", params.Delimiter, &req)
	if err != nil {
		return err
	}
	if err := indexNamed(c.Request().Context(), t, strOf(req.Branch), req.Version, name); err != nil {
		return err
	}
	st, err := t.IndexStats(c.Request().Context(), strOf(req.Branch), req.Version, name)
	if err != nil {
		return err
	}
	out := nsapi.DescribeTableIndexStatsResponse{
		IndexType: ptr(st.Type), NumIndexedRows: ptr(int64(st.NumIndexedRows)),
		NumUnindexedRows: ptr(int64(st.NumUnindexedRows)), NumIndices: ptr(int32(st.NumIndices)),
	}
	if st.DistanceType != "" {
		out.DistanceType = ptr(st.DistanceType)
	}
	return writeJSON(c, out)
}

// DropTableIndex is POST /v1/table/{id}/index/{index_name}/drop.
func (s *Server) DropTableIndex(c echo.Context, _ nsapi.Id, name string, params nsapi.DropTableIndexParams) error {
	var req nsapi.DropTableIndexRequest
	t, err := s.tableRequest(c, "DropTableIndex", params.Delimiter, &req)
	if err != nil {
		return err
	}
	// The branch may come in the query (the spec's parameter) or the body.
	branch := strOf(params.Branch)
	if branch == "" {
		branch = strOf(req.Branch)
	}
	if err := indexNamed(c.Request().Context(), t, branch, nil, name); err != nil {
		return err
	}
	if _, err := t.DropIndex(c.Request().Context(), branch, name); err != nil {
		return err
	}
	return writeJSON(c, nsapi.DropTableIndexResponse{})
}

// indexNamed admits the {index_name} of a path: a name that keeps the name rule (ident.CheckName),
// or one an index of the table already has. An index made before the rule (a NUL, a newline, a
// "/" in its name) stays describable and droppable under the name the listing shows; any other
// name that breaks the rule is a 400 naming the rule, and never reaches the index files.
func indexNamed(ctx context.Context, t catalog.Table, branch string, version *int64, name string) error {
	err := ident.CheckName(ident.Index, name)
	if err == nil {
		return nil
	}
	list, lerr := t.ListIndices(ctx, branch, version)
	if lerr != nil {
		return lerr
	}
	if slices.ContainsFunc(list, func(d catalog.IndexDescription) bool { return d.Name == name }) {
		return nil
	}
	return err
}
