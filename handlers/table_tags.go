package handlers

// The tag operations.

import (
	"github.com/labstack/echo/v4"

	nserr "github.com/lancecat/lancecat/errors"
	"github.com/lancecat/lancecat/gen/nsapi"
	"github.com/lancecat/lancecat/ident"
)

// ListTableTags is POST /v1/table/{id}/tags/list.
func (s *Server) ListTableTags(c echo.Context, _ nsapi.Id, params nsapi.ListTableTagsParams) error {
	t, err := s.tableRequest(c, "ListTableTags", params.Delimiter, &idOnlyRequest{})
	if err != nil {
		return err
	}
	if limitOf(params.Limit) < 0 {
		return nserr.InvalidInputf("limit %d is negative", limitOf(params.Limit))
	}
	tags, next, err := t.ListTags(c.Request().Context(), tokenOf(params.PageToken), limitOf(params.Limit))
	if err != nil {
		return err
	}
	resp := nsapi.ListTableTagsResponse{Tags: map[string]nsapi.TagContents{}, PageToken: pageToken(next)}
	for _, tag := range tags {
		resp.Tags[tag.Name] = nsapi.TagContents{Branch: tag.Branch, ManifestSize: tag.ManifestSize, Version: int64(tag.Version)}
	}
	if IsRemote(c) {
		// The one reply the two dialects cannot share: a remote-mode client reads the bare map
		// (and pages nothing), a spec client the object around it.
		return writeJSON(c, resp.Tags)
	}
	return writeJSON(c, resp)
}

// GetTableTagVersion is POST /v1/table/{id}/tags/version.
func (s *Server) GetTableTagVersion(c echo.Context, _ nsapi.Id, params nsapi.GetTableTagVersionParams) error {
	var req nsapi.GetTableTagVersionRequest
	t, err := s.tableRequest(c, "GetTableTagVersion", params.Delimiter, &req)
	if err != nil {
		return err
	}
	tag, err := t.GetTag(c.Request().Context(), req.Tag)
	if err != nil {
		return err
	}
	return writeJSON(c, nsapi.GetTableTagVersionResponse{Branch: tag.Branch, Version: int64(tag.Version)})
}

// CreateTableTag is POST /v1/table/{id}/tags/create.
func (s *Server) CreateTableTag(c echo.Context, _ nsapi.Id, params nsapi.CreateTableTagParams) error {
	var req nsapi.CreateTableTagRequest
	t, err := s.tableRequest(c, "CreateTableTag", params.Delimiter, &req)
	if err != nil {
		return err
	}
	// The name rule of indices, tags and branches; Lance's own (lance.CheckTagName: letters,
	// digits, '.', '-', '_') applies on top where the tag becomes a file, on every tag door.
	if err := ident.CheckName(ident.Tag, req.Tag); err != nil {
		return err
	}
	if _, err := t.CreateTag(c.Request().Context(), req.Tag, req.Version, strOf(req.Branch)); err != nil {
		return err
	}
	return writeJSON(c, nsapi.CreateTableTagResponse{})
}

// DeleteTableTag is POST /v1/table/{id}/tags/delete.
func (s *Server) DeleteTableTag(c echo.Context, _ nsapi.Id, params nsapi.DeleteTableTagParams) error {
	var req nsapi.DeleteTableTagRequest
	t, err := s.tableRequest(c, "DeleteTableTag", params.Delimiter, &req)
	if err != nil {
		return err
	}
	if err := t.DeleteTag(c.Request().Context(), req.Tag); err != nil {
		return err
	}
	return writeJSON(c, nsapi.DeleteTableTagResponse{})
}

// UpdateTableTag is POST /v1/table/{id}/tags/update.
func (s *Server) UpdateTableTag(c echo.Context, _ nsapi.Id, params nsapi.UpdateTableTagParams) error {
	var req nsapi.UpdateTableTagRequest
	t, err := s.tableRequest(c, "UpdateTableTag", params.Delimiter, &req)
	if err != nil {
		return err
	}
	if _, err := t.UpdateTag(c.Request().Context(), req.Tag, req.Version, strOf(req.Branch)); err != nil {
		return err
	}
	return writeJSON(c, nsapi.UpdateTableTagResponse{})
}
