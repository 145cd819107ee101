package table

// The data plane of one table: reads (query, count, explain, analyze) resolve the version they
// see (latest of a branch, a version number or a tag) and delegate to package query; writes
// (insert, delete, update, merge, add and alter columns) run on the branch's dataset and
// delegate to package dml, one Lance transaction each. Errors of the table layer get the
// table's name here (tableErr), as every other table operation's do.

import (
	"context"
	"errors"

	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/lancecat/lancecat/catalog"
	"github.com/lancecat/lancecat/dml"
	nserr "github.com/lancecat/lancecat/errors"
	"github.com/lancecat/lancecat/lance"
	"github.com/lancecat/lancecat/query"
)

// resolve opens the dataset of at's branch and the version at names. A table declared but never
// written has no version: TableNotFound for a read at its latest, as the SDK expects of a table
// without data; a version that is not there is TableVersionNotFound (404).
func (h *Table) resolve(ctx context.Context, at catalog.ReadAt) (*lance.Dataset, *lance.Version, error) {
	t := h.t
	if at.Version != nil && at.Tag != nil {
		return nil, nil, nserr.InvalidInputf("give a version or a tag, not both")
	}
	ds, err := h.branchDataset(ctx, at.Branch)
	if err != nil {
		return nil, nil, err
	}
	var ver *lance.Version
	switch {
	case at.Version != nil:
		if *at.Version <= 0 {
			return nil, nil, nserr.InvalidInputf("version %d is not a table version", *at.Version)
		}
		ver, err = ds.OpenVersion(ctx, uint64(*at.Version))
		if errors.Is(err, lance.ErrVersionNotFound) || errors.Is(err, lance.ErrDatasetNotFound) {
			return nil, nil, nserr.TableVersionNotFoundf("table %s has no version %d", quoteID(t.ID), *at.Version)
		}
	case at.Tag != nil:
		ver, err = ds.OpenTag(ctx, *at.Tag)
	default:
		ver, err = h.latestOf(ctx, ds, at.Branch)
		if errors.Is(err, lance.ErrDatasetNotFound) {
			if derr := h.root.Declared(ctx, t); derr != nil {
				return nil, nil, derr
			}
			return nil, nil, nserr.TableNotFoundf("table %s is declared but has no data yet: write it first", quoteID(t.ID))
		}
	}
	if err != nil {
		return nil, nil, Err(t, err)
	}
	return ds, ver, nil
}

// writable is the dataset writes on branch go to (which must exist: branchDataset).
func (h *Table) writable(ctx context.Context, branch string) (*lance.Dataset, error) {
	return h.branchDataset(ctx, branch)
}

// Query runs req over the version at names and returns its rows (the caller Releases the
// reader) and the version they come from. req.At is set here.
func (h *Table) Query(ctx context.Context, at catalog.ReadAt, req query.Request) (array.RecordReader, uint64, error) {
	ds, ver, err := h.resolve(ctx, at)
	if err != nil {
		return nil, 0, err
	}
	req = capK(req, ver)
	rr, err := query.Run(ctx, ds, req)
	if err != nil {
		return nil, 0, Err(h.t, err)
	}
	return rr, ver.Number(), nil
}

// capK sets req to read ver and caps a vector search's top-k at ver's row count: a client asking
// for every row (k = i64::MAX) must not size the search's heap by its k.
func capK(req query.Request, ver *lance.Version) query.Request {
	req.At = ver
	if req.Vector == nil {
		return req
	}
	if st, err := ver.Stats(); err == nil && uint64(req.Vector.K) > st.NumRows {
		v := *req.Vector
		v.K = int(max(st.NumRows, 1))
		req.Vector = &v
	}
	return req
}

// Count counts the rows at the version at names matching filter ("" = every row) and returns
// the count and the version counted.
func (h *Table) Count(ctx context.Context, at catalog.ReadAt, filter string) (uint64, uint64, error) {
	ds, ver, err := h.resolve(ctx, at)
	if err != nil {
		return 0, 0, err
	}
	c, err := query.Count(ctx, ds, ver, filter)
	if err != nil {
		return 0, 0, Err(h.t, err)
	}
	return c, ver.Number(), nil
}

// Explain renders the plan of req at the version at names, without running it.
func (h *Table) Explain(ctx context.Context, at catalog.ReadAt, req query.Request, verbose bool) (string, error) {
	ds, ver, err := h.resolve(ctx, at)
	if err != nil {
		return "", err
	}
	req = capK(req, ver)
	s, err := query.Explain(ctx, ds, req, verbose)
	return s, Err(h.t, err)
}

