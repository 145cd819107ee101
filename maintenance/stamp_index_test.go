package maintenance

import (
	"context"
	"strings"
	"testing"

	"gotest.tools/v3/assert"

	"github.com/lancecat/lancecat/catalog"
	"github.com/lancecat/lancecat/ident"
	"github.com/lancecat/lancecat/lance"
	"github.com/lancecat/lancecat/namespace"
	"github.com/lancecat/lancecat/storage"
)

// indexEntries lists the root's stamp index.
func indexEntries(t *testing.T, ns *namespace.Namespace) []string {
	t.Helper()
	objs, err := storage.ListAll(context.Background(), ns.RootBucket(), stampIndexDir)
	assert.NilError(t, err)
	var out []string
	for _, o := range objs {
		out = append(out, strings.TrimPrefix(o.Key, stampIndexDir))
	}
	return out
}

// outcomes maps each table of a sweep that was not idle to its outcome.
func outcomes(rep SweepReport) map[string]string {
	out := map[string]string{}
	for _, r := range rep.Results {
		out[strings.Join(r.ID, ".")] = r.Outcome
	}
	return out
}

// TestStampIndex: the root's stamp index answers which tables are idle without their own stamps,
// yet never hides a change: a version written by a client that knows nothing of stamps (an SDK
// writer; here the dataset's own Append), a table dropped and made again at the same location up
// to the same version number (its manifests differ), and an index that is gone or older than the
// tables' own stamps (an older replica) all fall back to the table's own stamp.
func TestStampIndex(t *testing.T) {
	ctx := context.Background()
	_, ns := sweepRoot(t, 3, 2)
	rep, err := (&Service{Catalog: ns}).Sweep(ctx)
	assert.NilError(t, err)
	assert.Equal(t, rep.Counts[OutcomeWorked], 3, "%+v", rep.Counts)
	assert.Equal(t, len(indexEntries(t, ns)), 3, "one entry per table after its pass")

	// Idle from the index alone: with every table's own stamp deleted, only the index can say so.
	tables, err := (&Service{Catalog: ns}).allTables(ctx, nil)
	assert.NilError(t, err)
	own := map[string][]string{}
	for _, tb := range tables {
		_, _, keys, err := readStamp(ctx, tb.ds.Store())
		assert.NilError(t, err)
		own[strings.Join(tb.id, ".")] = keys
		for _, k := range keys {
			assert.NilError(t, tb.ds.Store().Delete(ctx, k))
		}
	}
	rep, err = (&Service{Catalog: ns}).Sweep(ctx)
	assert.NilError(t, err)
	assert.Equal(t, rep.Counts[OutcomeIdle], 3, "%+v", rep.Results)
	// The own stamps back (the index is a hint of them; the pass under the lease reads them).
	for _, tb := range tables {
		v, _, _, err := readStamp(ctx, tb.ds.Store())
		assert.NilError(t, err)
		assert.Equal(t, v, uint64(0))
		for _, k := range own[strings.Join(tb.id, ".")] {
			_, err := tb.ds.Store().Put(ctx, k, strings.NewReader(""), 0)
			assert.NilError(t, err)
		}
	}

	// A new version by a writer that writes no stamp: not idle.
	_, err = tables[0].ds.Append(ctx, idStream(t, 100, 10), lance.WriteOptions{})
	assert.NilError(t, err)
	rep, err = (&Service{Catalog: ns}).Sweep(ctx)
	assert.NilError(t, err)
	assert.Equal(t, rep.Counts[OutcomeIdle], 2, "%+v", rep.Results)
	assert.Equal(t, outcomes(rep)["t0000"], OutcomeInterval)

	// t0001 dropped and made again at its location, written up to the version its index entry
	// names: another table, not idle (it has no own stamp: worked).
	loc := tables[1].table.Meta().Location
	latest, err := tables[1].ds.LatestLocation(ctx)
	assert.NilError(t, err)
	_, err = ns.DropTable(ctx, ident.ID{"t0001"})
	assert.NilError(t, err)
	_, _, err = ns.CreateTable(ctx, ident.ID{"t0001"}, catalog.NewTable{Schema: compactSchema})
	assert.NilError(t, err)
	again, err := ns.LoadTable(ctx, ident.ID{"t0001"})
	assert.NilError(t, err)
	assert.Equal(t, again.Meta().Location, loc)
	ds, _ := again.Dataset()
	for {
		cur, err := ds.LatestLocation(ctx)
		assert.NilError(t, err)
		if cur.Version >= latest.Version {
			assert.Equal(t, cur.Version, latest.Version)
			break
		}
		_, err = ds.Append(ctx, idStream(t, 0, 10), lance.WriteOptions{})
		assert.NilError(t, err)
	}
	assert.Assert(t, indexKey(loc, latest) != "")
	assert.Assert(t, strings.Contains(strings.Join(indexEntries(t, ns), " "), indexKey(loc, latest)), "the old entry is still there")
	rep, err = (&Service{Catalog: ns}).Sweep(ctx)
	assert.NilError(t, err)
	assert.Equal(t, outcomes(rep)["t0001"], OutcomeWorked, "%+v", rep.Results)

	// A dropped table's entry is pruned by the next sweep.
	gone := createFilled(t, ns, ident.ID{"gone"}, 10)
	_, err = (&Service{Catalog: ns}).Sweep(ctx)
	assert.NilError(t, err)
	hasGone := func() bool {
		return strings.Contains(strings.Join(indexEntries(t, ns), " "), locationHash(gone.Meta().Location))
	}
	assert.Assert(t, hasGone())
	_, err = ns.DropTable(ctx, ident.ID{"gone"})
	assert.NilError(t, err)
	_, err = (&Service{Catalog: ns}).Sweep(ctx)
	assert.NilError(t, err)
	assert.Assert(t, !hasGone(), "%v", indexEntries(t, ns))

	// The index gone (a root swept only by older replicas): the own stamps say idle, and the
	// sweep writes the entries again.
	for _, k := range indexEntries(t, ns) {
		assert.NilError(t, ns.RootBucket().Delete(ctx, stampIndexDir+k))
	}
	rep, err = (&Service{Catalog: ns}).Sweep(ctx)
	assert.NilError(t, err)
	assert.Equal(t, rep.Counts[OutcomeIdle], 2, "%+v", rep.Results) // t0000 changed, in its interval
	assert.Equal(t, len(indexEntries(t, ns)), 2)
	rep, err = (&Service{Catalog: ns}).Sweep(ctx)
	assert.NilError(t, err)
	assert.Equal(t, rep.Counts[OutcomeIdle], 2, "%+v", rep.Results)
}
