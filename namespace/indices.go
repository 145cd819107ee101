package namespace

// The index operations of a table: scalar indices built in Lance's own
// format (lance.Dataset.CreateScalarIndex), listed, described and dropped.
// Indices the official SDK built are listed and described the same way.

import (
	"context"
	"errors"
	"strings"
	"time"

	nserr "github.com/lancecat/lancecat/errors"
	"github.com/lancecat/lancecat/lance"
	"github.com/lancecat/lancecat/lance/index"
)

// CreateIndexRequest is create_table_index / create_table_scalar_index.
type CreateIndexRequest struct {
	Branch string
	Column string
	// IndexType is the client's type name (BTREE, BITMAP, LABEL_LIST;
	// case-insensitive). Vector and full-text types are refused for now.
	IndexType string
	// Name defaults to "<column>_idx".
	Name string
	// Replace replaces an index of the same name (the SDK's default);
	// without it an existing name is TableIndexAlreadyExists.
	Replace bool
	// Vector holds the parameters of the vector index types (IVF_FLAT,
	// IVF_PQ, ...); zero values mean Lance's defaults.
	Vector VectorIndexParams
	// FTS holds the parameters of the full-text (FTS/INVERTED) index; nil
	// fields mean Lance's defaults.
	FTS FTSIndexParams
}

// VectorIndexParams are create_table_index's vector parameters as the
// client sent them (0 / "" when absent: Lance's defaults apply).
type VectorIndexParams struct {
	DistanceType        string
	NumPartitions       int
	NumSubVectors       int
	NumBits             int
	MaxIterations       int
	SampleRate          int
	TargetPartitionSize int
	M                   int
	EfConstruction      int
}

// FTSIndexParams are create_table_index's full-text parameters as the
// client sent them (nil when absent: Lance's defaults apply).
type FTSIndexParams struct {
	WithPosition    *bool
	BaseTokenizer   *string
	Language        *string
	MaxTokenLength  *int
	LowerCase       *bool
	Stem            *bool
	RemoveStopWords *bool
	AsciiFolding    *bool
}

// IndexDescription is one entry of list_table_indices.
type IndexDescription struct {
	Name string
	// UUID is the first segment's.
	UUID string
	// Type is Lance's upper-case type name (BTREE, BITMAP, IVF_PQ's
	// VECTOR, ...); TypeURL the index_details type URL.
	Type, TypeURL string
	Columns       []string
	Segments      int
	IndexVersion  int32
	CreatedAt     *time.Time
	SizeBytes     int64
	lance.IndexStats
}

// vectorIndexTypes are the vector index types clients name; which of
// them lancecat builds is createVectorIndex's to say.
var vectorIndexTypes = map[string]bool{
	"IVF_FLAT": true, "IVF_PQ": true, "IVF_SQ": true, "IVF_HNSW_SQ": true, "IVF_HNSW_PQ": true,
	"IVF_HNSW_FLAT": true, "IVF_RQ": true, "HNSW": true, "VECTOR": true,
}

// ftsIndexTypes are the names clients give Lance's INVERTED index.
var ftsIndexTypes = map[string]bool{"FTS": true, "INVERTED": true}

// CreateIndex builds the index and returns the version that registers it; on a large table
// (Options.IndexBuild) the build is checked, started in the background and 0 is returned at once
// (indices_build.go): the index is listed once it committed.
func (h *TableHandle) CreateIndex(ctx context.Context, req CreateIndexRequest) (uint64, error) {
	p, err := h.planIndex(req)
	if err != nil {
		return 0, err
	}
	return h.runIndexPlan(ctx, p)
}

// planIndex resolves req to its kind's build, refusing what is wrong with the request alone
// (an unknown type, a missing column name, bad parameters).
func (h *TableHandle) planIndex(req CreateIndexRequest) (indexPlan, error) {
	t := h.t
	kind := strings.ToUpper(strings.TrimSpace(req.IndexType))
	switch {
	case vectorIndexTypes[kind]:
		return h.planVectorIndex(kind, req)
	case ftsIndexTypes[kind]:
		return h.planFTSIndex(req)
	}
	typ, err := index.ParseType(kind)
	if err != nil {
		return indexPlan{}, nserr.InvalidInputf("unknown index type %q: the scalar index types are BTREE, BITMAP and LABEL_LIST", req.IndexType)
	}
	if req.Column == "" {
		return indexPlan{}, nserr.InvalidInputf("column must name the column to index")
	}
	opts := lance.ScalarIndexOptions{Column: req.Column, Type: typ, Name: req.Name, Replace: req.Replace}
	return indexPlan{
		name: defaultIndexName(req), kind: string(typ), column: req.Column, branch: req.Branch,
		check: func(ctx context.Context, ds *lance.Dataset) error { return ds.CheckScalarIndex(ctx, opts) },
		build: func(ctx context.Context, ds *lance.Dataset) (uint64, error) {
			ver, err := ds.CreateScalarIndex(ctx, opts)
			if err != nil {
				return 0, indexErr(t, err)
			}
			return ver.Number(), nil
		},
	}, nil
}

