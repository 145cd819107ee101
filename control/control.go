// Package control is the control plane's HTTP transport (spec/control.yaml): one thin method per
// control operation — projects, warehouses, access grants, events and identity, protection,
// policies, recoverable drops, tasks, maintenance runs, capabilities — that decodes the request,
// makes one call into the service that owns the operation (governance, its trash, maintenance)
// and encodes the answer. The rules are the services' and the guard chain's (guards.ControlChain,
// run by the server for every control door); an operation whose service is not configured
// answers Unsupported (406), with ids still checked first.
//
// The spec doors (Lance Namespace operations) are package handlers; the transport helpers both
// planes use (JSON answers, body reads, the 406, the path id) are handlers' one copy.
package control

import (
	"sync"

	"github.com/labstack/echo/v4"

	"github.com/lancecat/lancecat/authz"
	"github.com/lancecat/lancecat/catalog"
	"github.com/lancecat/lancecat/gen/controlapi"
	"github.com/lancecat/lancecat/governance"
	"github.com/lancecat/lancecat/guards"
	"github.com/lancecat/lancecat/handlers"
	"github.com/lancecat/lancecat/ident"
	"github.com/lancecat/lancecat/jobs"
	"github.com/lancecat/lancecat/maintenance"
)

// Options configure the control plane. What GET /v1/capabilities reports of the spec doors is
// read from the same catalog, authorizer and vendor the spec doors are built with.
type Options struct {
	// Delimiter joins id parts in paths; requests naming another one are refused.
	Delimiter string
	// Catalog backs the spec doors (nil: every spec operation is reported not backed) and says
	// which index types it builds (catalog.IndexTypes).
	Catalog catalog.Catalog
	// Authorizer gates the doors; the capabilities report whether it is enabled.
	Authorizer authz.Authorizer
	// Vendor is the spec doors' credential vendor; nil: no vending.
	Vendor Vendor
}

// Vendor is what the capabilities ask of the spec doors' credential vendor
// (handlers.CredentialVendor).
type Vendor interface {
	Vending() controlapi.CredentialVending
}

// Control implements the control-plane API.
type Control struct {
	delimiter string
	spec      Options // the spec doors' parts: what GET /v1/capabilities reports
	gov       *governance.Service
	drop      governance.NamespaceDropper
	roots     governance.WarehouseRoots // the router: binds namespaces to warehouses (nil: 406)
	trash     *governance.Trash
	maint     *maintenance.Service // maintenance doors (maintenance.go); nil: 406
	jobsOnce  sync.Once
	jobs      *jobs.Service // the job doors (remote.go), over maint's task records
}

var _ controlapi.ServerInterface = (*Control)(nil)

// New returns the control-plane handlers.
func New(opts Options) *Control {
	if opts.Delimiter == "" {
		opts.Delimiter = ident.DefaultDelimiter
	}
	return &Control{delimiter: opts.Delimiter, spec: opts}
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

// tasks is the task list of tables and namespaces over what backs it; nil when nothing does.
func (h *Control) tasks() *maintenance.TaskList {
	if h.trash == nil && h.maint == nil {
		return nil
	}
	return &maintenance.TaskList{Service: h.maint, Trash: h.trash}
}

// pathID is the route's {id} spelled with this server's delimiter.
func (h *Control) pathID(c echo.Context, delimiter *string) (ident.ID, error) {
	return handlers.PathID(c, delimiter, h.delimiter)
}

// GuardDeps are what the control doors' guards consult (guards.ControlChain): the delimiter and
// governance's authorizer. nil without governance: every backed door answers 406 itself.
func (h *Control) GuardDeps() *guards.Deps {
	if h.gov == nil {
		return nil
	}
	// The catalog answers existence for the remote dialect's table doors, authorized like the
	// spec's (guards.ControlDoor.Table); nil leaves a denial the denial.
	deps := &guards.Deps{Delimiter: h.delimiter, Authorizer: h.gov.Authorizer()}
	if h.spec.Catalog != nil {
		deps.Catalog = h.spec.Catalog
	}
	return deps
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
		return handlers.NotBacked(c, "UndropNamespace")
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
	return handlers.WriteJSON(c, controlapi.UndropResponse{Id: ctlNonNil(out.Root.ID), Namespaces: joined(out.Namespaces), Tables: joined(out.Tables)})
}
