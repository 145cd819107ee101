// Package tasks records long-running work on a table (a maintenance pass, an index build) where
// every replica sees it: one small JSON object per task on the table's own root, written with
// the store's conditional puts. A task is started (put-if-absent under a fresh key), updated with
// its progress and finished with its result (put-if-match on the ETag this writer holds, so a
// record is never overwritten by a writer that lost track of it), and listed newest first. The
// history is bounded: starting a task prunes finished tasks beyond Log.Keep.
//
// Nothing here is a scheduler: the caller does the work (under its own lease) and reports. A
// task whose writer died stays "running" in its record; List answers it as "abandoned" once it
// has not been updated for StaleAfter, so a reader never waits on a dead replica.
package tasks

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/lancecat/lancecat/storage"
)

// DefaultPrefix is where a table's tasks live under its root: beside the maintenance lease and
// stamps, a directory Lance never lists.
const DefaultPrefix = "_maintenance/tasks/"

// DefaultKeep is how many tasks a table's history holds.
const DefaultKeep = 20

// DefaultStaleAfter is how long a running task may go without an update before List calls it
// abandoned (a maintenance pass reports after every step; an index build should report at least
// this often).
const DefaultStaleAfter = time.Hour

// States of a task.
const (
	StateRunning   = "running"
	StateSucceeded = "succeeded"
	StateFailed    = "failed"
	// StateAbandoned is never stored: List answers it for a running task not updated for
	// StaleAfter (its writer crashed or was cut off).
	StateAbandoned = "abandoned"
)

// Record is one task as stored and listed. Progress and Result are the caller's JSON.
type Record struct {
	ID         string          `json:"id"`
	Kind       string          `json:"kind"`
	Table      []string        `json:"table,omitempty"`
	Origin     string          `json:"origin,omitempty"` // who asked: door, cli, sweep, …
	Holder     string          `json:"holder,omitempty"` // the replica doing it
	State      string          `json:"state"`
	StartedAt  time.Time       `json:"started_at"`
	UpdatedAt  time.Time       `json:"updated_at"`
	FinishedAt *time.Time      `json:"finished_at,omitempty"`
	Progress   json.RawMessage `json:"progress,omitempty"`
	Result     json.RawMessage `json:"result,omitempty"`
	Error      string          `json:"error,omitempty"`
	// StaleAfterMS, when set, replaces the log's StaleAfter for this record: a writer that
	// reports often (an index build's heartbeat) is called abandoned sooner after it dies.
	StaleAfterMS int64 `json:"stale_after_ms,omitempty"`
}

// Finished says whether the task ended (succeeded or failed).
func (r Record) Finished() bool { return r.State == StateSucceeded || r.State == StateFailed }

// Recorder is what a worker needs to record its tasks (*Log has it).
type Recorder interface {
	Start(ctx context.Context, spec Spec) (*Task, error)
}

// Spec describes a task being started.
type Spec struct {
	Kind   string
	Table  []string
	Origin string
	Holder string
	// StaleAfter, when set, is how long this task may go without an update before List calls
	// it abandoned (0: the log's StaleAfter).
	StaleAfter time.Duration
}

// Log is the task history under one root (a table's).
type Log struct {
	Store      storage.Bucket
	Prefix     string        // default DefaultPrefix
	Keep       int           // default DefaultKeep
	StaleAfter time.Duration // default DefaultStaleAfter
	Now        func() time.Time
}

func (l *Log) prefix() string {
	if l.Prefix == "" {
		return DefaultPrefix
	}
	return l.Prefix
}

func (l *Log) now() time.Time {
	if l.Now == nil {
		return time.Now().UTC()
	}
	return l.Now().UTC()
}

func (l *Log) keep() int {
	if l.Keep <= 0 {
		return DefaultKeep
	}
	return l.Keep
}

func (l *Log) staleAfter() time.Duration {
	if l.StaleAfter <= 0 {
		return DefaultStaleAfter
	}
	return l.StaleAfter
}

// staleFor is how long rec may go without an update while running: its own StaleAfterMS when
// its writer set one, else the log's.
func (l *Log) staleFor(rec Record) time.Duration {
	if rec.StaleAfterMS > 0 {
		return time.Duration(rec.StaleAfterMS) * time.Millisecond
	}
	return l.staleAfter()
}

// ErrLost is answered by Progress and Finish when the record changed under the writer (another
// writer replaced or pruned it): the task is no longer this writer's to report.
var ErrLost = errors.New("tasks: the task record changed under its writer")

// Task is one started task, owned by the writer that started it.
type Task struct {
	log  *Log
	key  string
	etag string
	rec  Record
}

// Record is the task as last written.
func (t *Task) Record() Record { return t.rec }

