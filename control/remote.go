package control

// The doors the LanceDB remote client (lancedb.connect("db://…", {hostOverride})) calls beyond the
// Lance Namespace spec (issue 34): each decodes, makes one call into the package that owns the
// thing (table for a table's LSM state and prewarming, jobs for the task records) and encodes.

import (
	"github.com/labstack/echo/v4"

	"github.com/lancecat/lancecat/catalog"
	"github.com/lancecat/lancecat/gen/controlapi"
	"github.com/lancecat/lancecat/handlers"
	"github.com/lancecat/lancecat/ident"
	"github.com/lancecat/lancecat/table"
)

// withTable runs fn on the table the path names, loaded from the spec doors' catalog (a missing
// table is its 404); no catalog: 406 naming op.
func (h *Control) withTable(c echo.Context, op string, delimiter *string, fn func(catalog.Table) error) error {
	return h.withPathID(c, delimiter, func(id ident.ID) error {
		if h.spec.Catalog == nil {
			return handlers.NotBacked(c, op)
		}
		// The body (none, or a JSON object) carries nothing these doors use; it is read so a
		// request too large or too slow still fails as everywhere.
		if _, err := handlers.ReadBody(c); err != nil {
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
