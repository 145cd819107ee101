package control

import (
	"github.com/labstack/echo/v4"

	"github.com/lancecat/lancecat/gen/controlapi"
	"github.com/lancecat/lancecat/governance"
	"github.com/lancecat/lancecat/handlers"
	"github.com/lancecat/lancecat/registry"
)

func warehouseStatus(w registry.Warehouse) string {
	if w.Active() {
		return registry.StatusActive
	}
	return registry.StatusDeactivated
}

func warehouseModel(w registry.Warehouse) controlapi.Warehouse {
	out := controlapi.Warehouse{
		Id: w.ID, Project: w.Project, Bucket: w.Bucket, RootUri: w.RootURI,
		Status: controlapi.WarehouseStatus(warehouseStatus(w)), Protected: &w.Protected,
	}
	if !w.CreatedAt.IsZero() {
		out.CreatedAt = &w.CreatedAt
	}
	return out
}

// CreateWarehouse is POST /v1/warehouses.
func (h *Control) CreateWarehouse(c echo.Context) error {
	if h.gov == nil {
		return handlers.NotBacked(c, "CreateWarehouse")
	}
	var req controlapi.CreateWarehouseRequest
	if err := decodeControl(c, &req); err != nil {
		return err
	}
	in := governance.CreateWarehouse{ID: req.Id, Project: req.Project, Protected: req.Protected != nil && *req.Protected}
	if req.Bucket != nil {
		in.Bucket = *req.Bucket
	}
	rec, err := h.gov.CreateWarehouse(c.Request().Context(), ctlPrincipal(c), in)
	if err != nil {
		return err
	}
	return handlers.WriteJSON(c, warehouseModel(rec))
}

// ListWarehouses is GET /v1/warehouses.
func (h *Control) ListWarehouses(c echo.Context, params controlapi.ListWarehousesParams) error {
	if h.gov == nil {
		return handlers.NotBacked(c, "ListWarehouses")
	}
	project := ""
	if params.Project != nil {
		project = *params.Project
	}
	recs, next, err := h.gov.ListWarehouses(c.Request().Context(), ctlPrincipal(c), project, ctlPage(params.Limit, params.PageToken))
	if err != nil {
		return err
	}
	out := controlapi.WarehouseList{Warehouses: make([]controlapi.Warehouse, len(recs)), PageToken: ctlOptional(next)}
	for i, w := range recs {
		out.Warehouses[i] = warehouseModel(w)
	}
	return handlers.WriteJSON(c, out)
}

// DescribeWarehouse is GET /v1/warehouses/{warehouse_id}.
func (h *Control) DescribeWarehouse(c echo.Context, id controlapi.WarehouseId) error {
	if h.gov == nil {
		return handlers.NotBacked(c, "DescribeWarehouse")
	}
	rec, err := h.gov.DescribeWarehouse(c.Request().Context(), ctlPrincipal(c), id)
	if err != nil {
		return err
	}
	return handlers.WriteJSON(c, warehouseModel(rec))
}

// DeleteWarehouse is DELETE /v1/warehouses/{warehouse_id}.
func (h *Control) DeleteWarehouse(c echo.Context, id controlapi.WarehouseId, params controlapi.DeleteWarehouseParams) error {
	if h.gov == nil {
		return handlers.NotBacked(c, "DeleteWarehouse")
	}
	opts := governance.DeleteWarehouse{
		Cascade:     params.Cascade != nil && *params.Cascade,
		PurgeBucket: params.PurgeBucket != nil && *params.PurgeBucket,
		Force:       params.Force != nil && *params.Force,
	}
	d, err := h.gov.DeleteWarehouse(c.Request().Context(), ctlPrincipal(c), id, opts, h.drop)
	if err != nil {
		return err
	}
	dropped := ctlNonNil(d.NamespacesDropped)
	return handlers.WriteJSON(c, controlapi.DeleteWarehouseResponse{
		Id: d.ID, Bucket: &d.Bucket, NamespacesDropped: &dropped, TuplesRevoked: &d.TuplesRevoked,
		BucketPurged: &d.BucketPurged, ObjectsPurged: &d.ObjectsPurged,
	})
}

// DeactivateWarehouse is POST /v1/warehouses/{warehouse_id}/deactivate.
func (h *Control) DeactivateWarehouse(c echo.Context, id controlapi.WarehouseId) error {
	return h.setWarehouseStatus(c, "DeactivateWarehouse", id, false)
}

// ActivateWarehouse is POST /v1/warehouses/{warehouse_id}/activate.
func (h *Control) ActivateWarehouse(c echo.Context, id controlapi.WarehouseId) error {
	return h.setWarehouseStatus(c, "ActivateWarehouse", id, true)
}

func (h *Control) setWarehouseStatus(c echo.Context, op, id string, active bool) error {
	if h.gov == nil {
		return handlers.NotBacked(c, op)
	}
	rec, err := h.gov.SetWarehouseStatus(c.Request().Context(), ctlPrincipal(c), id, active)
	if err != nil {
		return err
	}
	return handlers.WriteJSON(c, warehouseModel(rec))
}

// SetWarehouseProtection is POST /v1/warehouses/{warehouse_id}/protection.
func (h *Control) SetWarehouseProtection(c echo.Context, id controlapi.WarehouseId) error {
	if h.gov == nil {
		return handlers.NotBacked(c, "SetWarehouseProtection")
	}
	var req controlapi.SetProtectionRequest
	if err := decodeControl(c, &req); err != nil {
		return err
	}
	rec, err := h.gov.SetWarehouseProtection(c.Request().Context(), ctlPrincipal(c), id, req.Protected)
	if err != nil {
		return err
	}
	return handlers.WriteJSON(c, warehouseModel(rec))
}

// ListWarehouseNamespaces is GET /v1/warehouses/{warehouse_id}/namespaces.
func (h *Control) ListWarehouseNamespaces(c echo.Context, warehouseID controlapi.WarehouseId) error {
	if h.gov == nil {
		return handlers.NotBacked(c, "ListWarehouseNamespaces")
	}
	recs, err := h.gov.ListWarehouseNamespaces(c.Request().Context(), ctlPrincipal(c), warehouseID)
	if err != nil {
		return err
	}
	out := controlapi.WarehouseNamespaceList{Namespaces: make([]controlapi.WarehouseNamespace, len(recs))}
	for i, b := range recs {
		out.Namespaces[i] = bindingModel(b)
	}
	return handlers.WriteJSON(c, out)
}

// CreateWarehouseNamespace is POST /v1/warehouses/{warehouse_id}/namespaces.
func (h *Control) CreateWarehouseNamespace(c echo.Context, warehouseID controlapi.WarehouseId) error {
	if h.gov == nil || h.roots == nil {
		return handlers.NotBacked(c, "CreateWarehouseNamespace")
	}
	var req controlapi.CreateWarehouseNamespaceRequest
	if err := decodeControl(c, &req); err != nil {
		return err
	}
	var props map[string]string
	if req.Properties != nil {
		props = *req.Properties
	}
	b, err := h.gov.CreateWarehouseNamespace(c.Request().Context(), ctlPrincipal(c), h.roots, warehouseID, req.Namespace, props)
	if err != nil {
		return err
	}
	return handlers.WriteJSON(c, bindingModel(b))
}

func bindingModel(b registry.Binding) controlapi.WarehouseNamespace {
	return controlapi.WarehouseNamespace{Namespace: b.TopNamespace, WarehouseId: b.WarehouseID, RootUri: b.RootURI}
}
