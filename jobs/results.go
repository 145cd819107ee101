package jobs

import (
	"context"
	"encoding/json"

	"github.com/lancecat/lancecat/catalog"
	"github.com/lancecat/lancecat/ident"
)

// Tables opens the tables a result is read against (the spec doors' catalog).
type Tables interface {
	LoadTable(ctx context.Context, id ident.ID) (catalog.Table, error)
}

// kindBackfill is mview.TaskKindBackfill: the job refreshColumnAsync starts (backfill_column).
const kindBackfill = "backfill"

// backfillRecord is what a backfill task records of itself (mview's backfillProgress and
// BackfillResult): the fragments it filled and the version its last checkpoint committed.
type backfillRecord struct {
	Filled  map[uint64]string `json:"filled"`
	Version uint64            `json:"version"`
	Commits int               `json:"commits"`
}

// Result is job j's terminal result as the remote client reads it: the record's own result,
// and for a backfill the client's RefreshColumnResult fields (rust/lancedb/src/function.rs:
// rows_assigned, rows_failed, rows_remaining, source_version, published_version), which its
// refreshColumnAsync job requires: the rows of the fragments the job filled, counted at the version
// it published, and the rows of the other fragments there, which it left for the next refresh.
// source_version is the version its first checkpoint read (published minus its commits: each
// checkpoint reads the version the one before committed; a concurrent writer's commit in between
// makes it older than that, never newer). tables nil: the record's result only.
func Result(ctx context.Context, tables Tables, j Job) (map[string]any, error) {
	out := map[string]any{}
	if len(j.Record.Result) > 0 {
		var m map[string]any
		if json.Unmarshal(j.Record.Result, &m) == nil && m != nil {
			out = m
		}
	}
	if j.Record.Kind != kindBackfill || tables == nil {
		return out, nil
	}
	var res, prog backfillRecord
	if json.Unmarshal(j.Record.Result, &res) != nil || json.Unmarshal(j.Record.Progress, &prog) != nil || res.Version == 0 {
		return out, nil
	}
	t, err := tables.LoadTable(ctx, j.Table())
	if err != nil {
		return nil, err
	}
	ds, err := t.Dataset()
	if err != nil {
		return nil, err
	}
	v, err := ds.OpenVersion(ctx, res.Version)
	if err != nil {
		return nil, err
	}
	var assigned, remaining uint64
	for _, f := range v.Fragments() {
		rows := f.PhysicalRows - f.DeletedRows
		if _, ok := prog.Filled[f.ID]; ok {
			assigned += rows
		} else {
			remaining += rows
		}
	}
	source := res.Version
	if uint64(res.Commits) < source {
		source -= uint64(res.Commits)
	}
	out["rows_assigned"], out["rows_failed"], out["rows_remaining"] = assigned, 0, remaining
	out["source_version"], out["published_version"] = source, res.Version
	return out, nil
}
