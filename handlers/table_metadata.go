package handlers

// The table metadata operations: listing, registration, description, lifecycle.

import (
	"github.com/labstack/echo/v4"

	"github.com/lancecat/lancecat/catalog"
	"github.com/lancecat/lancecat/gen/nsapi"
	"github.com/lancecat/lancecat/wire"
)

// ListTables is GET /v1/namespace/{id}/table/list.
func (s *Server) ListTables(c echo.Context, _ nsapi.Id, params nsapi.ListTablesParams) error {
	id, err := s.pathID(c, params.Delimiter)
	if err = s.backed(c, "ListTables", err); err != nil {
		return err
	}
	page, err := s.catalog.ListTables(c.Request().Context(), id, tokenOf(params.PageToken), limitOf(params.Limit))
	if err != nil {
		return err
	}
	return writeJSON(c, nsapi.ListTablesResponse{Tables: orEmpty(page.Names), PageToken: pageToken(page.NextToken)})
}

// ListAllTables is GET /v1/table.
func (s *Server) ListAllTables(c echo.Context, params nsapi.ListAllTablesParams) error {
	if err := s.backed(c, "ListAllTables", s.checkDelimiter(params.Delimiter)); err != nil {
		return err
	}
	if IsRemote(c) {
		return s.remoteTableNames(c, tokenOf(params.PageToken), limitOf(params.Limit))
	}
	page, err := s.catalog.ListAllTables(c.Request().Context(), tokenOf(params.PageToken), limitOf(params.Limit))
	if err != nil {
		return err
	}
	// Full ids, spelled with this server's delimiter; the page token stays the manifest's id.
	tables := make([]string, len(page.Names))
	for i, oid := range page.Names {
		tables[i] = catalog.ListedID(oid).Join(s.delimiter)
	}
	return writeJSON(c, nsapi.ListTablesResponse{Tables: tables, PageToken: pageToken(page.NextToken)})
}

// RegisterTable is POST /v1/table/{id}/register.
func (s *Server) RegisterTable(c echo.Context, _ nsapi.Id, params nsapi.RegisterTableParams) error {
	id, req, err := s.registerTableRequest(c, params.Delimiter)
	if err = s.backed(c, "RegisterTable", err); err != nil {
		return err
	}
	opts, err := overwriteOptions(c, strOf(req.Mode))
	if err != nil {
		return err
	}
	t, err := s.catalog.RegisterTable(c.Request().Context(), id, req.Location, strOf(req.Mode), props(req.Properties), opts...)
	if err != nil {
		return err
	}
	return writeJSON(c, nsapi.RegisterTableResponse{Location: &t.URI, Properties: &t.Properties})
}

// DescribeTable is POST /v1/table/{id}/describe.
func (s *Server) DescribeTable(c echo.Context, _ nsapi.Id, params nsapi.DescribeTableParams) error {
	var req nsapi.DescribeTableRequest
	id, err := s.decodeRequest(c, params.Delimiter, &req)
	if err = s.backed(c, "DescribeTable", err); err != nil {
		return err
	}
	ctx := c.Request().Context()
	tbl, err := s.catalog.LoadTable(ctx, id)
	if err != nil {
		return err
	}
	t := tbl.Meta()
	st, err := tbl.State(ctx, catalog.DescribeOptions{
		Version: req.Version, Tag: req.Tag, Detailed: req.LoadDetailedMetadata != nil && *req.LoadDetailedMetadata,
		Branch: strOf(req.Branch),
	})
	if err != nil {
		return err
	}
	storageOpts, err := s.storageOptions(ctx, id, t.URI, t.StorageOptions, req.VendCredentials)
	if err != nil {
		return err
	}
	resp := nsapi.DescribeTableResponse{
		Location:       &t.URI,
		TableUri:       &t.URI,
		Table:          ptr(id.Name()),
		Namespace:      ptr([]string(id.Parent())),
		Properties:     &t.Properties,
		StorageOptions: storageOpts,
	}
	if t.ManagedVersioning {
		resp.ManagedVersioning = ptr(true)
	}
	// State has always looked by now (nil: no dataset yet), so the answer says what it found
	// whether or not the client asked with check_declared: null would tell it nobody checked.
	resp.IsOnlyDeclared = ptr(st == nil)
	if st == nil {
		return writeJSON(c, resp)
	}
	resp.Version = ptr(int64(st.Version))
	schema, err := wire.Schema(st.Schema)
	if err != nil {
		return err
	}
	resp.Schema = schema
	if st.Stats != nil {
		resp.Stats = &nsapi.TableBasicStats{NumDeletedRows: int(st.Stats.DeletedRows), NumFragments: st.Stats.NumFragments}
	}
	return writeJSON(c, resp)
}

