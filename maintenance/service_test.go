package maintenance

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"sync"
	"testing"
	"time"

	"gotest.tools/v3/assert"

	"github.com/lancecat/lancecat/catalog"
	"github.com/lancecat/lancecat/governance"
	"github.com/lancecat/lancecat/ident"
	"github.com/lancecat/lancecat/internal/lease"
	"github.com/lancecat/lancecat/lance"
	"github.com/lancecat/lancecat/namespace"
	"github.com/lancecat/lancecat/storage"
)

// sweepRoot is a catalog root on local disk with n tables of a few small fragments each.
func sweepRoot(t testing.TB, n, appends int) (string, *namespace.Namespace) {
	t.Helper()
	ctx := context.Background()
	dir := t.TempDir()
	store, err := storage.NewFS(dir)
	assert.NilError(t, err)
	ns := namespace.New(store, namespace.Options{RootURI: dir})
	for i := range n {
		id := ident.ID{fmt.Sprintf("t%04d", i)}
		_, _, err := ns.CreateTable(ctx, id, catalog.NewTable{Schema: compactSchema, Rows: catalog.Records(compactSchema)})
		assert.NilError(t, err)
		tbl, err := ns.LoadTable(ctx, id)
		assert.NilError(t, err)
		ds, _ := tbl.Dataset()
		for a := range appends {
			_, err := ds.Append(ctx, idStream(t, int64(a*10), 10), lance.WriteOptions{})
			assert.NilError(t, err)
		}
	}
	return dir, ns
}

// createFilled creates table id in ns (compactSchema) and appends rows 0..rows-1 to it in one
// fragment; it returns the table.
func createFilled(t testing.TB, ns *namespace.Namespace, id ident.ID, rows int64) catalog.Table {
	t.Helper()
	ctx := context.Background()
	_, _, err := ns.CreateTable(ctx, id, catalog.NewTable{Schema: compactSchema})
	assert.NilError(t, err)
	tbl, err := ns.LoadTable(ctx, id)
	assert.NilError(t, err)
	ds, _ := tbl.Dataset()
	_, err = ds.Append(ctx, idStream(t, 0, rows), lance.WriteOptions{})
	assert.NilError(t, err)
	return tbl
}

// countingEvents is an EventSink that counts by type.
type countingEvents struct {
	mu sync.Mutex
	n  map[string]int
}

func (c *countingEvents) Emit(ev governance.Event) governance.Event {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.n == nil {
		c.n = map[string]int{}
	}
	c.n[ev.Type]++
	return ev
}

// TestSweepTwoReplicas: two services (two replicas: each its own namespace over the same root)
// sweep at once. Every table is worked exactly once (the lease, and the stamp re-read under it);
// the next sweeps find every table idle and record nothing.
func TestSweepTwoReplicas(t *testing.T) {
	ctx := context.Background()
	const tables = 12
	dir, _ := sweepRoot(t, tables, 4)
	events := &countingEvents{}
	replica := func(name string) *Service {
		store, err := storage.NewFS(dir)
		assert.NilError(t, err)
		return &Service{Catalog: namespace.New(store, namespace.Options{RootURI: dir}), Holder: name, Events: events, Metrics: NewMetrics()}
	}
	a, b := replica("a"), replica("b")
	var ra, rb SweepReport
	var ea, eb error
	var wg sync.WaitGroup
	wg.Add(2)
	go func() { defer wg.Done(); ra, ea = a.Sweep(ctx) }()
	go func() { defer wg.Done(); rb, eb = b.Sweep(ctx) }()
	wg.Wait()
	assert.NilError(t, ea)
	assert.NilError(t, eb)
	worked := map[string]int{}
	for _, r := range append(ra.Results, rb.Results...) {
		assert.Check(t, r.Outcome != OutcomeFailed, "%v: %s", r.ID, r.Reason)
		if r.Outcome == OutcomeWorked {
			worked[r.ID[0]]++
			assert.Equal(t, r.Report.Step(StepCompact).Status, StatusDone)
		}
	}
	assert.Equal(t, len(worked), tables)
	for id, n := range worked {
		assert.Equal(t, n, 1, "table %s worked %d times", id, n)
	}
	assert.Equal(t, events.n[EventTableCompacted], tables)
	for _, s := range []*Service{a, b, a} {
		rep, err := s.Sweep(ctx)
		assert.NilError(t, err)
		assert.Equal(t, rep.Counts[OutcomeIdle], tables, "%+v", rep.Results)
	}
	assert.Equal(t, events.n[EventTableCompacted], tables, "an idle sweep records nothing")
}

