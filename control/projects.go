package control

import (
	"github.com/labstack/echo/v4"

	"github.com/lancecat/lancecat/authz"
	"github.com/lancecat/lancecat/gen/controlapi"
	"github.com/lancecat/lancecat/governance"
	"github.com/lancecat/lancecat/handlers"
	"github.com/lancecat/lancecat/ident"
	"github.com/lancecat/lancecat/registry"
)

// principal is who the request acts as (set by the authentication middleware).
func ctlPrincipal(c echo.Context) authz.Principal {
	return authz.PrincipalFrom(c.Request().Context())
}

func ctlPage(limit *controlapi.Limit, token *controlapi.PageToken) governance.Page {
	var p governance.Page
	if limit != nil {
		p.Limit = int(*limit)
	}
	if token != nil {
		p.Token = *token
	}
	return p
}

func ctlOptional[T comparable](v T) *T {
	var zero T
	if v == zero {
		return nil
	}
	return &v
}

func projectModel(p registry.Project, warehouses []registry.Warehouse) controlapi.Project {
	out := controlapi.Project{
		Id: p.ID, CreatedBy: ctlOptional(p.CreatedBy), Protected: &p.Protected,
	}
	if !p.CreatedAt.IsZero() {
		out.CreatedAt = &p.CreatedAt
	}
	if warehouses != nil {
		summaries := make([]controlapi.WarehouseSummary, len(warehouses))
		for i, w := range warehouses {
			summaries[i] = controlapi.WarehouseSummary{Id: w.ID, Bucket: ctlOptional(w.Bucket), Status: ctlOptional(warehouseStatus(w))}
		}
		out.Warehouses = &summaries
	}
	return out
}

// CreateProject is POST /v1/projects.
func (h *Control) CreateProject(c echo.Context) error {
	if h.gov == nil {
		return handlers.NotBacked(c, "CreateProject")
	}
	var req controlapi.CreateProjectRequest
	if err := decodeControl(c, &req); err != nil {
		return err
	}
	rec, err := h.gov.CreateProject(c.Request().Context(), ctlPrincipal(c), req.Id, req.Protected != nil && *req.Protected)
	if err != nil {
		return err
	}
	return handlers.WriteJSON(c, projectModel(rec, []registry.Warehouse{}))
}

// ListProjects is GET /v1/projects.
func (h *Control) ListProjects(c echo.Context, params controlapi.ListProjectsParams) error {
	if h.gov == nil {
		return handlers.NotBacked(c, "ListProjects")
	}
	views, next, err := h.gov.ListProjects(c.Request().Context(), ctlPrincipal(c), ctlPage(params.Limit, params.PageToken))
	if err != nil {
		return err
	}
	out := controlapi.ProjectList{Projects: make([]controlapi.Project, len(views)), PageToken: ctlOptional(next)}
	for i, v := range views {
		out.Projects[i] = projectModel(v.Project, ctlNonNil(v.Warehouses))
	}
	return handlers.WriteJSON(c, out)
}

// DescribeProject is GET /v1/projects/{project_id}.
func (h *Control) DescribeProject(c echo.Context, id controlapi.ProjectId) error {
	if h.gov == nil {
		return handlers.NotBacked(c, "DescribeProject")
	}
	v, err := h.gov.DescribeProject(c.Request().Context(), ctlPrincipal(c), id)
	if err != nil {
		return err
	}
	return handlers.WriteJSON(c, projectModel(v.Project, ctlNonNil(v.Warehouses)))
}

// DeleteProject is DELETE /v1/projects/{project_id}.
func (h *Control) DeleteProject(c echo.Context, id controlapi.ProjectId, params controlapi.DeleteProjectParams) error {
	if h.gov == nil {
		return handlers.NotBacked(c, "DeleteProject")
	}
	rec, err := h.gov.DeleteProject(c.Request().Context(), ctlPrincipal(c), id, params.Force != nil && *params.Force)
	if err != nil {
		return err
	}
	return handlers.WriteJSON(c, projectModel(rec, nil))
}

// SetProjectProtection is POST /v1/projects/{project_id}/protection.
func (h *Control) SetProjectProtection(c echo.Context, id controlapi.ProjectId) error {
	if h.gov == nil {
		return handlers.NotBacked(c, "SetProjectProtection")
	}
	var req controlapi.SetProtectionRequest
	if err := decodeControl(c, &req); err != nil {
		return err
	}
	rec, err := h.gov.SetProjectProtection(c.Request().Context(), ctlPrincipal(c), id, req.Protected)
	if err != nil {
		return err
	}
	return handlers.WriteJSON(c, projectModel(rec, nil))
}

// SetProjectPolicy is POST /v1/projects/{project_id}/policy/set.
func (h *Control) SetProjectPolicy(c echo.Context, id controlapi.ProjectId) error {
	return h.setPolicy(c, "SetProjectPolicy", registry.KindProject, ident.ID{id})
}

// DescribeProjectPolicy is POST /v1/projects/{project_id}/policy/describe.
func (h *Control) DescribeProjectPolicy(c echo.Context, id controlapi.ProjectId) error {
	return h.describePolicy(c, "DescribeProjectPolicy", registry.KindProject, ident.ID{id})
}

// DeleteProjectPolicy is POST /v1/projects/{project_id}/policy/delete.
func (h *Control) DeleteProjectPolicy(c echo.Context, id controlapi.ProjectId) error {
	return h.deletePolicy(c, "DeleteProjectPolicy", registry.KindProject, ident.ID{id})
}

func ctlNonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}