// TableExists is POST /v1/table/{id}/exists.
func (s *Server) TableExists(c echo.Context, _ nsapi.Id, params nsapi.TableExistsParams) error {
	var req nsapi.TableExistsRequest
	id, err := s.decodeRequest(c, params.Delimiter, &req)
	if err = s.backed(c, "TableExists", err); err != nil {
		return err
	}
	return writeExists(c, catalog.TableExistsAt(c.Request().Context(), s.catalog, id, req.Version))
}

// DropTable is POST /v1/table/{id}/drop.
func (s *Server) DropTable(c echo.Context, _ nsapi.Id, params nsapi.DropTableParams) error {
	id, err := s.decodeRequest(c, params.Delimiter, &nsapi.DropTableRequest{})
	if err != nil {
		return err
	}
	opts, err := forceOptions(c)
	if err = s.backed(c, "DropTable", err); err != nil {
		return err
	}
	if opts, err = purgeOptions(c, opts); err != nil {
		return err
	}
	t, err := s.catalog.DropTable(c.Request().Context(), id, opts...)
	if err != nil {
		return err
	}
	return writeJSON(c, nsapi.DropTableResponse{Id: ptr([]string(id)), Location: &t.URI, Properties: &t.Properties})
}

// DeregisterTable is POST /v1/table/{id}/deregister.
func (s *Server) DeregisterTable(c echo.Context, _ nsapi.Id, params nsapi.DeregisterTableParams) error {
	id, err := s.decodeRequest(c, params.Delimiter, &nsapi.DeregisterTableRequest{})
	if err != nil {
		return err
	}
	opts, err := forceOptions(c)
	if err = s.backed(c, "DeregisterTable", err); err != nil {
		return err
	}
	t, err := s.catalog.DeregisterTable(c.Request().Context(), id, opts...)
	if err != nil {
		return err
	}
	return writeJSON(c, nsapi.DeregisterTableResponse{Id: ptr([]string(id)), Location: &t.URI, Properties: &t.Properties})
}

// RenameTable is POST /v1/table/{id}/rename.
func (s *Server) RenameTable(c echo.Context, _ nsapi.Id, params nsapi.RenameTableParams) error {
	id, req, err := s.renameTableRequest(c, params.Delimiter)
	if err != nil {
		return err
	}
	opts, err := forceOptions(c)
	if err = s.backed(c, "RenameTable", err); err != nil {
		return err
	}
	newNS, err := s.renameDestination(req)
	if err != nil {
		return err
	}
	newNS = remoteRenameDestination(c, newNS)
	if _, err := s.catalog.RenameTable(c.Request().Context(), id, newNS, req.NewTableName, opts...); err != nil {
		return err
	}
	return writeJSON(c, nsapi.RenameTableResponse{})
}

// DeclareTable is POST /v1/table/{id}/declare.
func (s *Server) DeclareTable(c echo.Context, _ nsapi.Id, params nsapi.DeclareTableParams) error {
	id, req, err := s.declareTableRequest(c, params.Delimiter)
	if err = s.backed(c, "DeclareTable", err); err != nil {
		return err
	}
	ctx := c.Request().Context()
	t, err := s.catalog.DeclareTable(ctx, id, strOf(req.Location), props(req.Properties))
	if err != nil {
		return err
	}
	resp := nsapi.DeclareTableResponse{Location: &t.URI, Properties: &t.Properties}
	if t.ManagedVersioning {
		resp.ManagedVersioning = ptr(true)
	}
	if resp.StorageOptions, err = s.storageOptions(ctx, id, t.URI, t.StorageOptions, req.VendCredentials); err != nil {
		return createdWithoutOptions(err, "declared", id, s.delimiter, "")
	}
	return writeJSON(c, resp)
}
