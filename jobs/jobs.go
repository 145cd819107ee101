// Package jobs answers the LanceDB remote client's job API (/v1/jobs/list, describe, cancel;
// lancedb rust/lancedb/src/remote/{db,job}.rs) over the task records lancecat already keeps: every
// long-running task it runs in the background (an index build, a computed column's backfill, a
// materialized view's refresh, a maintenance pass) is a record in its table's task log
// (maintenance/tasks), and a job is one such record. A job's id is its record's id, the one the
// door that started it answered (create_index, backfill_column, refresh) and GET
// /v1/table/{id}/tasks lists.
//
// Jobs are seen through their table: a caller sees the jobs of the tables whose tasks it may list
// (authz.TableTasks), and a job on a table it may not is answered like a job that does not exist.
package jobs

import (
	"context"
	"encoding/json"
	"net/http"
	"sync"

	"github.com/lancecat/lancecat/authz"
	nserr "github.com/lancecat/lancecat/errors"
	"github.com/lancecat/lancecat/guards"
	"github.com/lancecat/lancecat/ident"
	"github.com/lancecat/lancecat/maintenance/tasks"
)

// Source is where the task records are (maintenance.Service).
type Source interface {
	// NamespaceTasks is the task history of every table under ns, newest first.
	NamespaceTasks(ctx context.Context, ns ident.ID) ([]tasks.Record, error)
	// TableTasks is table id's task history, newest first (none for a missing table).
	TableTasks(ctx context.Context, id ident.ID) ([]tasks.Record, error)
}

// States as the remote client reads them (rust/lancedb/src/remote/job.rs JobState).
const (
	StateInProgress = "IN_PROGRESS"
	StateDone       = "DONE"
	StateFailed     = "FAILED"
)

// DefaultPageSize is how many jobs a list page holds.
const DefaultPageSize = 100

// maxLocated bounds the job id → table map Describe keeps.
const maxLocated = 4096

// Service answers the job doors.
type Service struct {
	Tasks      Source
	Authorizer authz.Authorizer // nil or disabled: every job is visible

	mu      sync.Mutex
	located map[string]ident.ID // job id → its table, learned from listings
}

// Job is one job: its record, and the state the client reads.
type Job struct {
	Record tasks.Record
	State  string
}

// Failure is why a failed job failed.
func (j Job) Failure() string {
	if j.Record.State == tasks.StateAbandoned {
		return "abandoned: the replica running it stopped reporting (it crashed or was cut off)"
	}
	return j.Record.Error
}

// Table is the job's table id.
func (j Job) Table() ident.ID { return ident.ID(j.Record.Table) }

func stateOf(r tasks.Record) string {
	switch r.State {
	case tasks.StateSucceeded:
		return StateDone
	case tasks.StateFailed, tasks.StateAbandoned:
		return StateFailed
	default:
		return StateInProgress
	}
}

func jobOf(r tasks.Record) Job { return Job{Record: r, State: stateOf(r)} }

// notFound is the answer for a job that does not exist, or is on a table the caller may not see.
func notFound(id string) error {
	return nserr.Transport(http.StatusNotFound, nserr.TableNotFound, "job "+quote(id)+" does not exist")
}

func quote(s string) string { b, _ := json.Marshal(s); return string(b) }

// List is one page of the jobs p may see, newest first, after token (the last job id of the
// previous page; "" from the start), at most limit (<= 0: DefaultPageSize); next is the token of
// the following page, "" after the last.
func (s *Service) List(ctx context.Context, p authz.Principal, token string, limit int) (page []Job, next string, err error) {
	if limit <= 0 || limit > DefaultPageSize {
		limit = DefaultPageSize
	}
	recs, err := s.Tasks.NamespaceTasks(ctx, ident.ID{})
	if err != nil {
		return nil, "", err
	}
	s.learn(recs)
	visible, err := s.visibleTables(ctx, p, recs)
	if err != nil {
		return nil, "", err
	}
	for _, r := range recs {
		if token != "" && r.ID >= token {
			continue // ids are time-ordered: newest first, so the next page is below the token
		}
		if !visible[ident.ID(r.Table).String()] {
			continue
		}
		if len(page) == limit {
			return page, page[len(page)-1].Record.ID, nil
		}
		page = append(page, jobOf(r))
	}
	return page, "", nil
}

