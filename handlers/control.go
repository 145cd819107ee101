package handlers

// The control-plane operations of our own API (spec/control.yaml): projects, warehouses,
// protection, recoverable drops, policies, events and identity. Projects, warehouses, events,
// identity, protection, policies and the table trash (undrop, tasks) are backed by governance
// (control_projects.go, control_warehouses.go, control_events.go, control_governed.go); the rest
// answer Unsupported like any unbacked operation, with ids still checked first.

import (
	"github.com/labstack/echo/v4"

	"github.com/lancecat/lancecat/gen/controlapi"
	"github.com/lancecat/lancecat/governance"
)

// Control implements the control-plane API.
type Control struct {
	idRules
	gov   *governance.Service
	drop  governance.NamespaceDropper
	roots governance.WarehouseRoots // the router: binds namespaces to warehouses (nil: 406)
	trash *governance.Trash
}

var _ controlapi.ServerInterface = (*Control)(nil)

// NewControl returns the control-plane handlers.
func NewControl(opts Options) *Control {
	return &Control{idRules: New(opts).idRules}
}

// WithGovernance backs the project, warehouse, event and identity operations with gov; drop, if
// not nil, lets a warehouse delete cascade over its bound namespaces and, when it also routes
// (governance.WarehouseRoots), backs the warehouse namespace creates. Without it those
// operations answer Unsupported.
func (h *Control) WithGovernance(gov *governance.Service, drop governance.NamespaceDropper) *Control {
	h.gov, h.drop = gov, drop
	h.roots, _ = drop.(governance.WarehouseRoots)
	return h
}

// WithTrash backs undrop and the trash tasks of tables with trash (control_governed.go).
func (h *Control) WithTrash(trash *governance.Trash) *Control {
	h.trash = trash
	return h
}

// Register routes every control-plane operation on router.
func (h *Control) Register(router controlapi.EchoRouter) {
	controlapi.RegisterHandlers(router, h)
}

// UndropNamespace is POST /v1/namespace/{id}/undrop.
func (h *Control) UndropNamespace(c echo.Context, _ controlapi.Id, params controlapi.UndropNamespaceParams) error {
	if _, err := h.pathID(c, params.Delimiter); err != nil {
		return err
	}
	return notBacked(c, "UndropNamespace")
}
