package mview

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"gotest.tools/v3/assert"

	"github.com/lancecat/lancecat/catalog"
	nserr "github.com/lancecat/lancecat/errors"
	"github.com/lancecat/lancecat/ident"
	"github.com/lancecat/lancecat/internal/testenv"
	"github.com/lancecat/lancecat/maintenance/tasks"
	"github.com/lancecat/lancecat/namespace"
	"github.com/lancecat/lancecat/storage"
)

// replicas are two Namespace+Service pairs on one root (two servers of one catalog), with table
// "sales" holding the two batches of sales() and view "v" over it, refreshed once.
func replicas(t *testing.T, sql string) (a, b *Service, nsA, nsB *namespace.Namespace) {
	t.Helper()
	return replicasOn(t, sql, fsRoot(t))
}

// fsRoot opens Namespaces on one root on local disk.
func fsRoot(t *testing.T) func() *namespace.Namespace {
	dir := t.TempDir()
	return func() *namespace.Namespace {
		store, err := storage.NewFS(dir)
		assert.NilError(t, err)
		return namespace.New(store, namespace.Options{RootURI: dir})
	}
}

// minioRoot opens Namespaces on one S3 root in MinIO (skips without LANCECAT_TEST_S3_*, which
// scripts/with-services.sh sets): the lease's conditional writes as S3 implements them.
func minioRoot(t *testing.T) func() *namespace.Namespace {
	cfg, bucket := testenv.S3Bucket(t)
	uri := "s3://" + bucket + "/root"
	return func() *namespace.Namespace {
		b, err := storage.Open(context.Background(), uri, cfg)
		assert.NilError(t, err)
		return namespace.New(b, namespace.Options{RootURI: uri})
	}
}

func replicasOn(t *testing.T, sql string, open func() *namespace.Namespace) (a, b *Service, nsA, nsB *namespace.Namespace) {
	t.Helper()
	ctx := context.Background()
	nsA, nsB = open(), open()
	schema, recs := sales(t)
	_, _, err := nsA.CreateTable(ctx, ident.ID{"sales"}, catalog.NewTable{Schema: schema, Rows: catalog.Records(schema, recs[:1]...)})
	assert.NilError(t, err)
	a = &Service{Catalog: nsA, Holder: "replica-a"}
	b = &Service{Catalog: nsB, Holder: "replica-b"}
	_, _, err = a.Create(ctx, ident.ID{"v"}, sql, false)
	assert.NilError(t, err)
	a.Wait()
	return a, b, nsA, nsB
}

// blockAt makes svc's refreshes stop before their commit until the returned release is called;
// entered receives once a refresh got there. Fault injection: a slow (or stalled) replica.
func blockAt(svc *Service) (entered chan struct{}, release func()) {
	entered, gate := make(chan struct{}, 4), make(chan struct{})
	svc.hook = func(point string) error {
		if point == "refresh.before_commit" {
			entered <- struct{}{}
			<-gate
		}
		return nil
	}
	return entered, func() { close(gate) }
}

// TestRefreshLeaseConflict: while replica A refreshes a view, replica B's refresh of it answers
// 409 (ConcurrentModification) naming A's task and replica, and starts nothing; once A ended, B's
// refresh runs.
func TestRefreshLeaseConflict(t *testing.T) {
	t.Run("fs", func(t *testing.T) { testRefreshLeaseConflict(t, fsRoot(t)) })
	t.Run("minio", func(t *testing.T) { testRefreshLeaseConflict(t, minioRoot(t)) })
}

func testRefreshLeaseConflict(t *testing.T, open func() *namespace.Namespace) {
	ctx := context.Background()
	a, b, _, nsB := replicasOn(t, "SELECT region, sum(qty) AS q FROM sales GROUP BY region", open)
	entered, release := blockAt(a)
	jobA, err := a.Refresh(ctx, ident.ID{"v"}, nil)
	assert.NilError(t, err)
	<-entered

	_, err = b.Refresh(ctx, ident.ID{"v"}, nil)
	var ne *nserr.Error
	assert.Assert(t, errors.As(err, &ne) && ne.Code == nserr.ConcurrentModification, "%v", err)
	assert.ErrorContains(t, err, jobA)
	assert.ErrorContains(t, err, "replica-a")
	assert.Equal(t, lastTask(t, nsB, ident.ID{"v"}).ID, jobA, "B recorded no task")

	release()
	a.Wait()
	assert.Equal(t, lastTask(t, nsB, ident.ID{"v"}).State, tasks.StateSucceeded)
	jobB, err := b.Refresh(ctx, ident.ID{"v"}, nil)
	assert.NilError(t, err)
	b.Wait()
	task := lastTask(t, nsB, ident.ID{"v"})
	assert.Equal(t, task.ID, jobB)
	assert.Equal(t, task.State, tasks.StateSucceeded, task.Error)
	assert.Equal(t, task.Holder, "replica-b")
}

