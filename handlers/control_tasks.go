package handlers

import (
	"encoding/json"
	"slices"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/lancecat/lancecat/gen/controlapi"
	"github.com/lancecat/lancecat/ident"
	"github.com/lancecat/lancecat/maintenance/tasks"
	"github.com/lancecat/lancecat/registry"
)

// ListTableTasks is GET /v1/table/{id}/tasks: the table's recorded tasks (maintenance passes,
// newest first; maintenance.Service.TableTasks) then the pending trash deadline of the id. The
// guard chain authorizes it (read on the table); either source missing leaves its part out, both
// missing is 406.
func (h *Control) ListTableTasks(c echo.Context, _ controlapi.Id, params controlapi.ListTableTasksParams) error {
	return h.withPathID(c, params.Delimiter, func(id ident.ID) error {
		if h.trash == nil && h.maint == nil {
			return notBacked(c, "ListTableTasks")
		}
		ctx := c.Request().Context()
		out := controlapi.TaskList{Tasks: []controlapi.Task{}}
		if h.maint != nil {
			recs, err := h.maint.TableTasks(ctx, id)
			if err != nil {
				return err
			}
			out.Tasks = appendTaskRecords(out.Tasks, recs)
		}
		if h.trash != nil {
			trashed, err := h.trash.TableTasks(ctx, ctlPrincipal(c), id)
			if err != nil {
				return err
			}
			for _, t := range trashed {
				out.Tasks = append(out.Tasks, trashTaskModel(t.Trash, t.Expired))
			}
		}
		return writeJSON(c, out)
	})
}

// ListNamespaceTasks is GET /v1/namespace/{id}/tasks: the recorded tasks of every table in the
// namespace's subtree, newest first, then the pending trash deadlines of ids under it. The guard
// chain authorizes it (read on the namespace, which its subtree inherits).
func (h *Control) ListNamespaceTasks(c echo.Context, _ controlapi.Id, params controlapi.ListNamespaceTasksParams) error {
	return h.withPathID(c, params.Delimiter, func(id ident.ID) error {
		if h.trash == nil && h.maint == nil {
			return notBacked(c, "ListNamespaceTasks")
		}
		ctx := c.Request().Context()
		out := controlapi.TaskList{Tasks: []controlapi.Task{}}
		if h.maint != nil {
			recs, err := h.maint.NamespaceTasks(ctx, id)
			if err != nil {
				return err
			}
			out.Tasks = appendTaskRecords(out.Tasks, recs)
		}
		if h.trash != nil {
			listed, err := h.trash.ListTrash(ctx)
			if err != nil {
				return err
			}
			now := h.trash.Now()
			for _, rec := range listed.Records {
				if len(rec.ID) > len(id) && slices.Equal(rec.ID[:len(id)], id) {
					out.Tasks = append(out.Tasks, trashTaskModel(rec, rec.Expired(now)))
				}
			}
		}
		return writeJSON(c, out)
	})
}

func trashTaskModel(t registry.Trash, expired bool) controlapi.Task {
	droppedAt, expiresAt := t.DroppedAt, t.ExpiresAt
	return controlapi.Task{
		Kind: t.Kind, Id: ctlNonNil(t.ID), Location: ctlOptional(t.Location), DroppedBy: ctlOptional(t.DroppedBy),
		DroppedAt: &droppedAt, ExpiresAt: &expiresAt, Expired: ptr(expired),
	}
}

func appendTaskRecords(out []controlapi.Task, recs []tasks.Record) []controlapi.Task {
	for _, r := range recs {
		state := controlapi.TaskState(r.State)
		started, updated := r.StartedAt, r.UpdatedAt
		t := controlapi.Task{
			Id: ctlNonNil(r.Table), Kind: r.Kind, TaskId: ptr(r.ID), State: &state,
			Origin: ctlOptional(r.Origin), Holder: ctlOptional(r.Holder), Error: ctlOptional(r.Error),
			StartedAt: &started, UpdatedAt: &updated, FinishedAt: utcOrNil(r.FinishedAt),
			Progress: jsonObject(r.Progress), Result: jsonObject(r.Result),
		}
		out = append(out, t)
	}
	return out
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
