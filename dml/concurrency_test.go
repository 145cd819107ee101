package dml

import (
	"context"
	"fmt"
	"sync"
	"testing"

	"gotest.tools/v3/assert"

	nserr "github.com/lancecat/lancecat/errors"
	"github.com/lancecat/lancecat/lance"
	"github.com/lancecat/lancecat/storage"
)

// TestConcurrentWriters: 8 writers, each with its own Dataset handle on
// the same local root, mix appends, deletes and merges (updates of
// existing rows in shared fragments plus inserts). Commits are rebased as
// Lance rebases them (deletion vectors of the same fragment merged), so
// every write lands: at the end every row is there exactly once with the
// value its writer gave it, nothing lost, nothing duplicated.
func TestConcurrentWriters(t *testing.T) {
	const writers, ops = 8, 6
	ctx := context.Background()
	// Two fragments of 400 rows: every writer's deletes and merges hit a
	// fragment another writer changes at the same time.
	ds, dir := newTable(t, "2.1", rowsN(0, 400, "i"), rowsN(400, 800, "i"))
	_ = ds
	model := map[int64]row{}
	for _, r := range append(rowsN(0, 400, "i"), rowsN(400, 800, "i")...) {
		model[r.ID] = r
	}
	var mu sync.Mutex
	conflicts := 0
	// Every writer's rows are its own, so the final state does not depend
	// on the order of commits.
	apply := func(w, k int) (func(*lance.Dataset) (Result, error), func()) {
		base := int64(w*100 + k*10)
		switch k % 3 {
		case 0:
			var rows []row
			for i := int64(0); i < 10; i++ {
				rows = append(rows, row{ID: 10000 + base + i, Grp: fmt.Sprintf("a%d", w), Val: int32(k)})
			}
			return func(d *lance.Dataset) (Result, error) { return Insert(ctx, d, stream(t, rows...), false) },
				func() {
					for _, r := range rows {
						model[r.ID] = r
					}
				}
		case 1:
			return func(d *lance.Dataset) (Result, error) {
					return Delete(ctx, d, fmt.Sprintf("id >= %d AND id < %d", base, base+5))
				}, func() {
					for i := base; i < base+5; i++ {
						delete(model, i)
					}
				}
		default:
			var rows []row
			for i := int64(0); i < 5; i++ {
				rows = append(rows, row{ID: base + i, Grp: "u", Val: int32(1000 + w)})
			}
			rows = append(rows, row{ID: 20000 + base, Grp: fmt.Sprintf("m%d", w), Val: int32(k)})
			return func(d *lance.Dataset) (Result, error) {
					return Merge(ctx, d, stream(t, rows...), MergeInsert{On: []string{"id"}, WhenMatchedUpdateAll: true, WhenNotMatchedInsertAll: true})
				}, func() {
					for _, r := range rows {
						model[r.ID] = r
					}
				}
		}
	}
	var wg sync.WaitGroup
	errs := make(chan error, writers)
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			store, err := storage.NewFS(dir)
			if err != nil {
				errs <- err
				return
			}
			d := lance.NewDataset(store)
			for k := range ops {
				do, record := apply(w, k)
				for attempt := 0; ; attempt++ {
					_, err := do(d)
					if err == nil {
						break
					}
					// A commit that gave up under contention changed nothing;
					// the client retries it, as a LanceDB client retries a 409.
					if nserr.CodeOf(err) == nserr.ConcurrentModification && attempt < 5 {
						mu.Lock()
						conflicts++
						t.Logf("writer %d op %d: client retry after: %v", w, k, err)
						mu.Unlock()
						continue
					}
					errs <- fmt.Errorf("writer %d op %d: %w", w, k, err)
					return
				}
				mu.Lock()
				record()
				mu.Unlock()
			}
		}()
	}
	want := awaitWriters(t, &wg, errs, model)
	got := readAll(t, openTable(t, dir, "2.1"))
	assert.Equal(t, len(got), len(want))
	assert.DeepEqual(t, got, want)
	n, err := latest(t, ds).CountRows()
	assert.NilError(t, err)
	assert.Equal(t, n, uint64(len(want)))
	// How many commits were rebased over others (read version behind).
	rebased := 0
	for n := uint64(3); n <= latest(t, ds).Number(); n++ {
		v, err := ds.OpenVersion(ctx, n)
		assert.NilError(t, err)
		if v.Transaction().GetReadVersion() < n-1 {
			rebased++
		}
	}
	t.Logf("%d rows, %d commits rebased, %d client retries after ConcurrentModification", len(want), rebased, conflicts)
}
