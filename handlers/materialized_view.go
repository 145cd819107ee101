package handlers

// The materialized view operations (package mview): query-backed views, materialized into a
// Lance table at the view's id and refreshed as jobs in that table's task history. The UDTF and
// chunker kinds run user code and are refused (406) with why.

import (
	"context"
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/lancecat/lancecat/authz"
	nserr "github.com/lancecat/lancecat/errors"
	"github.com/lancecat/lancecat/gen/nsapi"
	"github.com/lancecat/lancecat/guards"
	"github.com/lancecat/lancecat/ident"
	"github.com/lancecat/lancecat/mview"
)

// userCodeKinds says why the kinds that run user code are not backed.
const userCodeKinds = "materialized views of kind %q run a user-defined table function (a pickled Python UDTF " +
	"or chunker executed by a worker runtime such as Geneva's Ray actors); this server has no user-code runtime, " +
	"so it backs kind \"query\" (a SQL source_query) only"

// authorizeSourceRead checks that the caller may read the view's source table (a view's rows
// are its source's: creating or refreshing one reads them with the caller's authority).
func (s *Server) authorizeSourceRead(ctx context.Context, src ident.ID) error {
	if !guards.Authorizes(s.authorizer) {
		return nil
	}
	o := guards.Oracle{Authorizer: s.authorizer, Catalog: s.catalog}
	return o.Authorize(ctx, guards.SpecDoor{Action: authz.TableQuery, Kind: guards.KindTable}, authz.PrincipalFrom(ctx), src)
}

// RefreshMaterializedView is POST /v1/materialized_view/{id}/refresh: 202 with the refresh
// job's id (GET /v1/table/{id}/tasks follows it).
func (s *Server) RefreshMaterializedView(c echo.Context, _ nsapi.Id, params nsapi.RefreshMaterializedViewParams) error {
	var req nsapi.RefreshMaterializedViewRequest
	id, err := s.decodeRequest(c, params.Delimiter, &req)
	if err = s.backed(c, "RefreshMaterializedView", err); err != nil {
		return err
	}
	if req.OutputLimit != nil {
		return nserr.InvalidInputf("output_limit is valid only for chunker materialized views")
	}
	var from *int64
	if req.SrcVersion != nil {
		if *req.SrcVersion <= 0 {
			return nserr.InvalidInputf("src_version %d is not a table version", *req.SrcVersion)
		}
		v := int64(*req.SrcVersion)
		from = &v
	}
	ctx := c.Request().Context()
	src, err := s.views.Source(ctx, id)
	if err != nil {
		return err
	}
	if err := s.authorizeSourceRead(ctx, src); err != nil {
		return err
	}
	job, err := s.views.Refresh(ctx, id, from)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusAccepted, nsapi.RefreshMaterializedViewResponse{JobId: job})
}

// CreateMaterializedView is POST /v1/materialized_view/{id}/create: 201 with the view table's
// version and, unless with_no_data, the initial refresh's job id.
func (s *Server) CreateMaterializedView(c echo.Context, _ nsapi.Id, params nsapi.CreateMaterializedViewParams) error {
	var req nsapi.CreateMaterializedViewRequest
	id, err := s.decodeRequest(c, params.Delimiter, &req)
	if err = s.backed(c, "CreateMaterializedView", err); err != nil {
		return err
	}
	switch req.Kind {
	case nsapi.CreateMaterializedViewRequestKindQuery:
	case nsapi.CreateMaterializedViewRequestKindUdtf, nsapi.CreateMaterializedViewRequestKindChunker:
		return nserr.Unsupportedf(userCodeKinds, req.Kind)
	default:
		return nserr.InvalidInputf("kind %q is not a materialized view kind (query, udtf, chunker)", req.Kind)
	}
	if req.UdtfSpec != nil {
		return nserr.InvalidInputf("udtf_spec must be null when kind is query")
	}
	if req.AutoRefresh != nil && *req.AutoRefresh {
		return nserr.Unsupportedf("auto_refresh is not supported by this server: refresh with POST /v1/materialized_view/{id}/refresh")
	}
	if req.SourceQuery == "" {
		return nserr.InvalidInputf("source_query is required: the view's SQL")
	}
	ctx := c.Request().Context()
	_, src, err := mview.Definition(id, req.SourceQuery)
	if err != nil {
		return err
	}
	if err := s.authorizeSourceRead(ctx, src); err != nil {
		return err
	}
	v, job, err := s.views.Create(ctx, id, req.SourceQuery, req.WithNoData != nil && *req.WithNoData)
	if err != nil {
		return err
	}
	resp := nsapi.CreateMaterializedViewResponse{Version: int64(v)}
	if job != "" {
		resp.JobId = &job
	}
	return c.JSON(http.StatusCreated, resp)
}

// WaitJobs waits for the materialized view refreshes and backfills started so far (tests,
// shutdown).
func (s *Server) WaitJobs() { s.views.Wait() }
