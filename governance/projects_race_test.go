package governance

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sync"
	"testing"
	"time"

	"gotest.tools/v3/assert"

	nserr "github.com/lancecat/lancecat/errors"
	"github.com/lancecat/lancecat/registry"
	"github.com/lancecat/lancecat/storage"
)

// These tests set the package's test hooks, so none of them runs in parallel.

// hookedBuckets runs onEnsure inside Ensure: the last step of a warehouse create before it writes
// its record, so a test can slip a project delete between the create's check and its write.
type hookedBuckets struct {
	LocalBuckets
	onEnsure func()
}

func (b hookedBuckets) Ensure(ctx context.Context, name string) (bool, error) {
	if b.onEnsure != nil {
		b.onEnsure()
	}
	return b.LocalBuckets.Ensure(ctx, name)
}

type raceEnv struct {
	svc     *Service
	store   *registry.Store
	buckets *hookedBuckets
	now     time.Time
}

func newRaceEnv(t *testing.T) *raceEnv {
	t.Helper()
	e := &raceEnv{
		store:   registry.NewStore(storage.NewMemory()),
		buckets: &hookedBuckets{LocalBuckets: LocalBuckets{Base: t.TempDir()}},
		now:     time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC),
	}
	svc, err := New(Options{Store: e.store, Buckets: e.buckets, Now: func() time.Time { return e.now }})
	assert.NilError(t, err)
	e.svc = svc
	return e
}

func (e *raceEnv) createProject(t *testing.T, id string) {
	t.Helper()
	_, err := e.svc.CreateProject(context.Background(), "", id, false)
	assert.NilError(t, err)
}

func (e *raceEnv) createWarehouse(id, project string) (registry.Warehouse, error) {
	return e.svc.CreateWarehouse(context.Background(), "", CreateWarehouse{ID: id, Project: project})
}

func (e *raceEnv) deleteProject(id string) (registry.Project, error) {
	return e.svc.DeleteProject(context.Background(), "", id, false)
}

// project reads project id's record; ok is false when there is none.
func (e *raceEnv) project(t *testing.T, id string) (registry.Project, bool) {
	t.Helper()
	rec, _, err := registry.Read[registry.Project](context.Background(), e.store, registry.ProjectKey(id))
	if errors.Is(err, registry.ErrNotFound) {
		return registry.Project{}, false
	}
	assert.NilError(t, err)
	return rec, true
}

func (e *raceEnv) warehouseExists(t *testing.T, id string) bool {
	t.Helper()
	_, _, err := registry.Read[registry.Warehouse](context.Background(), e.store, registry.WarehouseKey(id))
	if errors.Is(err, registry.ErrNotFound) {
		return false
	}
	assert.NilError(t, err)
	return true
}

// assertNoOrphans is the invariant: no warehouse record names a project without a record.
func (e *raceEnv) assertNoOrphans(t *testing.T) {
	t.Helper()
	listed, err := registry.List[registry.Warehouse](context.Background(), e.store, registry.WarehousesPrefix)
	assert.NilError(t, err)
	assert.Equal(t, len(listed.Skipped), 0)
	for _, w := range listed.Records {
		_, ok := e.project(t, w.Project)
		assert.Assert(t, ok, "warehouse %q outlives its project %q", w.ID, w.Project)
	}
}

func setHook[T any](t *testing.T, hook *T, fn T) {
	t.Helper()
	*hook = fn
	t.Cleanup(func() {
		var zero T
		*hook = zero
	})
}

