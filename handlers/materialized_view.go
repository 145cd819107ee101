package handlers

// The materialized view operations (package mview): query-backed views, materialized into a
// Lance table at the view's id and refreshed as jobs in that table's task history. The UDTF and
// chunker kinds run user code and are refused (406) with why.

import (
	"context"
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/lancecat/lancecat/catalog"
	nserr "github.com/lancecat/lancecat/errors"
	"github.com/lancecat/lancecat/gen/nsapi"
	"github.com/lancecat/lancecat/ident"
)

// Views are the materialized views and computed columns the doors call: package mview's service
// behind catalog/governed's Views, which requires the caller to read a view's source (built by
// the composition root, package app). A computed column's declaration and backfill commit through
// the table handle they are given (the governed catalog's), so their events are recorded there.
type Views interface {
	// Create creates view id for sql and answers its table's version and, unless withNoData,
	// its first refresh's job id.
	Create(ctx context.Context, id ident.ID, sql string, withNoData bool) (uint64, string, error)
	// Refresh starts a refresh of view id from the source's version srcVersion (nil: latest)
	// and answers the job's id.
	Refresh(ctx context.Context, id ident.ID, srcVersion *int64) (string, error)
	// DeclareComputed declares computed columns of t and answers the version it committed.
	DeclareComputed(ctx context.Context, t catalog.Table, cols []catalog.ComputedColumn) (uint64, error)
	// Backfill starts a backfill job of a computed column of t and answers its id.
	Backfill(ctx context.Context, t catalog.Table, req catalog.BackfillRequest) (string, error)
}

// viewsBacked is backed's answer for the view doors: 406 also when no views service backs
// the handlers (Options.Views nil).
func (s *Server) viewsBacked(c echo.Context, operation string, err error) error {
	if err == nil && s.views == nil {
		return notBacked(c, operation)
	}
	return err
}

// userCodeKinds says why the kinds that run user code are not backed.
const userCodeKinds = "materialized views of kind %q run a user-defined table function (a pickled Python UDTF " +
	"or chunker executed by a worker runtime such as Geneva's Ray actors); this server has no user-code runtime, " +
	"so it backs kind \"query\" (a SQL source_query) only"

// RefreshMaterializedView is POST /v1/materialized_view/{id}/refresh: 202 with the refresh
// job's id (GET /v1/table/{id}/tasks follows it).
func (s *Server) RefreshMaterializedView(c echo.Context, _ nsapi.Id, params nsapi.RefreshMaterializedViewParams) error {
	var req nsapi.RefreshMaterializedViewRequest
	id, err := s.decodeRequest(c, params.Delimiter, &req)
	if err = s.viewsBacked(c, "RefreshMaterializedView", s.backed(c, "RefreshMaterializedView", err)); err != nil {
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
	job, err := s.views.Refresh(c.Request().Context(), id, from)
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
	if err = s.viewsBacked(c, "CreateMaterializedView", s.backed(c, "CreateMaterializedView", err)); err != nil {
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
	v, job, err := s.views.Create(c.Request().Context(), id, req.SourceQuery, req.WithNoData != nil && *req.WithNoData)
	if err != nil {
		return err
	}
	resp := nsapi.CreateMaterializedViewResponse{Version: int64(v)}
	if job != "" {
		resp.JobId = &job
	}
	return c.JSON(http.StatusCreated, resp)
}
