package handlers

// The control-plane operations of our own API (spec/control.yaml): projects, warehouses,
// protection, recoverable drops, policies, events and identity. Until governance backs them they
// answer Unsupported like any unbacked operation; ids are still checked first.

import (
	"github.com/labstack/echo/v4"

	"github.com/lancecat/lancecat/gen/controlapi"
)

// Control implements the control-plane API.
type Control struct {
	idRules
}

var _ controlapi.ServerInterface = (*Control)(nil)

// NewControl returns the control-plane handlers.
func NewControl(opts Options) *Control {
	return &Control{idRules: New(opts).idRules}
}

// Register routes every control-plane operation on router.
func (h *Control) Register(router controlapi.EchoRouter) {
	controlapi.RegisterHandlers(router, h)
}

// CreateProject is POST /v1/projects.
func (h *Control) CreateProject(c echo.Context) error {
	return notBacked(c, "CreateProject")
}

// ListProjects is GET /v1/projects.
func (h *Control) ListProjects(c echo.Context, params controlapi.ListProjectsParams) error {
	return notBacked(c, "ListProjects")
}

// DescribeProject is GET /v1/projects/{project_id}.
func (h *Control) DescribeProject(c echo.Context, _ controlapi.ProjectId) error {
	return notBacked(c, "DescribeProject")
}

// DeleteProject is DELETE /v1/projects/{project_id}.
func (h *Control) DeleteProject(c echo.Context, _ controlapi.ProjectId, params controlapi.DeleteProjectParams) error {
	return notBacked(c, "DeleteProject")
}

// SetProjectPolicy is POST /v1/projects/{project_id}/policy/set.
func (h *Control) SetProjectPolicy(c echo.Context, _ controlapi.ProjectId) error {
	return notBacked(c, "SetProjectPolicy")
}

// DescribeProjectPolicy is POST /v1/projects/{project_id}/policy/describe.
func (h *Control) DescribeProjectPolicy(c echo.Context, _ controlapi.ProjectId) error {
	return notBacked(c, "DescribeProjectPolicy")
}

// DeleteProjectPolicy is POST /v1/projects/{project_id}/policy/delete.
func (h *Control) DeleteProjectPolicy(c echo.Context, _ controlapi.ProjectId) error {
	return notBacked(c, "DeleteProjectPolicy")
}

// CreateWarehouse is POST /v1/warehouses.
func (h *Control) CreateWarehouse(c echo.Context) error {
	return notBacked(c, "CreateWarehouse")
}

// ListWarehouses is GET /v1/warehouses.
func (h *Control) ListWarehouses(c echo.Context, params controlapi.ListWarehousesParams) error {
	return notBacked(c, "ListWarehouses")
}

// DescribeWarehouse is GET /v1/warehouses/{warehouse_id}.
func (h *Control) DescribeWarehouse(c echo.Context, _ controlapi.WarehouseId) error {
	return notBacked(c, "DescribeWarehouse")
}

// DeleteWarehouse is DELETE /v1/warehouses/{warehouse_id}.
func (h *Control) DeleteWarehouse(c echo.Context, _ controlapi.WarehouseId, params controlapi.DeleteWarehouseParams) error {
	return notBacked(c, "DeleteWarehouse")
}

// DeactivateWarehouse is POST /v1/warehouses/{warehouse_id}/deactivate.
func (h *Control) DeactivateWarehouse(c echo.Context, _ controlapi.WarehouseId) error {
	return notBacked(c, "DeactivateWarehouse")
}

// ActivateWarehouse is POST /v1/warehouses/{warehouse_id}/activate.
func (h *Control) ActivateWarehouse(c echo.Context, _ controlapi.WarehouseId) error {
	return notBacked(c, "ActivateWarehouse")
}

// ListWarehouseNamespaces is GET /v1/warehouses/{warehouse_id}/namespaces.
func (h *Control) ListWarehouseNamespaces(c echo.Context, _ controlapi.WarehouseId) error {
	return notBacked(c, "ListWarehouseNamespaces")
}

// CreateWarehouseNamespace is POST /v1/warehouses/{warehouse_id}/namespaces.
func (h *Control) CreateWarehouseNamespace(c echo.Context, _ controlapi.WarehouseId) error {
	return notBacked(c, "CreateWarehouseNamespace")
}

// DescribeTableProtection is GET /v1/table/{id}/protection.
func (h *Control) DescribeTableProtection(c echo.Context, _ controlapi.Id, params controlapi.DescribeTableProtectionParams) error {
	if _, err := h.pathID(c, params.Delimiter); err != nil {
		return err
	}
	return notBacked(c, "DescribeTableProtection")
}