// The delete runs between the warehouse's record write and its re-read: it lists the warehouse
// and refuses, and the create (seeing no mark left) goes through.
func TestProjectDeleteAfterWarehouseWrite(t *testing.T) {
	e := newRaceEnv(t)
	e.createProject(t, "p1")
	var delErr error
	setHook(t, &testHookWarehouseRecordWritten, func(string) { _, delErr = e.deleteProject("p1") })

	_, err := e.createWarehouse("w1", "p1")
	assert.NilError(t, err)
	assert.Equal(t, nserr.CodeOf(delErr), nserr.NamespaceNotEmpty)
	assert.ErrorContains(t, delErr, `project "p1" still holds warehouses w1`)

	rec, ok := e.project(t, "p1")
	assert.Assert(t, ok)
	assert.Assert(t, !rec.Deleting, "a refused delete lifts its mark")
	assert.Assert(t, rec.DeletingSince == nil)
	assert.Assert(t, e.warehouseExists(t, "w1"))
	e.assertNoOrphans(t)
}

// The delete marks and lists (no warehouse yet), then the create writes its record and re-reads:
// it sees the mark, deletes its record and answers 409; the delete then finishes.
func TestWarehouseWriteAfterProjectDeleteListed(t *testing.T) {
	e := newRaceEnv(t)
	e.createProject(t, "p1")
	listed, resume := make(chan struct{}), make(chan struct{})
	setHook(t, &testHookProjectDeleteListed, func(string) {
		close(listed)
		<-resume
	})
	var delErr error
	done := make(chan struct{})
	// The create's check has passed once Ensure runs; only then does the delete start.
	e.buckets.onEnsure = func() {
		go func() {
			defer close(done)
			_, delErr = e.deleteProject("p1")
		}()
		<-listed
	}

	_, err := e.createWarehouse("w1", "p1")
	assert.Equal(t, nserr.CodeOf(err), nserr.ConcurrentModification)
	assert.ErrorContains(t, err, `project "p1" is being deleted; retry`)
	assert.Assert(t, !e.warehouseExists(t, "w1"), "the create backs out of its record")
	_, statErr := os.Stat(e.buckets.Base + "/w1")
	assert.Assert(t, errors.Is(statErr, os.ErrNotExist), "a create that backs out removes the (empty) bucket it made: %v", statErr)

	close(resume)
	<-done
	assert.NilError(t, delErr)
	_, ok := e.project(t, "p1")
	assert.Assert(t, !ok)
	e.assertNoOrphans(t)
}

// The whole delete runs between the create's check and its write: the re-read finds no project,
// and the create backs out with the missing-project answer.
func TestProjectDeletedBeforeWarehouseWrite(t *testing.T) {
	e := newRaceEnv(t)
	e.createProject(t, "p1")
	var delErr error
	e.buckets.onEnsure = func() { _, delErr = e.deleteProject("p1") }

	_, err := e.createWarehouse("w1", "p1")
	assert.NilError(t, delErr)
	assert.Equal(t, nserr.CodeOf(err), nserr.NamespaceNotFound)
	assert.ErrorContains(t, err, `project "p1" does not exist: create it first with POST /v1/projects`)
	assert.Assert(t, !e.warehouseExists(t, "w1"))
	e.assertNoOrphans(t)
}