// TestLease: a live lease keeps others out and is renewed while held; an expired one (a crashed
// holder) is taken over by exactly one of two contenders; release lets the next one in.
func TestLease(t *testing.T) {
	ctx := context.Background()
	store, err := storage.NewFS(t.TempDir())
	assert.NilError(t, err)
	clock := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	var mu sync.Mutex
	now := func() time.Time { mu.Lock(); defer mu.Unlock(); return clock }
	advance := func(d time.Duration) { mu.Lock(); clock = clock.Add(d); mu.Unlock() }

	held, err := acquireLease(ctx, store, "crashed", time.Minute, now)
	assert.NilError(t, err)
	_, err = acquireLease(ctx, store, "b", time.Minute, now)
	assert.ErrorIs(t, err, ErrLeaseHeld)
	advance(30 * time.Second)
	assert.NilError(t, held.Renew(ctx)) // a slow holder renews
	advance(45 * time.Second)
	_, err = acquireLease(ctx, store, "b", time.Minute, now)
	assert.ErrorIs(t, err, ErrLeaseHeld, "renewed, so still held")
	advance(time.Hour) // the holder crashed: its lease expires
	var wins int
	var wg sync.WaitGroup
	var mu2 sync.Mutex
	var winner *lease.Lease
	for _, who := range []string{"b", "c"} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			l, err := acquireLease(ctx, store, who, time.Minute, now)
			if err == nil {
				mu2.Lock()
				wins++
				winner = l
				mu2.Unlock()
			}
		}()
	}
	wg.Wait()
	assert.Equal(t, wins, 1)
	assert.Check(t, held.Renew(ctx) != nil, "the crashed holder cannot renew a lease taken over")
	assert.NilError(t, winner.Release(ctx))
	_, err = acquireLease(ctx, store, "d", time.Minute, now)
	assert.NilError(t, err)
}

// TestIdleSweepCost measures a sweep over many idle tables on local disk (a note, not an
// assertion on time). LANCECAT_SWEEP_TABLES sets how many (default 40: making tables is the slow part).
func TestIdleSweepCost(t *testing.T) {
	n := 40
	if v, err := strconv.Atoi(os.Getenv("LANCECAT_SWEEP_TABLES")); err == nil {
		n = v
	}
	ctx := context.Background()
	_, ns := sweepRoot(t, n, 0)
	s := &Service{Catalog: ns}
	_, err := s.Sweep(ctx) // stamps every table
	assert.NilError(t, err)
	start := time.Now()
	rep, err := s.Sweep(ctx)
	assert.NilError(t, err)
	took := time.Since(start)
	assert.Equal(t, rep.Counts[OutcomeIdle], n)
	t.Logf("idle sweep over %d tables: %v (%v per table)", n, took, took/time.Duration(n))
}

// TestColdSweepReadsNoIdleManifest: a pass stamps the version it left with a ".nobase" marker
// when that manifest names no base path, so a replica's first sweep over idle tables reads no
// manifest for the shallow-clone pre-pass (its cache stays empty); a stamp without the marker
// (written by an older replica) still gets its manifest read.
func TestColdSweepReadsNoIdleManifest(t *testing.T) {
	ctx := context.Background()
	_, ns := sweepRoot(t, 3, 1)
	_, err := (&Service{Catalog: ns}).Sweep(ctx)
	assert.NilError(t, err)
	tables, err := (&Service{Catalog: ns}).allTables(ctx, nil)
	assert.NilError(t, err)
	for _, tb := range tables {
		v, _, noBase, _, err := readStampFull(ctx, tb.ds.Store())
		assert.NilError(t, err)
		assert.Assert(t, v > 0 && noBase, "%v: stamp %d noBase %v", tb.id, v, noBase)
	}

	cold := &Service{Catalog: ns}
	rep, err := cold.Sweep(ctx)
	assert.NilError(t, err)
	assert.Equal(t, rep.Counts[OutcomeIdle], 3)
	assert.Equal(t, len(cold.baseRefs), 0, "an idle table known not to be a clone had its manifest read")

	// An older replica's stamp: no marker, and no entry in the root's stamp index.
	v, _, _, _, err := readStampFull(ctx, tables[0].ds.Store())
	assert.NilError(t, err)
	assert.NilError(t, tables[0].ds.Store().Delete(ctx, fmt.Sprintf("%s%020d%s", stampPrefix, v, noBaseSuffix)))
	latest, err := tables[0].ds.LatestLocation(ctx)
	assert.NilError(t, err)
	assert.NilError(t, ns.RootBucket().Delete(ctx, stampIndexDir+indexKey(tables[0].table.Meta().Location, latest)))
	older := &Service{Catalog: ns}
	rep, err = older.Sweep(ctx)
	assert.NilError(t, err)
	assert.Equal(t, rep.Counts[OutcomeIdle], 3)
	assert.Equal(t, len(older.baseRefs), 1)
}
