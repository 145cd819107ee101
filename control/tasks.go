package control

import (
	"encoding/json"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/lancecat/lancecat/gen/controlapi"
	"github.com/lancecat/lancecat/handlers"
	"github.com/lancecat/lancecat/ident"
	"github.com/lancecat/lancecat/maintenance"
)

// ListTableTasks is GET /v1/table/{id}/tasks: the table's recorded tasks (maintenance passes,
// newest first) then the pending trash deadline of the id (maintenance.TaskList.Table). The guard
// chain authorizes it (read on the table); either source missing leaves its part out, both
// missing is 406.
func (h *Control) ListTableTasks(c echo.Context, _ controlapi.Id, params controlapi.ListTableTasksParams) error {
	return h.withPathID(c, params.Delimiter, func(id ident.ID) error {
		list := h.tasks()
		if list == nil {
			return handlers.NotBacked(c, "ListTableTasks")
		}
		ts, err := list.Table(c.Request().Context(), ctlPrincipal(c), id)
		if err != nil {
			return err
		}
		return handlers.WriteJSON(c, taskListModel(ts))
	})
}

// ListNamespaceTasks is GET /v1/namespace/{id}/tasks: the recorded tasks of every table in the
// namespace's subtree, newest first, then the pending trash deadlines of ids under it
// (maintenance.TaskList.Namespace). The guard chain authorizes it (read on the namespace, which
// its subtree inherits).
func (h *Control) ListNamespaceTasks(c echo.Context, _ controlapi.Id, params controlapi.ListNamespaceTasksParams) error {
	return h.withPathID(c, params.Delimiter, func(id ident.ID) error {
		list := h.tasks()
		if list == nil {
			return handlers.NotBacked(c, "ListNamespaceTasks")
		}
		ts, err := list.Namespace(c.Request().Context(), id)
		if err != nil {
			return err
		}
		return handlers.WriteJSON(c, taskListModel(ts))
	})
}

func taskListModel(ts []maintenance.Task) controlapi.TaskList {
	out := controlapi.TaskList{Tasks: make([]controlapi.Task, 0, len(ts))}
	for _, t := range ts {
		if t.Record != nil {
			out.Tasks = append(out.Tasks, recordTaskModel(t))
		} else if t.Trash != nil {
			out.Tasks = append(out.Tasks, trashTaskModel(t))
		}
	}
	return out
}

func trashTaskModel(t maintenance.Task) controlapi.Task {
	droppedAt, expiresAt := t.Trash.DroppedAt, t.Trash.ExpiresAt
	return controlapi.Task{
		Kind: t.Trash.Kind, Id: ctlNonNil(t.Trash.ID), Location: ctlOptional(t.Trash.Location), DroppedBy: ctlOptional(t.Trash.DroppedBy),
		DroppedAt: &droppedAt, ExpiresAt: &expiresAt, Expired: new(t.Expired),
	}
}

func recordTaskModel(t maintenance.Task) controlapi.Task {
	r := t.Record
	state := controlapi.TaskState(r.State)
	started, updated := r.StartedAt, r.UpdatedAt
	return controlapi.Task{
		Id: ctlNonNil(r.Table), Kind: r.Kind, TaskId: new(r.ID), State: &state,
		Origin: ctlOptional(r.Origin), Holder: ctlOptional(r.Holder), Error: ctlOptional(r.Error),
		StartedAt: &started, UpdatedAt: &updated, FinishedAt: utcOrNil(r.FinishedAt),
		Progress: jsonObject(r.Progress), Result: jsonObject(r.Result),
	}
}

func utcOrNil(t *time.Time) *time.Time {
	if t == nil {
		return nil
	}
	u := t.UTC()
	return &u
}

// jsonObject is a task's progress or result as the spec's object: a JSON object as is, any
// other JSON value under "value" (a kind may report a bare number or list).
func jsonObject(raw json.RawMessage) *map[string]any {
	if len(raw) == 0 {
		return nil
	}
	var m map[string]any
	if json.Unmarshal(raw, &m) == nil && m != nil {
		return &m
	}
	var v any
	if json.Unmarshal(raw, &v) != nil {
		return nil
	}
	m = map[string]any{"value": v}
	return &m
}
