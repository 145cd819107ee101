package control

import (
	"math"
	"time"

	"github.com/labstack/echo/v4"

	nserr "github.com/lancecat/lancecat/errors"
	"github.com/lancecat/lancecat/gen/controlapi"
	"github.com/lancecat/lancecat/handlers"
	"github.com/lancecat/lancecat/ident"
	"github.com/lancecat/lancecat/maintenance"
)

// WithMaintenance backs the maintenance doors with svc.
func (h *Control) WithMaintenance(svc *maintenance.Service) *Control {
	h.maint = svc
	return h
}

// maxOlderThanSeconds is the largest older_than_seconds a time.Duration holds.
const maxOlderThanSeconds = int64(math.MaxInt64 / time.Second)

// RunTableMaintenance is POST /v1/table/{id}/maintenance/run: one pass over the table now. A
// step that failed is in the report (status failed, with the reason), answered 200 like the
// steps that ran: the report is the answer to "what happened".
func (h *Control) RunTableMaintenance(c echo.Context, _ controlapi.Id, params controlapi.RunTableMaintenanceParams) error {
	return h.withPathID(c, params.Delimiter, func(id ident.ID) error {
		if h.maint == nil {
			return handlers.NotBacked(c, "RunTableMaintenance")
		}
		var req controlapi.MaintenanceRunRequest
		if err := decodeControl(c, &req); err != nil {
			return err
		}
		opts := maintenance.RunOptions{}
		if req.Steps != nil {
			opts.Steps = make([]string, 0, len(*req.Steps))
			for _, s := range *req.Steps {
				opts.Steps = append(opts.Steps, string(s))
			}
		}
		if req.DryRun != nil {
			opts.DryRun = *req.DryRun
		}
		if req.OlderThanSeconds != nil {
			// A Duration holds about 292 years; past that the product wraps (18446744074 s is
			// 0.29 s) and the cleanup would remove every version but the latest.
			if *req.OlderThanSeconds > maxOlderThanSeconds {
				return nserr.InvalidInputf("older_than_seconds must be at most %d (about 292 years), got %d", maxOlderThanSeconds, *req.OlderThanSeconds)
			}
			d := time.Duration(*req.OlderThanSeconds) * time.Second
			opts.OlderThan = &d
		}
		rep, err := h.maint.RunTable(c.Request().Context(), id, opts)
		if len(rep.Steps) == 0 && err != nil {
			return err
		}
		return handlers.WriteJSON(c, maintenanceReportModel(rep))
	})
}

func maintenanceReportModel(rep maintenance.RunReport) controlapi.MaintenanceRunReport {
	out := controlapi.MaintenanceRunReport{DryRun: rep.DryRun, Version: int64(rep.Version),
		Steps: make([]controlapi.MaintenanceStepReport, 0, len(rep.Steps))}
	opt := func(v int64) *int64 {
		if v == 0 {
			return nil
		}
		return &v
	}
	opti := func(v int) *int {
		if v == 0 {
			return nil
		}
		return &v
	}
	for _, s := range rep.Steps {
		sr := controlapi.MaintenanceStepReport{
			Step:            controlapi.MaintenanceStepReportStep(s.Step),
			Status:          controlapi.MaintenanceStepReportStatus(s.Status),
			DurationMs:      s.DurationMS,
			FragmentsBefore: opti(s.FragmentsBefore),
			FragmentsAfter:  opti(s.FragmentsAfter),
			RowsRewritten:   opt(int64(s.RowsRewritten)),
			BytesRead:       opt(int64(s.BytesRead)),
			BytesRewritten:  opt(int64(s.BytesRewritten)),
			VersionsRemoved: opti(s.VersionsRemoved),
			FilesRemoved:    opti(s.FilesRemoved),
			BytesRemoved:    opt(s.BytesRemoved),
			Version:         opt(int64(s.Version)),
		}
		if s.Reason != "" {
			r := s.Reason
			sr.Reason = &r
		}
		sr.IndicesRemapped = opti(s.IndicesRemapped)
		sr.SegmentsMerged = opti(s.SegmentsMerged)
		if len(s.Indices) > 0 {
			idx := make([]controlapi.MaintenanceIndexResult, 0, len(s.Indices))
			for _, r := range s.Indices {
				ir := controlapi.MaintenanceIndexResult{Name: r.Name, Type: r.Type, Status: controlapi.MaintenanceIndexResultStatus(r.Status),
					SegmentsBefore: r.SegmentsBefore, SegmentsAfter: r.SegmentsAfter, SegmentsMerged: opti(r.SegmentsMerged),
					UnindexedFragments: opti(r.UnindexedFragments), UnindexedRows: opt(int64(r.UnindexedRows))}
				if r.Reason != "" {
					why := r.Reason
					ir.Reason = &why
				}
				idx = append(idx, ir)
			}
			sr.Indices = &idx
		}
		out.Steps = append(out.Steps, sr)
	}
	if len(rep.IndexHealth) > 0 {
		str := func(v string) *string {
			if v == "" {
				return nil
			}
			return &v
		}
		health := make([]controlapi.MaintenanceIndexHealth, 0, len(rep.IndexHealth))
		for _, f := range rep.IndexHealth {
			health = append(health, controlapi.MaintenanceIndexHealth{Name: f.Name, Column: str(f.Column), IndexType: str(f.IndexType),
				Kind: f.Kind, Health: f.Health, UnindexedRows: opt(int64(f.UnindexedRows)), UnindexedFragments: opti(f.UnindexedFragments),
				Deltas: opti(f.Deltas), Note: str(f.Note)})
		}
		out.IndexHealth = &health
	}
	return out
}
