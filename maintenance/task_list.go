package maintenance

import (
	"context"

	"github.com/lancecat/lancecat/authz"
	"github.com/lancecat/lancecat/governance"
	"github.com/lancecat/lancecat/ident"
	"github.com/lancecat/lancecat/maintenance/tasks"
	"github.com/lancecat/lancecat/registry"
)

// TaskList is what GET /v1/table/{id}/tasks and /v1/namespace/{id}/tasks answer: the maintenance
// passes recorded in the tables' task logs (this package's, maintenance/tasks), newest first, then
// the trash deadlines pending (governance's trash, which this package's purge loop works off).
// It lives here because maintenance is the side that owns the task records and already reads the
// trash; governance does not know maintenance.
type TaskList struct {
	Service *Service          // the recorded passes; nil: none are listed
	Trash   *governance.Trash // the pending deadlines; nil: none are listed
}

// Task is one entry of a task list: a recorded pass (Record) or a pending trash deadline (Trash,
// with whether it passed).
type Task struct {
	Record  *tasks.Record
	Trash   *registry.Trash
	Expired bool
}

// Table is table id's task list. The trash part is gated like describing the table
// (governance.Trash.TableTasks, as p); the recorded passes are authorized by the door.
func (l *TaskList) Table(ctx context.Context, p authz.Principal, id ident.ID) ([]Task, error) {
	out := []Task{}
	if l.Service != nil {
		recs, err := l.Service.TableTasks(ctx, id)
		if err != nil {
			return nil, err
		}
		out = appendRecords(out, recs)
	}
	if l.Trash != nil {
		trashed, err := l.Trash.TableTasks(ctx, p, id)
		if err != nil {
			return nil, err
		}
		out = appendTrashed(out, trashed)
	}
	return out, nil
}

// Namespace is the task list of namespace ns's subtree: the recorded passes of every table in it,
// newest first, then the pending trash deadlines of ids under it. Authorization is the door's
// (read on the namespace covers its subtree).
func (l *TaskList) Namespace(ctx context.Context, ns ident.ID) ([]Task, error) {
	out := []Task{}
	if l.Service != nil {
		recs, err := l.Service.NamespaceTasks(ctx, ns)
		if err != nil {
			return nil, err
		}
		out = appendRecords(out, recs)
	}
	if l.Trash != nil {
		trashed, err := l.Trash.NamespaceTasks(ctx, ns)
		if err != nil {
			return nil, err
		}
		out = appendTrashed(out, trashed)
	}
	return out, nil
}

func appendRecords(out []Task, recs []tasks.Record) []Task {
	for i := range recs {
		out = append(out, Task{Record: &recs[i]})
	}
	return out
}

func appendTrashed(out []Task, trashed []governance.TableTask) []Task {
	for i := range trashed {
		out = append(out, Task{Trash: &trashed[i].Trash, Expired: trashed[i].Expired})
	}
	return out
}
