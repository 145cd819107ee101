package handlers

// The control-plane operations of our own API (spec/control.yaml): projects, warehouses,
// protection, recoverable drops, policies, events and identity. Projects, warehouses, events,
// identity, protection, policies, the table trash (undrop, tasks) and the namespace undrop are
// backed by governance (control_projects.go, control_warehouses.go, control_events.go,
// control_governed.go, UndropNamespace below); the rest answer Unsupported like any unbacked
// operation, with ids still checked first.

import (
	"github.com/labstack/echo/v4"

	"github.com/lancecat/lancecat/gen/controlapi"
	"github.com/lancecat/lancecat/governance"
	"github.com/lancecat/lancecat/guards"
	"github.com/lancecat/lancecat/ident"
	"github.com/lancecat/lancecat/maintenance"
)

// Control implements the control-plane API.
type Control struct {
	idRules
	spec  *Server // the spec doors over the same options: what GET /v1/capabilities reports
	gov   *governance.Service
	drop  governance.NamespaceDropper
	roots governance.WarehouseRoots // the router: binds namespaces to warehouses (nil: 406)
	trash *governance.Trash
	maint *maintenance.Service // maintenance doors (control_maintenance.go); nil: 406
}

var _ controlapi.ServerInterface = (*Control)(nil)

// NewControl returns the control-plane handlers.
func NewControl(opts Options) *Control {
	spec := New(opts)
	return &Control{idRules: spec.idRules, spec: spec}
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

// WithTrash backs the undrop of tables and namespaces and the trash tasks of tables with trash.
func (h *Control) WithTrash(trash *governance.Trash) *Control {
	h.trash = trash
	return h
}

// GuardDeps are what the control doors' guards consult (guards.ControlChain): the delimiter and
// governance's authorizer. nil without governance: every backed door answers 406 itself.
func (h *Control) GuardDeps() *guards.Deps {
	if h.gov == nil {
		return nil
	}
	return &guards.Deps{Delimiter: h.delimiter, Authorizer: h.gov.Authorizer()}
}

// Register routes every control-plane operation on router.
func (h *Control) Register(router controlapi.EchoRouter) {
	controlapi.RegisterHandlers(router, h)
}

// UndropNamespace is POST /v1/namespace/{id}/undrop: rebuild a recoverably dropped namespace
// subtree. The answer names what came back, ids spelled with this server's delimiter.
func (h *Control) UndropNamespace(c echo.Context, _ controlapi.Id, params controlapi.UndropNamespaceParams) error {
	id, err := h.pathID(c, params.Delimiter)
	if err != nil {
		return err
	}
	if h.trash == nil {
		return notBacked(c, "UndropNamespace")
	}
	out, err := h.trash.UndropNamespace(c.Request().Context(), ctlPrincipal(c), id)
	if err != nil {
		return err
	}
	joined := func(ids []ident.ID) *[]string {
		s := make([]string, len(ids))
		for i, id := range ids {
			s[i] = id.Join(h.delimiter)
		}
		return &s
	}
	return writeJSON(c, controlapi.UndropResponse{Id: ctlNonNil(out.Root.ID), Namespaces: joined(out.Namespaces), Tables: joined(out.Tables)})
}
