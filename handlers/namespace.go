package handlers

// The namespace operations.

import (
	"github.com/labstack/echo/v4"

	"github.com/lancecat/lancecat/gen/nsapi"
)

// CreateNamespace is POST /v1/namespace/{id}/create.
func (s *Server) CreateNamespace(c echo.Context, _ nsapi.Id, params nsapi.CreateNamespaceParams) error {
	var req nsapi.CreateNamespaceRequest
	if _, err := s.decodeRequest(c, params.Delimiter, &req); err != nil {
		return err
	}
	if err := canonicalEnum("mode", req.Mode, "Create", "ExistOk", "Overwrite"); err != nil {
		return err
	}
	return notBacked(c, "CreateNamespace")
}

// ListNamespaces is GET /v1/namespace/{id}/list.
func (s *Server) ListNamespaces(c echo.Context, _ nsapi.Id, params nsapi.ListNamespacesParams) error {
	if _, err := s.pathID(c, params.Delimiter); err != nil {
		return err
	}
	return notBacked(c, "ListNamespaces")
}

// DescribeNamespace is POST /v1/namespace/{id}/describe.
func (s *Server) DescribeNamespace(c echo.Context, _ nsapi.Id, params nsapi.DescribeNamespaceParams) error {
	var req nsapi.DescribeNamespaceRequest
	if _, err := s.decodeRequest(c, params.Delimiter, &req); err != nil {
		return err
	}
	return notBacked(c, "DescribeNamespace")
}

// DropNamespace is POST /v1/namespace/{id}/drop.
func (s *Server) DropNamespace(c echo.Context, _ nsapi.Id, params nsapi.DropNamespaceParams) error {
	var req nsapi.DropNamespaceRequest
	if _, err := s.decodeRequest(c, params.Delimiter, &req); err != nil {
		return err
	}
	if err := canonicalEnum("mode", req.Mode, "Fail", "Skip"); err != nil {
		return err
	}
	if err := canonicalEnum("behavior", req.Behavior, "Restrict", "Cascade"); err != nil {
		return err
	}
	return notBacked(c, "DropNamespace")
}

// NamespaceExists is POST /v1/namespace/{id}/exists.
func (s *Server) NamespaceExists(c echo.Context, _ nsapi.Id, params nsapi.NamespaceExistsParams) error {
	var req nsapi.NamespaceExistsRequest
	if _, err := s.decodeRequest(c, params.Delimiter, &req); err != nil {
		return err
	}
	return notBacked(c, "NamespaceExists")
}