// defaultIndexName is the name the index gets: the request's, else <column>_idx.
func defaultIndexName(req CreateIndexRequest) string {
	if req.Name != "" {
		return req.Name
	}
	return req.Column + "_idx"
}

// version opens the version a read names (nil: the branch's latest).
func (h *TableHandle) version(ctx context.Context, branch string, version *int64) (*lance.Version, error) {
	n, t := h.n, h.t
	ds, err := n.branchDataset(ctx, t, branch)
	if err != nil {
		return nil, err
	}
	if version == nil {
		v, err := h.latestOf(ctx, ds, branch)
		return v, tableErr(t, err)
	}
	if *version <= 0 {
		return nil, nserr.TableVersionNotFoundf("table %s has no version %d", quoteID(t.ID), *version)
	}
	v, err := ds.OpenVersion(ctx, uint64(*version))
	return v, tableErr(t, err)
}

// ListIndices lists the user indices of the version, by name in manifest order.
func (h *TableHandle) ListIndices(ctx context.Context, branch string, version *int64) ([]IndexDescription, error) {
	ver, err := h.version(ctx, branch, version)
	if err != nil {
		return nil, err
	}
	out := []IndexDescription{}
	for _, info := range lance.ListIndices(ver) {
		segs, err := ver.IndexSegments(info.Name)
		if err != nil {
			return nil, indexErr(h.t, err)
		}
		st, err := ver.IndexStats(info.Name)
		if err != nil {
			return nil, indexErr(h.t, err)
		}
		first := segs[0]
		d := IndexDescription{
			Name: info.Name, UUID: lance.FormatUUID(first.GetUuid().GetUuid()),
			TypeURL: first.GetIndexDetails().GetTypeUrl(), Columns: info.Columns,
			Segments: len(segs), IndexVersion: first.GetIndexVersion(), IndexStats: st,
		}
		d.Type = st.Type
		if d.Type == "" {
			d.Type = strings.ToUpper(info.Type)
		}
		if first.CreatedAt != nil {
			ts := time.UnixMilli(int64(first.GetCreatedAt())).UTC()
			d.CreatedAt = &ts
		}
		for _, s := range segs {
			for _, f := range lance.IndexFiles(s) {
				d.SizeBytes += int64(f.Size)
			}
		}
		out = append(out, d)
	}
	return out, nil
}

// IndexStats describes the named index.
func (h *TableHandle) IndexStats(ctx context.Context, branch string, version *int64, name string) (lance.IndexStats, error) {
	ver, err := h.version(ctx, branch, version)
	if err != nil {
		return lance.IndexStats{}, err
	}
	st, err := ver.IndexStats(name)
	return st, indexErr(h.t, err)
}

// DropIndex drops the named index and returns the new version.
func (h *TableHandle) DropIndex(ctx context.Context, branch string, name string) (uint64, error) {
	n, t := h.n, h.t
	ds, err := n.branchDataset(ctx, t, branch)
	if err != nil {
		return 0, err
	}
	ver, err := ds.DropIndex(ctx, name)
	if err != nil {
		return 0, indexErr(t, err)
	}
	return ver.Number(), nil
}

// indexErr maps lance's index sentinels (not in the errors table: they are this file's) to
// their spec codes, and everything else as tableErr does.
func indexErr(t *Table, err error) error {
	switch {
	case err == nil:
		return nil
	case errors.Is(err, lance.ErrIndexNotFound):
		return nserr.TableIndexNotFoundf("table %s: %v", quoteID(t.ID), err)
	case errors.Is(err, lance.ErrIndexExists):
		return nserr.TableIndexAlreadyExistsf("table %s: %v", quoteID(t.ID), err)
	}
	return tableErr(t, err)
}