// Analyze runs req at the version at names and renders its plan with rows and time per stage.
func (h *Table) Analyze(ctx context.Context, at catalog.ReadAt, req query.Request) (string, error) {
	ds, ver, err := h.resolve(ctx, at)
	if err != nil {
		return "", err
	}
	req = capK(req, ver)
	s, err := query.Analyze(ctx, ds, req)
	return s, Err(h.t, err)
}

func writeResult(r dml.Result) catalog.WriteResult {
	out := catalog.WriteResult{Inserted: r.Inserted, Updated: r.Updated, Deleted: r.Deleted}
	if r.Version != nil {
		out.Version = r.Version.Number()
	}
	return out
}

// Insert appends rs to branch (overwrite: replaces the branch's rows with rs).
func (h *Table) Insert(ctx context.Context, branch string, rs lance.RecordStream, overwrite bool) (catalog.WriteResult, error) {
	ds, err := h.writable(ctx, branch)
	if err != nil {
		return catalog.WriteResult{}, err
	}
	r, err := dml.Insert(ctx, ds, rs, overwrite)
	if err != nil {
		return catalog.WriteResult{}, Err(h.t, err)
	}
	return writeResult(r), nil
}

// Delete deletes the rows of branch matching predicate.
func (h *Table) Delete(ctx context.Context, branch, predicate string) (catalog.WriteResult, error) {
	if predicate == "" {
		return catalog.WriteResult{}, nserr.InvalidInputf("predicate is required: send \"true\" to delete every row")
	}
	ds, err := h.writable(ctx, branch)
	if err != nil {
		return catalog.WriteResult{}, err
	}
	r, err := dml.Delete(ctx, ds, predicate)
	if err != nil {
		return catalog.WriteResult{}, Err(h.t, err)
	}
	return writeResult(r), nil
}

// Update sets columns of the rows of branch matching predicate ("" = every row).
func (h *Table) Update(ctx context.Context, branch, predicate string, set []dml.Assignment) (catalog.WriteResult, error) {
	if len(set) == 0 {
		return catalog.WriteResult{}, nserr.InvalidInputf("updates must set at least one column")
	}
	ds, err := h.writable(ctx, branch)
	if err != nil {
		return catalog.WriteResult{}, err
	}
	r, err := dml.Update(ctx, ds, predicate, set)
	if err != nil {
		return catalog.WriteResult{}, Err(h.t, err)
	}
	return writeResult(r), nil
}

// Merge upserts rs into branch on the key m.On.
func (h *Table) Merge(ctx context.Context, branch string, rs lance.RecordStream, m dml.MergeInsert) (catalog.WriteResult, error) {
	if len(m.On) == 0 {
		return catalog.WriteResult{}, nserr.InvalidInputf("on: merge_insert needs at least one field to match rows on")
	}
	ds, err := h.writable(ctx, branch)
	if err != nil {
		return catalog.WriteResult{}, err
	}
	r, err := dml.Merge(ctx, ds, rs, m)
	if err != nil {
		return catalog.WriteResult{}, Err(h.t, err)
	}
	return writeResult(r), nil
}

// AddColumns adds columns computed from SQL expressions and returns the new version.
func (h *Table) AddColumns(ctx context.Context, branch string, cols []dml.NewColumn) (uint64, error) {
	if len(cols) == 0 {
		return 0, nserr.InvalidInputf("new_columns must name at least one column")
	}
	ds, err := h.writable(ctx, branch)
	if err != nil {
		return 0, err
	}
	ver, err := dml.AddColumns(ctx, ds, cols)
	if err != nil {
		return 0, Err(h.t, err)
	}
	return ver.Number(), nil
}

// AlterColumns renames columns, changes their nullability or (DataType) their type, which
// rewrites the column, and returns the new version. Alterations that rewrite nothing are the
// table layer's metadata-only commit; one with a DataType is dml's rewrite.
func (h *Table) AlterColumns(ctx context.Context, branch string, alts []dml.Alteration) (uint64, error) {
	t := h.t
	if len(alts) == 0 {
		return 0, nserr.InvalidInputf("alterations must name at least one column")
	}
	ds, err := h.branchDataset(ctx, branch)
	if err != nil {
		return 0, err
	}
	rewrites := false
	plain := make([]lance.ColumnAlteration, len(alts))
	for i, a := range alts {
		rewrites = rewrites || a.DataType != nil
		plain[i] = lance.ColumnAlteration{Path: a.Path, Rename: a.Rename, Nullable: a.Nullable}
	}
	var ver *lance.Version
	if rewrites {
		ver, err = dml.AlterColumns(ctx, ds, alts)
	} else {
		ver, err = ds.AlterColumns(ctx, plain...)
	}
	if err != nil {
		return 0, Err(t, err)
	}
	return ver.Number(), nil
}