// Describe is job id as p may see it.
func (s *Service) Describe(ctx context.Context, p authz.Principal, id string) (Job, error) {
	if id == "" {
		return Job{}, nserr.InvalidInputf("job_id is required")
	}
	r, err := s.find(ctx, id)
	if err != nil {
		return Job{}, err
	}
	if err := s.check(ctx, p, ident.ID(r.Table)); err != nil {
		return Job{}, guards.Hidden(err, notFound(id))
	}
	return jobOf(r), nil
}

// Cancel asks job id to stop. A finished job is left as it is (the client's "cancelling a
// finished operation is a no-op"); a running one cannot be stopped here: the background tasks
// run to their end under their leases (an index build, backfill or refresh is resumable or
// idempotent, so none is left half-done), and its record says how it ended.
func (s *Service) Cancel(ctx context.Context, p authz.Principal, id string) (Job, error) {
	j, err := s.Describe(ctx, p, id)
	if err != nil {
		return Job{}, err
	}
	if j.State != StateInProgress {
		return j, nil
	}
	return Job{}, nserr.Unsupportedf("cancelling job %s (%s) is not supported by this server: it runs to its end, "+
		"and its record (GET /v1/table/{id}/tasks, POST /v1/jobs/describe) says how it ended", quote(id), j.Record.Kind)
}

// find is job id's record: from the table it was last seen on, else from a listing of every
// table's tasks (which teaches where every job lives).
func (s *Service) find(ctx context.Context, id string) (tasks.Record, error) {
	s.mu.Lock()
	table, known := s.located[id]
	s.mu.Unlock()
	if known {
		recs, err := s.Tasks.TableTasks(ctx, table)
		if err != nil {
			return tasks.Record{}, err
		}
		for _, r := range recs {
			if r.ID == id {
				return r, nil
			}
		}
	}
	recs, err := s.Tasks.NamespaceTasks(ctx, ident.ID{})
	if err != nil {
		return tasks.Record{}, err
	}
	s.learn(recs)
	for _, r := range recs {
		if r.ID == id {
			return r, nil
		}
	}
	return tasks.Record{}, notFound(id)
}

func (s *Service) learn(recs []tasks.Record) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.located == nil || len(s.located)+len(recs) > maxLocated {
		s.located = make(map[string]ident.ID, min(len(recs), maxLocated))
	}
	for _, r := range recs {
		if len(s.located) == maxLocated {
			break
		}
		s.located[r.ID] = ident.ID(r.Table)
	}
}

func (s *Service) governed() bool { return s.Authorizer != nil && s.Authorizer.Enabled() }

func (s *Service) check(ctx context.Context, p authz.Principal, table ident.ID) error {
	if !s.governed() {
		return nil
	}
	return s.Authorizer.Check(ctx, p, authz.TableTasks, authz.TableObject(table))
}

// visibleTables is the set of the records' tables (ids joined by "$") p may list the tasks of.
func (s *Service) visibleTables(ctx context.Context, p authz.Principal, recs []tasks.Record) (map[string]bool, error) {
	seen := map[string]bool{}
	var objs []authz.Object
	var keys []string
	for _, r := range recs {
		k := ident.ID(r.Table).String()
		if seen[k] {
			continue
		}
		seen[k] = !s.governed()
		objs = append(objs, authz.TableObject(ident.ID(r.Table)))
		keys = append(keys, k)
	}
	if !s.governed() {
		return seen, nil
	}
	allowed, err := s.Authorizer.Filter(ctx, p, authz.TableTasks, objs)
	if err != nil {
		return nil, err
	}
	ok := map[authz.Object]bool{}
	for _, o := range allowed {
		ok[o] = true
	}
	for i, o := range objs {
		seen[keys[i]] = ok[o]
	}
	return seen, nil
}

// TableName is the job's table as the client lists it: its last id part.
func (j Job) TableName() string {
	if len(j.Record.Table) == 0 {
		return ""
	}
	return j.Record.Table[len(j.Record.Table)-1]
}