// SetTableProtection is POST /v1/table/{id}/protection.
func (h *Control) SetTableProtection(c echo.Context, _ controlapi.Id, params controlapi.SetTableProtectionParams) error {
	if _, err := h.pathID(c, params.Delimiter); err != nil {
		return err
	}
	return notBacked(c, "SetTableProtection")
}

// DescribeNamespaceProtection is GET /v1/namespace/{id}/protection.
func (h *Control) DescribeNamespaceProtection(c echo.Context, _ controlapi.Id, params controlapi.DescribeNamespaceProtectionParams) error {
	if _, err := h.pathID(c, params.Delimiter); err != nil {
		return err
	}
	return notBacked(c, "DescribeNamespaceProtection")
}

// SetNamespaceProtection is POST /v1/namespace/{id}/protection.
func (h *Control) SetNamespaceProtection(c echo.Context, _ controlapi.Id, params controlapi.SetNamespaceProtectionParams) error {
	if _, err := h.pathID(c, params.Delimiter); err != nil {
		return err
	}
	return notBacked(c, "SetNamespaceProtection")
}

// UndropTable is POST /v1/table/{id}/undrop.
func (h *Control) UndropTable(c echo.Context, _ controlapi.Id, params controlapi.UndropTableParams) error {
	if _, err := h.pathID(c, params.Delimiter); err != nil {
		return err
	}
	return notBacked(c, "UndropTable")
}

// UndropNamespace is POST /v1/namespace/{id}/undrop.
func (h *Control) UndropNamespace(c echo.Context, _ controlapi.Id, params controlapi.UndropNamespaceParams) error {
	if _, err := h.pathID(c, params.Delimiter); err != nil {
		return err
	}
	return notBacked(c, "UndropNamespace")
}

// ListTableTasks is GET /v1/table/{id}/tasks.
func (h *Control) ListTableTasks(c echo.Context, _ controlapi.Id, params controlapi.ListTableTasksParams) error {
	if _, err := h.pathID(c, params.Delimiter); err != nil {
		return err
	}
	return notBacked(c, "ListTableTasks")
}

// SetTablePolicy is POST /v1/table/{id}/policy/set.
func (h *Control) SetTablePolicy(c echo.Context, _ controlapi.Id, params controlapi.SetTablePolicyParams) error {
	if _, err := h.pathID(c, params.Delimiter); err != nil {
		return err
	}
	return notBacked(c, "SetTablePolicy")
}

// DescribeTablePolicy is POST /v1/table/{id}/policy/describe.
func (h *Control) DescribeTablePolicy(c echo.Context, _ controlapi.Id, params controlapi.DescribeTablePolicyParams) error {
	if _, err := h.pathID(c, params.Delimiter); err != nil {
		return err
	}
	return notBacked(c, "DescribeTablePolicy")
}

// DeleteTablePolicy is POST /v1/table/{id}/policy/delete.
func (h *Control) DeleteTablePolicy(c echo.Context, _ controlapi.Id, params controlapi.DeleteTablePolicyParams) error {
	if _, err := h.pathID(c, params.Delimiter); err != nil {
		return err
	}
	return notBacked(c, "DeleteTablePolicy")
}

// SetNamespacePolicy is POST /v1/namespace/{id}/policy/set.
func (h *Control) SetNamespacePolicy(c echo.Context, _ controlapi.Id, params controlapi.SetNamespacePolicyParams) error {
	if _, err := h.pathID(c, params.Delimiter); err != nil {
		return err
	}
	return notBacked(c, "SetNamespacePolicy")
}

// DescribeNamespacePolicy is POST /v1/namespace/{id}/policy/describe.
func (h *Control) DescribeNamespacePolicy(c echo.Context, _ controlapi.Id, params controlapi.DescribeNamespacePolicyParams) error {
	if _, err := h.pathID(c, params.Delimiter); err != nil {
		return err
	}
	return notBacked(c, "DescribeNamespacePolicy")
}

// DeleteNamespacePolicy is POST /v1/namespace/{id}/policy/delete.
func (h *Control) DeleteNamespacePolicy(c echo.Context, _ controlapi.Id, params controlapi.DeleteNamespacePolicyParams) error {
	if _, err := h.pathID(c, params.Delimiter); err != nil {
		return err
	}
	return notBacked(c, "DeleteNamespacePolicy")
}

// ListEvents is GET /v1/events.
func (h *Control) ListEvents(c echo.Context, params controlapi.ListEventsParams) error {
	return notBacked(c, "ListEvents")
}

// DescribeMe is GET /v1/me.
func (h *Control) DescribeMe(c echo.Context) error {
	return notBacked(c, "DescribeMe")
}