// TestRefreshLeaseTakeover: replica A stalls mid-refresh (it stops renewing: its heartbeat never
// comes) after reading the source; the source gets an append; replica B, whose clock is past A's
// lease's staleness, takes the lease over and refreshes from the newer source. When A wakes, its
// older read must not land last: its commit is refused (the view moved), its task fails saying
// so, and the view holds B's rows, which equal a full recompute of the source now.
func TestRefreshLeaseTakeover(t *testing.T) {
	ctx := context.Background()
	sql := "SELECT region, count(*) AS n, sum(qty) AS q FROM sales GROUP BY region"
	a, b, nsA, nsB := replicas(t, sql)
	a.Heartbeat = time.Hour // stalled: never renews
	b.Now = func() time.Time { return time.Now().Add(time.Hour) }
	entered, release := blockAt(a)
	jobA, err := a.Refresh(ctx, ident.ID{"v"}, nil)
	assert.NilError(t, err)
	<-entered

	_, recs := sales(t)
	appendSales(t, nsB, recs[1])
	jobB, err := b.Refresh(ctx, ident.ID{"v"}, nil)
	assert.NilError(t, err)
	b.Wait()
	release()
	a.Wait()

	all, err := (&tasks.Log{Store: viewStore(t, nsA, ident.ID{"v"})}).List(ctx)
	assert.NilError(t, err)
	byID := map[string]tasks.Record{}
	for _, r := range all {
		byID[r.ID] = r
	}
	assert.Equal(t, byID[jobB].State, tasks.StateSucceeded, byID[jobB].Error)
	assert.Equal(t, byID[jobA].State, tasks.StateFailed)
	assert.Assert(t, strings.Contains(byID[jobA].Error, "was committed while this refresh worked"), byID[jobA].Error)

	_, _, err = a.Create(ctx, ident.ID{"full"}, sql, false)
	assert.NilError(t, err)
	a.Wait()
	assert.Equal(t, scanView(t, nsA, ident.ID{"v"}), scanView(t, nsA, ident.ID{"full"}))
	assert.Equal(t, scanView(t, nsA, ident.ID{"v"}), "eu,3,10;us,2,7;ap,1,4")

	// B released the lease: A refreshes again (incrementally: nothing new since B's).
	a.hook = nil
	_, err = a.Refresh(ctx, ident.ID{"v"}, nil)
	assert.NilError(t, err)
	a.Wait()
	res := refreshResult(t, nsA, ident.ID{"v"})
	assert.Equal(t, res.Mode, "incremental", res.Reason)
}

func viewStore(t *testing.T, ns *namespace.Namespace, id ident.ID) storage.Bucket {
	t.Helper()
	tbl, err := ns.LoadTable(context.Background(), id)
	assert.NilError(t, err)
	ds, err := tbl.Dataset()
	assert.NilError(t, err)
	return ds.Store()
}

// TestRefreshCrashBeforeCommit: a refresh cut off after writing its new group state and before
// its commit (fault hook: a crashed replica) leaves the view's rows and the state its head names
// as they were; the next refresh continues incrementally from that state (it equals a full
// recompute) and removes the stray state file.
func TestRefreshCrashBeforeCommit(t *testing.T) {
	ctx := context.Background()
	sql := "SELECT region, count(*) AS n, avg(price) AS p, max(qty) AS m FROM sales GROUP BY region"
	a, _, nsA, _ := replicas(t, sql)
	before := scanView(t, nsA, ident.ID{"v"})
	_, recs := sales(t)
	appendSales(t, nsA, recs[1])
	a.hook = func(point string) error {
		if point == "refresh.before_commit" {
			return errors.New("injected crash before the commit")
		}
		return nil
	}
	_, err := a.Refresh(ctx, ident.ID{"v"}, nil)
	assert.NilError(t, err)
	a.Wait()
	assert.Equal(t, lastTask(t, nsA, ident.ID{"v"}).State, tasks.StateFailed)
	assert.Equal(t, scanView(t, nsA, ident.ID{"v"}), before)
	states, err := storage.ListAll(ctx, viewStore(t, nsA, ident.ID{"v"}), stateDir+"state-")
	assert.NilError(t, err)
	assert.Equal(t, len(states), 2, "the head's state and the crashed refresh's stray")

	a.hook = nil
	_, err = a.Refresh(ctx, ident.ID{"v"}, nil)
	assert.NilError(t, err)
	a.Wait()
	res := refreshResult(t, nsA, ident.ID{"v"})
	assert.Equal(t, res.Mode, "incremental", res.Reason)
	assert.Equal(t, res.SourceRowsRead, int64(3))
	_, _, err = a.Create(ctx, ident.ID{"full"}, sql, false)
	assert.NilError(t, err)
	a.Wait()
	assert.Equal(t, scanView(t, nsA, ident.ID{"v"}), scanView(t, nsA, ident.ID{"full"}))
	states, err = storage.ListAll(ctx, viewStore(t, nsA, ident.ID{"v"}), stateDir+"state-")
	assert.NilError(t, err)
	assert.Equal(t, len(states), 1, "only the head's state is left")
}

