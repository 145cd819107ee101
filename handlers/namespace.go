package handlers

// The namespace operations.

import (
	"github.com/labstack/echo/v4"

	"github.com/lancecat/lancecat/gen/nsapi"
)

// CreateNamespace is POST /v1/namespace/{id}/create.
func (s *Server) CreateNamespace(c echo.Context, _ nsapi.Id, params nsapi.CreateNamespaceParams) error {
	id, req, err := s.createNamespaceRequest(c, params.Delimiter)
	if err = s.backed(c, "CreateNamespace", err); err != nil {
		return err
	}
	opts, err := overwriteOptions(c, strOf(req.Mode))
	if err != nil {
		return err
	}
	p, err := s.catalog.CreateNamespace(c.Request().Context(), id, props(req.Properties), strOf(req.Mode), opts...)
	if err != nil {
		return err
	}
	return writeJSON(c, nsapi.CreateNamespaceResponse{Properties: &p})
}

// ListNamespaces is GET /v1/namespace/{id}/list.
func (s *Server) ListNamespaces(c echo.Context, _ nsapi.Id, params nsapi.ListNamespacesParams) error {
	id, err := s.pathID(c, params.Delimiter)
	if err = s.backed(c, "ListNamespaces", err); err != nil {
		return err
	}
	page, err := s.catalog.ListNamespaces(c.Request().Context(), id, tokenOf(params.PageToken), limitOf(params.Limit))
	if err != nil {
		return err
	}
	return writeJSON(c, nsapi.ListNamespacesResponse{Namespaces: orEmpty(page.Names), PageToken: pageToken(page.NextToken)})
}

// DescribeNamespace is POST /v1/namespace/{id}/describe.
func (s *Server) DescribeNamespace(c echo.Context, _ nsapi.Id, params nsapi.DescribeNamespaceParams) error {
	var req nsapi.DescribeNamespaceRequest
	id, err := s.decodeRequest(c, params.Delimiter, &req)
	if err = s.backed(c, "DescribeNamespace", err); err != nil {
		return err
	}
	p, err := s.catalog.DescribeNamespace(c.Request().Context(), id)
	if err != nil {
		return err
	}
	return writeJSON(c, nsapi.DescribeNamespaceResponse{Properties: &p})
}

// DropNamespace is POST /v1/namespace/{id}/drop.
func (s *Server) DropNamespace(c echo.Context, _ nsapi.Id, params nsapi.DropNamespaceParams) error {
	id, req, err := s.dropNamespaceRequest(c, params.Delimiter)
	if err != nil {
		return err
	}
	opts, err := forceOptions(c)
	if err = s.backed(c, "DropNamespace", err); err != nil {
		return err
	}
	if opts, err = purgeOptions(c, opts); err != nil {
		return err
	}
	p, err := s.catalog.DropNamespace(c.Request().Context(), id, strOf(req.Mode), strOf(req.Behavior), opts...)
	if err != nil {
		return err
	}
	resp := nsapi.DropNamespaceResponse{}
	if p != nil {
		resp.Properties = &p
	}
	return writeJSON(c, resp)
}

// NamespaceExists is POST /v1/namespace/{id}/exists.
func (s *Server) NamespaceExists(c echo.Context, _ nsapi.Id, params nsapi.NamespaceExistsParams) error {
	var req nsapi.NamespaceExistsRequest
	id, err := s.decodeRequest(c, params.Delimiter, &req)
	if err = s.backed(c, "NamespaceExists", err); err != nil {
		return err
	}
	return writeExists(c, s.catalog.NamespaceExists(c.Request().Context(), id))
}

// orEmpty makes an empty listing encode as [] (the clients require the field).
func orEmpty(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}
