package table

// The index operations of a table: scalar indices built in Lance's own
// format (lance.Dataset.CreateScalarIndex), listed, described and dropped.
// Indices the official SDK built are listed and described the same way.

import (
	"context"
	"errors"
	"strings"
	"time"

	"github.com/lancecat/lancecat/catalog"
	nserr "github.com/lancecat/lancecat/errors"
	"github.com/lancecat/lancecat/lance"
	"github.com/lancecat/lancecat/lance/index"
	"github.com/lancecat/lancecat/lance/index/tableindex"
)

// vectorIndexTypes are the vector index types clients name; which of
// them lancecat builds is createVectorIndex's to say.
var vectorIndexTypes = map[string]bool{
	"IVF_FLAT": true, "IVF_PQ": true, "IVF_SQ": true, "IVF_HNSW_SQ": true, "IVF_HNSW_PQ": true,
	"IVF_HNSW_FLAT": true, "IVF_RQ": true, "HNSW": true, "VECTOR": true,
}

// unbuiltScalarTypes are the scalar index types Lance's clients ask for that lancecat does not
// build yet (406 naming the type, rather than 400 "unknown"), with why.
var unbuiltScalarTypes = map[string]string{
	"FM":    "lancecat does not write Lance's FM (substring) index; an NGRAM index serves contains() and LIKE",
	"RTREE": "lancecat has no geometry column types for Lance's RTREE (spatial) index to cover",
}

// ftsIndexTypes are the names clients give Lance's INVERTED index.
var ftsIndexTypes = map[string]bool{"FTS": true, "INVERTED": true}

// CreateIndex builds the index and returns the version that registers it; on a large table
// (Options.IndexBuild) the build is checked, started in the background and 0 is returned at once
// (indices_build.go): the index is listed once it committed.
func (h *Table) CreateIndex(ctx context.Context, req catalog.CreateIndexRequest) (uint64, error) {
	p, err := h.planIndex(req)
	if err != nil {
		return 0, err
	}
	return h.runIndexPlan(ctx, p)
}

// planIndex resolves req to its kind's build, refusing what is wrong with the request alone
// (an unknown type, a missing column name, bad parameters).
func (h *Table) planIndex(req catalog.CreateIndexRequest) (indexPlan, error) {
	t := h.t
	kind := strings.ToUpper(strings.TrimSpace(req.IndexType))
	switch {
	case vectorIndexTypes[kind]:
		return h.planVectorIndex(kind, req)
	case ftsIndexTypes[kind]:
		return h.planFTSIndex(req)
	}
	if why, ok := unbuiltScalarTypes[kind]; ok {
		return indexPlan{}, nserr.Unsupportedf("index type %s is not supported yet: %s", kind, why)
	}
	typ, err := index.ParseType(kind)
	if err != nil {
		return indexPlan{}, nserr.InvalidInputf("unknown index type %q: the scalar index types are BTREE, BITMAP, LABEL_LIST, ZONEMAP, BLOOMFILTER and NGRAM", req.IndexType)
	}
	if req.Column == "" {
		return indexPlan{}, nserr.InvalidInputf("column must name the column to index")
	}
	opts := tableindex.ScalarIndexOptions{Column: req.Column, Type: typ, Name: req.Name, Replace: req.Replace}
	return indexPlan{
		name: defaultIndexName(req), kind: string(typ), column: req.Column, branch: req.Branch,
		check: func(ctx context.Context, ds *lance.Dataset) error { return tableindex.CheckScalarIndex(ctx, ds, opts) },
		build: func(ctx context.Context, ds *lance.Dataset) (uint64, error) {
			ver, err := tableindex.CreateScalarIndex(ctx, ds, opts)
			if err != nil {
				return 0, indexErr(t, err)
			}
			return ver.Number(), nil
		},
	}, nil
}

// defaultIndexName is the name the index gets: the request's, else <column>_idx.
func defaultIndexName(req catalog.CreateIndexRequest) string {
	if req.Name != "" {
		return req.Name
	}
	return req.Column + "_idx"
}

// version opens the version a read names (nil: the branch's latest).
func (h *Table) version(ctx context.Context, branch string, version *int64) (*lance.Version, error) {
	t := h.t
	ds, err := h.branchDataset(ctx, branch)
	if err != nil {
		return nil, err
	}
	if version == nil {
		v, err := h.latestOf(ctx, ds, branch)
		return v, Err(t, err)
	}
	if *version <= 0 {
		return nil, nserr.TableVersionNotFoundf("table %s has no version %d", quoteID(t.ID), *version)
	}
	v, err := ds.OpenVersion(ctx, uint64(*version))
	return v, Err(t, err)
}

// ListIndices lists the user indices of the version, by name in manifest order.
func (h *Table) ListIndices(ctx context.Context, branch string, version *int64) ([]catalog.IndexDescription, error) {
	ver, err := h.version(ctx, branch, version)
	if err != nil {
		return nil, err
	}
	out := []catalog.IndexDescription{}
	for _, info := range lance.ListIndices(ver) {
		segs, err := tableindex.IndexSegments(ver, info.Name)
		if err != nil {
			return nil, indexErr(h.t, err)
		}
		st, err := tableindex.IndexStats(ver, info.Name)
		if err != nil {
			return nil, indexErr(h.t, err)
		}
		first := segs[0]
		d := catalog.IndexDescription{
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
		d.Details = h.ftsIndexDetails(ctx, branch, ver, first)
		out = append(out, d)
	}
	return out, nil
}

// IndexStats describes the named index.
func (h *Table) IndexStats(ctx context.Context, branch string, version *int64, name string) (lance.IndexStats, error) {
	ver, err := h.version(ctx, branch, version)
	if err != nil {
		return lance.IndexStats{}, err
	}
	st, err := tableindex.IndexStats(ver, name)
	return st, indexErr(h.t, err)
}

// DropIndex drops the named index and returns the new version.
func (h *Table) DropIndex(ctx context.Context, branch string, name string) (uint64, error) {
	t := h.t
	ds, err := h.branchDataset(ctx, branch)
	if err != nil {
		return 0, err
	}
	ver, err := tableindex.DropIndex(ctx, ds, name)
	if err != nil {
		return 0, indexErr(t, err)
	}
	return ver.Number(), nil
}

// indexErr maps lance's index sentinels (not in the errors table: they are this file's) to
// their spec codes, and everything else as tableErr does.
func indexErr(t *catalog.Entry, err error) error {
	switch {
	case err == nil:
		return nil
	case errors.Is(err, lance.ErrIndexNotFound):
		return nserr.TableIndexNotFoundf("table %s: %v", quoteID(t.ID), err)
	case errors.Is(err, lance.ErrIndexExists):
		return nserr.TableIndexAlreadyExistsf("table %s: %v", quoteID(t.ID), err)
	}
	return Err(t, err)
}