// TestRefreshLeaseLost: replica A's refresh is slow (held before its commit) but alive; replica B,
// whose clock runs an hour ahead, sees A's lease as stale and takes it over. A's next heartbeat
// finds the lease taken: A's job is cancelled, commits nothing, its task fails saying it lost the
// lease, and it does not release B's lease.
func TestRefreshLeaseLost(t *testing.T) {
	t.Run("fs", func(t *testing.T) { testRefreshLeaseLost(t, fsRoot(t)) })
	t.Run("minio", func(t *testing.T) { testRefreshLeaseLost(t, minioRoot(t)) })
}

func testRefreshLeaseLost(t *testing.T, open func() *namespace.Namespace) {
	ctx := context.Background()
	a, b, nsA, _ := replicasOn(t, "SELECT region, sum(qty) AS q FROM sales GROUP BY region", open)
	a.Heartbeat = 5 * time.Millisecond
	b.Now = func() time.Time { return time.Now().Add(time.Hour) }
	entered, gate, lost := make(chan struct{}, 1), make(chan struct{}), make(chan struct{}, 1)
	a.hook = func(point string) error {
		switch point {
		case "refresh.before_commit":
			entered <- struct{}{}
			<-gate
		case "refresh.lease_lost":
			lost <- struct{}{}
		}
		return nil
	}
	entered2, releaseB := blockAt(b)
	jobA, err := a.Refresh(ctx, ident.ID{"v"}, nil)
	assert.NilError(t, err)
	<-entered
	// A renews every 5 ms, so B's take-over (read, then put-if-match) may lose to a renewal: that
	// is a 409 (A is alive); B asks again.
	var jobB string
	for try := 0; jobB == ""; try++ {
		jobB, err = b.Refresh(ctx, ident.ID{"v"}, nil)
		if err != nil {
			assert.Assert(t, try < 1000 && strings.Contains(err.Error(), "replica-a"), "%v", err)
		}
	}
	<-entered2
	<-lost // A's heartbeat found B's lease
	close(gate)
	a.Wait()
	// B still holds its lease: A did not release it, so a third refresh is refused.
	_, err = a.Refresh(ctx, ident.ID{"v"}, nil)
	assert.ErrorContains(t, err, "replica-b")
	releaseB()
	b.Wait()

	all, err := (&tasks.Log{Store: viewStore(t, nsA, ident.ID{"v"})}).List(ctx)
	assert.NilError(t, err)
	byID := map[string]tasks.Record{}
	for _, r := range all {
		byID[r.ID] = r
	}
	assert.Equal(t, byID[jobA].State, tasks.StateFailed)
	assert.Assert(t, strings.Contains(byID[jobA].Error, "lost the refresh lease"), byID[jobA].Error)
	assert.Equal(t, byID[jobB].State, tasks.StateSucceeded, byID[jobB].Error)
}

// TestRefreshLeaseOldRecord: during a rolling upgrade a refresh lease written by a replica from
// before internal/lease keeps refreshes out while it is fresh (409 naming its task and replica)
// and lets them in once released; the lease this replica leaves behind reads as released to the
// old replica.
func TestRefreshLeaseOldRecord(t *testing.T) {
	ctx := context.Background()
	a, _, nsA, _ := replicas(t, "SELECT region, sum(qty) AS q FROM sales GROUP BY region")
	store := viewStore(t, nsA, ident.ID{"v"})
	put := func(body string) {
		_, err := store.Put(ctx, refreshLeaseKey, strings.NewReader(body), int64(len(body)))
		assert.NilError(t, err)
	}
	old := `{"view":["v"],"holder":"old-replica","task":"task-old","updated_at":"` + time.Now().UTC().Format(time.RFC3339Nano) + `"`
	put(old + `}`)
	_, err := a.Refresh(ctx, ident.ID{"v"}, nil)
	var ne *nserr.Error
	assert.Assert(t, errors.As(err, &ne) && ne.Code == nserr.ConcurrentModification, "%v", err)
	assert.ErrorContains(t, err, "task-old on old-replica")

	put(old + `,"released":true}`)
	job, err := a.Refresh(ctx, ident.ID{"v"}, nil)
	assert.NilError(t, err)
	a.Wait()
	task := lastTask(t, nsA, ident.ID{"v"})
	assert.Equal(t, task.ID, job)
	assert.Equal(t, task.State, tasks.StateSucceeded, task.Error)

	data, _, err := storage.ReadAll(ctx, store, refreshLeaseKey)
	assert.NilError(t, err)
	var rec struct {
		View     []string `json:"view"`
		Holder   string   `json:"holder"`
		Task     string   `json:"task"`
		Released bool     `json:"released"`
	}
	assert.NilError(t, json.Unmarshal(data, &rec))
	assert.DeepEqual(t, rec.View, []string{"v"})
	assert.Equal(t, rec.Holder, "replica-a")
	assert.Equal(t, rec.Task, job)
	assert.Assert(t, rec.Released, "%s", data)
}
