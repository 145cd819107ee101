package control

// The doors the LanceDB remote client (lancedb.connect("db://…", {hostOverride})) calls beyond the
// Lance Namespace spec (issue 34): each decodes, makes one call into the package that owns the
// thing (table for a table's LSM state and prewarming, jobs for the task records) and encodes.

import (
	"context"

	"github.com/labstack/echo/v4"

	"github.com/lancecat/lancecat/authz"
	"github.com/lancecat/lancecat/catalog"
	"github.com/lancecat/lancecat/gen/controlapi"
	"github.com/lancecat/lancecat/handlers"
	"github.com/lancecat/lancecat/ident"
	"github.com/lancecat/lancecat/jobs"
	"github.com/lancecat/lancecat/maintenance/tasks"
	"github.com/lancecat/lancecat/table"
)

// withTable runs fn on the table the path names, loaded from the spec doors' catalog (a missing
// table is its 404); no catalog: 406 naming op. The body (none, or a JSON object) carries nothing
// these doors use; it is read so a request too large or too slow still fails as everywhere.
func (h *Control) withTable(c echo.Context, op string, delimiter *string, fn func(catalog.Table) error) error {
	return h.withTableBody(c, op, delimiter, nil, fn)
}

// withTableBody is withTable decoding the body into req first (nil: read and ignored).
func (h *Control) withTableBody(c echo.Context, op string, delimiter *string, req any, fn func(catalog.Table) error) error {
	return h.withPathID(c, delimiter, func(id ident.ID) error {
		if h.spec.Catalog == nil {
			return handlers.NotBacked(c, op)
		}
		if req != nil {
			if err := decodeControl(c, req); err != nil {
				return err
			}
		} else if _, err := handlers.ReadBody(c); err != nil {
			return err
		}
		t, err := h.spec.Catalog.LoadTable(c.Request().Context(), id)
		if err != nil {
			return err
		}
		return fn(t)
	})
}

// GetTableLsmWriteSpec is POST /v1/table/{id}/get_lsm_write_spec: null, no table has one here.
func (h *Control) GetTableLsmWriteSpec(c echo.Context, _ controlapi.Id, params controlapi.GetTableLsmWriteSpecParams) error {
	return h.withTable(c, "GetTableLsmWriteSpec", params.Delimiter, func(t catalog.Table) error {
		if err := table.LSMState(c.Request().Context(), t); err != nil {
			return err
		}
		return handlers.WriteJSON(c, controlapi.LsmWriteSpecResponse{})
	})
}

// GetTableLsmStats is POST /v1/table/{id}/get_lsm_stats: null, no table has an LSM write path.
func (h *Control) GetTableLsmStats(c echo.Context, _ controlapi.Id, params controlapi.GetTableLsmStatsParams) error {
	return h.withTable(c, "GetTableLsmStats", params.Delimiter, func(t catalog.Table) error {
		if err := table.LSMState(c.Request().Context(), t); err != nil {
			return err
		}
		return handlers.WriteJSON(c, controlapi.LsmStatsResponse{})
	})
}

// SetTableLsmWriteSpec is POST /v1/table/{id}/set_lsm_write_spec: 406, with why.
func (h *Control) SetTableLsmWriteSpec(c echo.Context, _ controlapi.Id, params controlapi.SetTableLsmWriteSpecParams) error {
	return h.lsmWrite(c, "SetTableLsmWriteSpec", table.LSMSetWriteSpec, params.Delimiter)
}

// UnsetTableLsmWriteSpec is POST /v1/table/{id}/unset_lsm_write_spec: 400, none is set.
func (h *Control) UnsetTableLsmWriteSpec(c echo.Context, _ controlapi.Id, params controlapi.UnsetTableLsmWriteSpecParams) error {
	return h.lsmWrite(c, "UnsetTableLsmWriteSpec", table.LSMUnsetWriteSpec, params.Delimiter)
}

// FlushTableLsm is POST /v1/table/{id}/flush_lsm: 400, no spec is set.
func (h *Control) FlushTableLsm(c echo.Context, _ controlapi.Id, params controlapi.FlushTableLsmParams) error {
	return h.lsmWrite(c, "FlushTableLsm", table.LSMFlush, params.Delimiter)
}

// CompactTableLsm is POST /v1/table/{id}/compact_lsm: 400, no spec is set.
func (h *Control) CompactTableLsm(c echo.Context, _ controlapi.Id, params controlapi.CompactTableLsmParams) error {
	return h.lsmWrite(c, "CompactTableLsm", table.LSMCompact, params.Delimiter)
}

func (h *Control) lsmWrite(c echo.Context, op, lsmOp string, delimiter *string) error {
	return h.withTable(c, op, delimiter, func(t catalog.Table) error {
		return table.LSMWrite(c.Request().Context(), t, lsmOp)
	})
}

// PrewarmTableIndex is POST /v1/table/{id}/index/{index_name}/prewarm: the index's segments into
// the index reader cache.
func (h *Control) PrewarmTableIndex(c echo.Context, _ controlapi.Id, indexName string, params controlapi.PrewarmTableIndexParams) error {
	return h.withTable(c, "PrewarmTableIndex", params.Delimiter, func(t catalog.Table) error {
		if err := table.PrewarmIndex(c.Request().Context(), t, indexName); err != nil {
			return err
		}
		return handlers.WriteJSON(c, struct{}{})
	})
}

