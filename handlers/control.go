package handlers

// The control-plane operations of our own API (spec/control.yaml): projects, warehouses,
// protection, recoverable drops, policies, events and identity. Projects, warehouses, events and
// identity are backed by governance (control_projects.go, control_warehouses.go, control_events.go);
// the rest answer Unsupported like any unbacked operation, with ids still checked first.

import (
	"github.com/labstack/echo/v4"

	"github.com/lancecat/lancecat/gen/controlapi"
	"github.com/lancecat/lancecat/governance"
)

// Control implements the control-plane API.
type Control struct {
	idRules
	gov  *governance.Service
	drop governance.NamespaceDropper
}

var _ controlapi.ServerInterface = (*Control)(nil)

// NewControl returns the control-plane handlers.
func NewControl(opts Options) *Control {
	return &Control{idRules: New(opts).idRules}
}

// WithGovernance backs the project, warehouse, event and identity operations with gov; drop, if
// not nil, lets a warehouse delete cascade over its bound namespaces. Without it those operations
// answer Unsupported.
func (h *Control) WithGovernance(gov *governance.Service, drop governance.NamespaceDropper) *Control {
	h.gov, h.drop = gov, drop
	return h
}

// Register routes every control-plane operation on router.
func (h *Control) Register(router controlapi.EchoRouter) {
	controlapi.RegisterHandlers(router, h)
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