// Start records a new running task and prunes the history beyond Keep. The id is the start time
// (so keys list oldest first) and a random suffix (so two replicas never pick the same key).
func (l *Log) Start(ctx context.Context, spec Spec) (*Task, error) {
	if spec.Kind == "" {
		return nil, errors.New("tasks: a task needs a kind")
	}
	now := l.now()
	var rnd [6]byte
	if _, err := rand.Read(rnd[:]); err != nil {
		return nil, fmt.Errorf("tasks: %w", err)
	}
	id := fmt.Sprintf("%020d-%s", now.UnixNano(), hex.EncodeToString(rnd[:]))
	t := &Task{log: l, key: l.prefix() + id + ".json", rec: Record{
		ID: id, Kind: spec.Kind, Table: spec.Table, Origin: spec.Origin, Holder: spec.Holder,
		State: StateRunning, StartedAt: now, UpdatedAt: now, StaleAfterMS: spec.StaleAfter.Milliseconds(),
	}}
	body, err := json.Marshal(t.rec)
	if err != nil {
		return nil, fmt.Errorf("tasks: %w", err)
	}
	info, err := l.Store.PutIfAbsent(ctx, t.key, bytes.NewReader(body), int64(len(body)))
	if err != nil {
		return nil, fmt.Errorf("tasks: start: %w", err)
	}
	t.etag = info.ETag
	// Pruning is housekeeping: a failure leaves a longer history, never a wrong one.
	_ = l.prune(ctx, t.key)
	return t, nil
}

func (t *Task) write(ctx context.Context) error {
	t.rec.UpdatedAt = t.log.now()
	body, err := json.Marshal(t.rec)
	if err != nil {
		return fmt.Errorf("tasks: %w", err)
	}
	info, err := t.log.Store.PutIfMatch(context.WithoutCancel(ctx), t.key, bytes.NewReader(body), int64(len(body)), t.etag)
	if errors.Is(err, storage.ErrPreconditionFailed) {
		return fmt.Errorf("%w (%s)", ErrLost, t.rec.ID)
	}
	if err != nil {
		return fmt.Errorf("tasks: %w", err)
	}
	t.etag = info.ETag
	return nil
}

// Progress records v (any JSON value) as the task's progress so far.
func (t *Task) Progress(ctx context.Context, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Errorf("tasks: progress: %w", err)
	}
	t.rec.Progress = b
	return t.write(ctx)
}

// Finish records the task's result (any JSON value, may be nil) and ends it: failed when
// taskErr is not nil (its message kept), else succeeded. It writes even when ctx was cancelled
// (a cancelled pass still ends its record).
func (t *Task) Finish(ctx context.Context, result any, taskErr error) error {
	if result != nil {
		b, err := json.Marshal(result)
		if err != nil {
			return fmt.Errorf("tasks: result: %w", err)
		}
		t.rec.Result = b
	}
	t.rec.State = StateSucceeded
	if taskErr != nil {
		t.rec.State, t.rec.Error = StateFailed, taskErr.Error()
	}
	now := t.log.now()
	t.rec.FinishedAt = &now
	return t.write(ctx)
}

// List answers the tasks newest first; a running task not updated for StaleAfter is answered
// abandoned. A record that cannot be read or decoded is skipped (a torn write of a crashed
// writer, or one pruned between the listing and the read).
func (l *Log) List(ctx context.Context) ([]Record, error) {
	objs, err := storage.ListAll(ctx, l.Store, l.prefix())
	if err != nil {
		return nil, fmt.Errorf("tasks: list: %w", err)
	}
	now := l.now()
	out := make([]Record, 0, len(objs))
	for i := len(objs) - 1; i >= 0; i-- {
		if !strings.HasSuffix(objs[i].Key, ".json") {
			continue
		}
		data, _, err := storage.ReadAll(ctx, l.Store, objs[i].Key)
		if errors.Is(err, storage.ErrNotFound) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("tasks: read: %w", err)
		}
		var rec Record
		if json.Unmarshal(data, &rec) != nil || rec.ID == "" {
			continue
		}
		if rec.State == StateRunning && now.Sub(rec.UpdatedAt) > l.staleFor(rec) {
			rec.State = StateAbandoned
		}
		out = append(out, rec)
	}
	slices.SortStableFunc(out, func(a, b Record) int { return strings.Compare(b.ID, a.ID) })
	return out, nil
}

// prune deletes the oldest tasks beyond Keep, never the one just started and never a running
// task still being updated (only finished or abandoned ones).
func (l *Log) prune(ctx context.Context, current string) error {
	objs, err := storage.ListAll(ctx, l.Store, l.prefix())
	if err != nil {
		return err
	}
	excess := len(objs) - l.keep()
	for _, o := range objs { // oldest first
		if excess <= 0 {
			break
		}
		if o.Key == current || !strings.HasSuffix(o.Key, ".json") {
			continue
		}
		data, _, err := storage.ReadAll(ctx, l.Store, o.Key)
		if err != nil {
			continue
		}
		var rec Record
		if json.Unmarshal(data, &rec) == nil && rec.State == StateRunning && l.now().Sub(rec.UpdatedAt) <= l.staleFor(rec) {
			continue
		}
		if err := l.Store.Delete(ctx, o.Key); err != nil {
			return err
		}
		excess--
	}
	return nil
}
