package table

// Prewarming (the LanceDB remote client's prewarmIndex and prewarmData): load now what the next
// query would otherwise load on its first use, so that query does not pay for it.

import (
	"context"
	"fmt"

	"github.com/lancecat/lancecat/catalog"
	nserr "github.com/lancecat/lancecat/errors"
	"github.com/lancecat/lancecat/lance"
	"github.com/lancecat/lancecat/lance/index"
	"github.com/lancecat/lancecat/lance/index/tableindex"
	"github.com/lancecat/lancecat/lance/pb/tablepb"
)

// PrewarmIndex opens every segment of index name at t's latest version into the process's index
// reader cache (tableindex): the IVF centroids and codebooks, the BTREE pages, the BITMAP keys, the
// whole inverted index, decoded as a query opens them, so the next query that uses the index
// finds it there. A missing index is TableIndexNotFound; one of a type lancecat does not read is
// Unsupported, naming it (no query of ours would read it either).
func PrewarmIndex(ctx context.Context, t catalog.Table, name string) error {
	ds, v, err := latest(ctx, t)
	if err != nil {
		return err
	}
	segs, err := tableindex.IndexSegments(v, name)
	if err != nil {
		return indexErr(t.Meta(), err)
	}
	for _, seg := range segs {
		if err := prewarmSegment(ctx, ds, v, name, seg); err != nil {
			return indexErr(t.Meta(), err)
		}
	}
	return nil
}

func prewarmSegment(ctx context.Context, ds *lance.Dataset, v *lance.Version, name string, seg *tablepb.IndexMetadata) error {
	switch index.TypeName(seg.GetIndexDetails().GetTypeUrl()) {
	case "VECTOR":
		r, err := tableindex.OpenVectorIndex(ctx, ds, v, seg)
		if err != nil {
			return err
		}
		r.Close() // the caller's reference: the reader stays cached
	case "FTS":
		r, err := tableindex.OpenFTSIndex(ctx, ds, v, seg)
		if err != nil {
			return err
		}
		return r.Close()
	default:
		if _, err := tableindex.OpenScalarIndex(ctx, ds, v, seg); err != nil {
			return fmt.Errorf("prewarming index %q: %w", name, err)
		}
	}
	return nil
}

// PrewarmData warms what a scan of columns at t's latest version reads before its first data page:
// the decoded manifest (the process-wide manifest cache every open consults). lancecat keeps no
// cache of data pages, so the pages themselves are read from storage by each query; warming
// them here would be work thrown away. Columns must exist (none: every column): an unknown one is
// TableColumnNotFound, as a query naming it would be.
func PrewarmData(ctx context.Context, t catalog.Table, columns []string) error {
	_, v, err := latest(ctx, t)
	if err != nil {
		return err
	}
	if len(columns) == 0 {
		return nil
	}
	schema, err := v.ArrowSchema()
	if err != nil {
		return err
	}
	for _, c := range columns {
		if _, ok := schema.FieldsByName(c); !ok {
			return nserr.Newf(nserr.TableColumnNotFound, "column %q does not exist in table %s", c, t.Meta().ID)
		}
	}
	return nil
}

func latest(ctx context.Context, t catalog.Table) (*lance.Dataset, *lance.Version, error) {
	ds, err := t.Dataset()
	if err != nil {
		return nil, nil, err
	}
	v, err := ds.OpenLatest(ctx)
	if err != nil {
		return nil, nil, Err(t.Meta(), err)
	}
	return ds, v, nil
}
