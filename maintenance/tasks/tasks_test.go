package tasks

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"testing"
	"time"

	"gotest.tools/v3/assert"

	"github.com/lancecat/lancecat/storage"
)

func newLog(t *testing.T, now *time.Time) *Log {
	t.Helper()
	fs, err := storage.NewFS(t.TempDir())
	assert.NilError(t, err)
	t.Cleanup(func() { fs.Close() })
	return &Log{Store: fs, Keep: 3, StaleAfter: time.Minute, Now: func() time.Time { return *now }}
}

// A task goes running → progress → succeeded, and a second reader (another replica reading the
// same root) sees every state as it is written.
func TestLifecycle(t *testing.T) {
	ctx := context.Background()
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	l := newLog(t, &now)
	reader := &Log{Store: l.Store, Now: l.Now}

	task, err := l.Start(ctx, Spec{Kind: "maintenance", Table: []string{"ns", "t"}, Origin: "door", Holder: "r1"})
	assert.NilError(t, err)
	recs, err := reader.List(ctx)
	assert.NilError(t, err)
	assert.Equal(t, len(recs), 1)
	assert.Equal(t, recs[0].State, StateRunning)
	assert.DeepEqual(t, recs[0].Table, []string{"ns", "t"})

	assert.NilError(t, task.Progress(ctx, map[string]any{"step": "compact"}))
	recs, _ = reader.List(ctx)
	assert.Equal(t, string(recs[0].Progress), `{"step":"compact"}`)

	assert.NilError(t, task.Finish(ctx, map[string]int{"fragments_after": 1}, nil))
	recs, _ = reader.List(ctx)
	assert.Equal(t, recs[0].State, StateSucceeded)
	assert.Equal(t, string(recs[0].Result), `{"fragments_after":1}`)
	assert.Assert(t, recs[0].FinishedAt != nil)

	now = now.Add(time.Second) // ids order by start time
	failed, err := l.Start(ctx, Spec{Kind: "index_build"})
	assert.NilError(t, err)
	assert.NilError(t, failed.Finish(ctx, nil, errors.New("boom")))
	recs, _ = reader.List(ctx)
	assert.Equal(t, recs[0].State, StateFailed)
	assert.Equal(t, recs[0].Error, "boom")
}

// The history keeps Keep tasks, newest first, and never prunes a running task that is still
// being updated; a running task nobody updated for StaleAfter is answered abandoned (its writer
// crashed) and may then be pruned.
func TestBoundedHistoryAndAbandoned(t *testing.T) {
	ctx := context.Background()
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	l := newLog(t, &now)
	running, err := l.Start(ctx, Spec{Kind: "k"})
	assert.NilError(t, err)
	for i := range 5 {
		now = now.Add(time.Second)
		tk, err := l.Start(ctx, Spec{Kind: "k"})
		assert.NilError(t, err)
		assert.NilError(t, tk.Finish(ctx, i, nil))
	}
	recs, err := l.List(ctx)
	assert.NilError(t, err)
	assert.Equal(t, len(recs), 3)
	assert.Equal(t, string(recs[0].Result), "4")
	assert.Equal(t, recs[len(recs)-1].ID, running.Record().ID, "a live running task is never pruned")

	now = now.Add(2 * time.Minute)
	recs, _ = l.List(ctx)
	assert.Equal(t, recs[len(recs)-1].State, StateAbandoned)
	_, err = l.Start(ctx, Spec{Kind: "k"})
	assert.NilError(t, err)
	recs, _ = l.List(ctx)
	for _, r := range recs {
		assert.Assert(t, r.ID != running.Record().ID, "an abandoned task is pruned like a finished one")
	}
	// The abandoned writer coming back cannot resurrect its pruned record.
	assert.Assert(t, errors.Is(running.Finish(ctx, nil, nil), ErrLost))
}

// A record replaced by someone else is not overwritten by the writer that started it, and torn
// or foreign objects under the prefix are skipped, not fatal.
func TestLostAndTorn(t *testing.T) {
	ctx := context.Background()
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	l := newLog(t, &now)
	tk, err := l.Start(ctx, Spec{Kind: "k"})
	assert.NilError(t, err)
	other, _ := json.Marshal(Record{ID: tk.Record().ID, Kind: "k", State: StateFailed})
	_, err = l.Store.Put(ctx, tk.key, bytes.NewReader(other), int64(len(other)))
	assert.NilError(t, err)
	assert.Assert(t, errors.Is(tk.Progress(ctx, 1), ErrLost))

	_, err = l.Store.Put(ctx, DefaultPrefix+"00000000000000000001-torn.json", bytes.NewReader([]byte("{")), 1)
	assert.NilError(t, err)
	_, err = l.Store.Put(ctx, DefaultPrefix+"README", bytes.NewReader([]byte("x")), 1)
	assert.NilError(t, err)
	recs, err := l.List(ctx)
	assert.NilError(t, err)
	assert.Equal(t, len(recs), 1)
	assert.Equal(t, recs[0].State, StateFailed)

	_, err = l.Start(ctx, Spec{})
	assert.ErrorContains(t, err, "kind")
}