// PrewarmTableData is POST /v1/table/{id}/page_cache/prewarm.
func (h *Control) PrewarmTableData(c echo.Context, _ controlapi.Id, params controlapi.PrewarmTableDataParams) error {
	var req controlapi.PrewarmDataRequest
	return h.withTableBody(c, "PrewarmTableData", params.Delimiter, &req, func(t catalog.Table) error {
		var cols []string
		if req.Columns != nil {
			cols = *req.Columns
		}
		if err := table.PrewarmData(c.Request().Context(), t, cols); err != nil {
			return err
		}
		return handlers.WriteJSON(c, struct{}{})
	})
}

// DiffTableBranch is POST /v1/table/{id}/branches/diff: 406 (table.ErrBranchDiff), for a table
// that exists.
func (h *Control) DiffTableBranch(c echo.Context, _ controlapi.Id, params controlapi.DiffTableBranchParams) error {
	return h.withTable(c, "DiffTableBranch", params.Delimiter, func(catalog.Table) error { return table.ErrBranchDiff() })
}

// CherryPickTableBranch is POST /v1/table/{id}/branches/cherry_pick: 406 (table.ErrCherryPick).
func (h *Control) CherryPickTableBranch(c echo.Context, _ controlapi.Id, params controlapi.CherryPickTableBranchParams) error {
	return h.withTable(c, "CherryPickTableBranch", params.Delimiter, func(catalog.Table) error { return table.ErrCherryPick() })
}

// CloneTable is POST /v1/table/{id}/clone (the clone's id): 406 (table.ErrClone).
func (h *Control) CloneTable(c echo.Context, _ controlapi.Id, params controlapi.CloneTableParams) error {
	return h.withPathID(c, params.Delimiter, func(ident.ID) error {
		if _, err := handlers.ReadBody(c); err != nil {
			return err
		}
		return table.ErrClone()
	})
}

// jobService is the job doors' service over the tasks the maintenance service lists; nil
// without it.
func (h *Control) jobService() *jobs.Service {
	if h.maint == nil {
		return nil
	}
	h.jobsOnce.Do(func() {
		h.jobs = &jobs.Service{Tasks: h.maint}
		if h.gov != nil {
			h.jobs.Authorizer = h.gov.Authorizer()
		}
	})
	return h.jobs
}

// ListJobs is POST /v1/jobs/list: a page of the jobs the caller may see, newest first.
func (h *Control) ListJobs(c echo.Context) error {
	svc := h.jobService()
	if svc == nil {
		return handlers.NotBacked(c, "ListJobs")
	}
	var req controlapi.ListJobsRequest
	if err := decodeControl(c, &req); err != nil {
		return err
	}
	token := ""
	if req.PageToken != nil {
		token = *req.PageToken
	}
	page, next, err := svc.List(c.Request().Context(), ctlPrincipal(c), token, jobs.DefaultPageSize)
	if err != nil {
		return err
	}
	out := controlapi.ListJobsResponse{Jobs: make([]controlapi.JobInfo, 0, len(page))}
	for _, j := range page {
		out.Jobs = append(out.Jobs, controlapi.JobInfo{JobId: j.Record.ID, Table: j.TableName(), JobType: j.Record.Kind,
			State: controlapi.JobInfoState(j.State), CreatedAtMillis: j.Record.StartedAt.UnixMilli()})
	}
	if next != "" {
		out.PageToken = &next
	}
	return handlers.WriteJSON(c, out)
}

// DescribeJob is POST /v1/jobs/describe.
func (h *Control) DescribeJob(c echo.Context) error {
	return h.job(c, "DescribeJob", (*jobs.Service).Describe)
}

// CancelJob is POST /v1/jobs/cancel: a finished job is answered as it is; a running one is 406.
func (h *Control) CancelJob(c echo.Context) error {
	return h.job(c, "CancelJob", (*jobs.Service).Cancel)
}

func (h *Control) job(c echo.Context, op string, fn func(*jobs.Service, context.Context, authz.Principal, string) (jobs.Job, error)) error {
	svc := h.jobService()
	if svc == nil {
		return handlers.NotBacked(c, op)
	}
	var req controlapi.JobRequest
	if err := decodeControl(c, &req); err != nil {
		return err
	}
	j, err := fn(svc, c.Request().Context(), ctlPrincipal(c), req.JobId)
	if err != nil {
		return err
	}
	out := jobModel(j)
	if j.State == jobs.StateDone {
		var tables jobs.Tables
		if h.spec.Catalog != nil {
			tables = h.spec.Catalog
		}
		res, err := jobs.Result(c.Request().Context(), tables, j)
		if err != nil {
			return err
		}
		out.Result = &res
	}
	return handlers.WriteJSON(c, out)
}

func jobModel(j jobs.Job) controlapi.JobDescription {
	r := j.Record
	spec := map[string]any{"table": ctlNonNil(r.Table)}
	if r.Origin != "" {
		spec["origin"] = r.Origin
	}
	if r.Holder != "" {
		spec["holder"] = r.Holder
	}
	if p := jsonObject(r.Progress); p != nil {
		spec["progress"] = *p
	}
	out := controlapi.JobDescription{JobId: r.ID, JobType: r.Kind, JobState: controlapi.JobDescriptionJobState(j.State),
		CreationMs: r.StartedAt.UnixMilli(), Spec: spec}
	if j.State == jobs.StateFailed {
		msg, retryable := j.Failure(), r.State == tasks.StateAbandoned
		out.Failure = &struct {
			Message   *string `json:"message,omitempty"`
			Retryable *bool   `json:"retryable,omitempty"`
		}{Message: &msg, Retryable: &retryable}
	}
	return out
}
