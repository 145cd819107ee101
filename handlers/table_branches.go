package handlers

// The branch operations.

import (
	"github.com/labstack/echo/v4"

	nserr "github.com/lancecat/lancecat/errors"
	"github.com/lancecat/lancecat/gen/nsapi"
	"github.com/lancecat/lancecat/ident"
)

// ListTableBranches is POST /v1/table/{id}/branches/list.
func (s *Server) ListTableBranches(c echo.Context, _ nsapi.Id, params nsapi.ListTableBranchesParams) error {
	t, err := s.tableRequest(c, "ListTableBranches", params.Delimiter, &idOnlyRequest{})
	if err != nil {
		return err
	}
	if limitOf(params.Limit) < 0 {
		return nserr.InvalidInputf("limit %d is negative", limitOf(params.Limit))
	}
	branches, next, err := t.ListBranches(c.Request().Context(), tokenOf(params.PageToken), limitOf(params.Limit))
	if err != nil {
		return err
	}
	resp := nsapi.ListTableBranchesResponse{Branches: make(map[string]nsapi.BranchContents, len(branches)), PageToken: pageToken(next)}
	for _, b := range branches {
		bc := nsapi.BranchContents{
			CreateAt: int64(b.CreateAt), ManifestSize: b.ManifestSize, ParentBranch: b.ParentBranch,
			ParentVersion: int64(b.ParentVersion),
		}
		if len(b.Metadata) > 0 {
			bc.Metadata = ptr(b.Metadata)
		}
		resp.Branches[b.Name] = bc
	}
	return writeJSON(c, resp)
}

// CreateTableBranch is POST /v1/table/{id}/branches/create.
func (s *Server) CreateTableBranch(c echo.Context, _ nsapi.Id, params nsapi.CreateTableBranchParams) error {
	var req nsapi.CreateTableBranchRequest
	t, err := s.tableRequest(c, "CreateTableBranch", params.Delimiter, &req)
	if err != nil {
		return err
	}
	// The name rule of indices, tags and branches; Lance's own (lance.CheckBranchName) applies on
	// top where the branch becomes a directory, on every door that names a branch.
	if err := ident.CheckName(ident.Branch, req.Name); err != nil {
		return err
	}
	if _, err := t.CreateBranch(c.Request().Context(), req.Name, strOf(req.FromBranch), req.FromVersion); err != nil {
		return err
	}
	return writeJSON(c, nsapi.CreateTableBranchResponse{})
}

// DeleteTableBranch is POST /v1/table/{id}/branches/delete.
func (s *Server) DeleteTableBranch(c echo.Context, _ nsapi.Id, params nsapi.DeleteTableBranchParams) error {
	var req nsapi.DeleteTableBranchRequest
	t, err := s.tableRequest(c, "DeleteTableBranch", params.Delimiter, &req)
	if err != nil {
		return err
	}
	if err := t.DeleteBranch(c.Request().Context(), req.Name); err != nil {
		return err
	}
	return writeJSON(c, nsapi.DeleteTableBranchResponse{})
}
