package maintenance

import (
	"context"
	"fmt"
	"strings"

	"github.com/lancecat/lancecat/lance"
	"github.com/lancecat/lancecat/lance/index"
	"github.com/lancecat/lancecat/lance/index/tableindex"
	"github.com/lancecat/lancecat/lance/pb/tablepb"
)

// Index health, report only (the seed sweep's index_health): after
// optimize, per index, the findings an operator should see — rows still
// unindexed (searched by a flat scan), more delta segments than optimize
// keeps, and stats or files that cannot be read, reported as health
// UNKNOWN rather than taken as healthy. (A policy-declared index column
// with no index is not checked: policies have no index_columns knob.)

// Finding kinds.
const (
	FindingUnindexedRows   = "unindexed_rows"
	FindingTooManyDeltas   = "too_many_deltas"
	FindingStatsUnreadable = "stats_unreadable"
)

// Health values.
const (
	HealthDegraded = "DEGRADED"
	HealthUnknown  = "UNKNOWN"
)

// HealthFinding is one finding about one index.
type HealthFinding struct {
	Name               string `json:"name"`
	Column             string `json:"column,omitempty"`
	IndexType          string `json:"index_type,omitempty"`
	Kind               string `json:"kind"`
	Health             string `json:"health"`
	UnindexedRows      uint64 `json:"unindexed_rows,omitempty"`
	UnindexedFragments int    `json:"unindexed_fragments,omitempty"`
	Deltas             int    `json:"deltas,omitempty"`
	Note               string `json:"note,omitempty"`
}

// IndexHealth checks every user index of ds's latest version. An
// unreadable table is one UNKNOWN finding.
func IndexHealth(ctx context.Context, ds *lance.Dataset) []HealthFinding {
	v, err := ds.OpenLatest(ctx)
	if err != nil {
		return []HealthFinding{{Name: "*", Kind: FindingStatsUnreadable, Health: HealthUnknown, Note: err.Error()}}
	}
	var out []HealthFinding
	seen := map[string]bool{}
	for _, idx := range v.Indices() {
		name := idx.GetName()
		if seen[name] || strings.HasPrefix(name, "__lance") {
			continue
		}
		seen[name] = true
		base := HealthFinding{Name: name, IndexType: index.TypeName(idx.GetIndexDetails().GetTypeUrl())}
		if f := idx.GetFields(); len(f) == 1 {
			base.Column = lance.FieldPath(v.Fields(), f[0])
		}
		st, err := tableindex.IndexStats(v, name)
		if err != nil {
			f := base
			f.Kind, f.Health, f.Note = FindingStatsUnreadable, HealthUnknown, err.Error()
			out = append(out, f)
			continue
		}
		base.IndexType = st.Type
		segs, _ := tableindex.IndexSegments(v, name)
		if st.NumUnindexedRows > 0 {
			f := base
			f.Kind, f.Health, f.UnindexedRows = FindingUnindexedRows, HealthDegraded, st.NumUnindexedRows
			covered := map[uint32]bool{}
			for _, s := range segs {
				ids, _ := index.DecodeFragmentBitmap(s.GetFragmentBitmap())
				for _, id := range ids {
					covered[id] = true
				}
			}
			for _, fr := range v.Manifest().GetFragments() {
				if !covered[uint32(fr.GetId())] {
					f.UnindexedFragments++
				}
			}
			f.Note = "rows optimize did not add to the index are searched by a flat scan"
			out = append(out, f)
		}
		if st.NumIndices > tableindex.DefaultMaxIndexDeltas {
			f := base
			f.Kind, f.Health, f.Deltas = FindingTooManyDeltas, HealthDegraded, st.NumIndices
			f.Note = fmt.Sprintf("more than %d delta segments: every query searches each", tableindex.DefaultMaxIndexDeltas)
			out = append(out, f)
		}
		if note := readable(ctx, ds, v, segs); note != "" {
			f := base
			f.Kind, f.Health, f.Note = FindingStatsUnreadable, HealthUnknown, note
			out = append(out, f)
		}
	}
	return out
}

// readable opens the newest segment of an index with the reader lancecat
// has for its type ("" when it opens).
func readable(ctx context.Context, ds *lance.Dataset, v *lance.Version, segs []*tablepb.IndexMetadata) string {
	if len(segs) == 0 {
		return "no segments"
	}
	seg := segs[len(segs)-1]
	url := seg.GetIndexDetails().GetTypeUrl()
	switch {
	case url == index.VectorDetailsURL:
		r, err := tableindex.OpenVectorIndex(ctx, ds, v, seg)
		if err != nil {
			return "cannot open the vector index: " + err.Error()
		}
		r.Close()
	case index.TypeName(url) == string(index.BTree) || index.TypeName(url) == string(index.Bitmap) || index.TypeName(url) == string(index.LabelList):
		if _, err := tableindex.OpenScalarIndex(ctx, ds, v, seg); err != nil {
			return "cannot open the index: " + err.Error()
		}
	default:
		return fmt.Sprintf("lancecat cannot read the stats of a %s index", index.TypeName(url))
	}
	return ""
}