// A delete mark is visible to reads, shuts out a second delete and a create of the same id, makes
// warehouse creates refuse before they make a bucket, and is taken over once stale.
func TestProjectDeleteMark(t *testing.T) {
	ctx := context.Background()
	e := newRaceEnv(t)
	e.createProject(t, "p1")
	var second error
	setHook(t, &testHookProjectDeleteListed, func(string) {
		testHookProjectDeleteListed = nil // the second delete must not recurse
		_, second = e.deleteProject("p1")
	})
	_, err := e.deleteProject("p1")
	assert.NilError(t, err)
	assert.Equal(t, nserr.CodeOf(second), nserr.ConcurrentModification)
	assert.ErrorContains(t, second, `project "p1" is already being deleted; retry`)

	// A delete that died between its mark and its record delete.
	e.createProject(t, "p2")
	since := e.now
	_, err = registry.Mutate(ctx, e.store, registry.ProjectKey("p2"), func(r *registry.Project) error {
		r.Deleting, r.DeletingSince = true, &since
		return nil
	})
	assert.NilError(t, err)

	view, err := e.svc.DescribeProject(ctx, "", "p2")
	assert.NilError(t, err, "a project being deleted still exists")
	assert.Equal(t, view.ID, "p2")
	list, _, err := e.svc.ListProjects(ctx, "", Page{})
	assert.NilError(t, err)
	assert.Equal(t, len(list), 1)

	_, err = e.svc.CreateProject(ctx, "", "p2", false)
	assert.Equal(t, nserr.CodeOf(err), nserr.NamespaceAlreadyExists)
	assert.ErrorContains(t, err, "is being deleted")

	e.buckets.onEnsure = func() { t.Error("a create in a project being deleted made a bucket") }
	_, err = e.createWarehouse("w2", "p2")
	assert.Equal(t, nserr.CodeOf(err), nserr.ConcurrentModification)
	e.buckets.onEnsure = nil

	_, err = e.deleteProject("p2")
	assert.Equal(t, nserr.CodeOf(err), nserr.ConcurrentModification, "the mark is fresh")
	e.now = e.now.Add(projectDeleteLease)
	_, err = e.deleteProject("p2")
	assert.NilError(t, err, "a stale mark is taken over")
	_, ok := e.project(t, "p2")
	assert.Assert(t, !ok)
}

// A delete that takes over a stale mark and finds warehouses lifts it, and the project is usable.
func TestProjectDeleteTakeoverLiftsMark(t *testing.T) {
	ctx := context.Background()
	e := newRaceEnv(t)
	e.createProject(t, "p1")
	_, err := e.createWarehouse("w1", "p1")
	assert.NilError(t, err)
	since := e.now.Add(-projectDeleteLease)
	_, err = registry.Mutate(ctx, e.store, registry.ProjectKey("p1"), func(r *registry.Project) error {
		r.Deleting, r.DeletingSince = true, &since
		return nil
	})
	assert.NilError(t, err)

	_, err = e.deleteProject("p1")
	assert.Equal(t, nserr.CodeOf(err), nserr.NamespaceNotEmpty)
	rec, _ := e.project(t, "p1")
	assert.Assert(t, !rec.Deleting)
	_, err = e.createWarehouse("w2", "p1")
	assert.NilError(t, err)
}

// Concurrent deletes and warehouse creates on a fresh project, round after round: whatever wins,
// no warehouse outlives its project, and no mark is left behind. Run with -race.
func TestProjectDeleteWarehouseCreateStress(t *testing.T) {
	const rounds, creates = 8, 3
	e := newRaceEnv(t)
	for round := range rounds {
		project := fmt.Sprintf("p%d", round)
		e.createProject(t, project)
		start := make(chan struct{})
		var wg sync.WaitGroup
		var delErr error
		createErrs := make([]error, creates)
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			_, delErr = e.deleteProject(project)
		}()
		for i := range creates {
			wg.Add(1)
			go func() {
				defer wg.Done()
				<-start
				_, createErrs[i] = e.createWarehouse(fmt.Sprintf("w%d-%d", round, i), project)
			}()
		}
		close(start)
		wg.Wait()

		e.assertNoOrphans(t)
		rec, exists := e.project(t, project)
		if delErr == nil {
			assert.Assert(t, !exists, "round %d", round)
		} else {
			assert.Equal(t, nserr.CodeOf(delErr), nserr.NamespaceNotEmpty, "round %d: %v", round, delErr)
			assert.Assert(t, exists && !rec.Deleting, "round %d: a refused delete lifts its mark", round)
		}
		for i, err := range createErrs {
			id := fmt.Sprintf("w%d-%d", round, i)
			assert.Equal(t, e.warehouseExists(t, id), err == nil, "round %d: %s: %v", round, id, err)
			if err == nil {
				continue
			}
			switch nserr.CodeOf(err) {
			case nserr.NamespaceNotFound, nserr.ConcurrentModification:
			default:
				t.Errorf("round %d: %s: unexpected %v", round, id, err)
			}
		}
	}
}
