package handlers

// The batch doors: version commits across tables, all or none (namespace/batch.go). Their path
// has no {id}: the tables are named in the body (read by package wire), and the catalog
// authorizes each entry before anything is committed (catalog/governed/batch_authz.go).

import (
	"github.com/labstack/echo/v4"

	"github.com/lancecat/lancecat/catalog"
	"github.com/lancecat/lancecat/gen/nsapi"
	"github.com/lancecat/lancecat/wire"
)

// BatchCreateTableVersions is POST /v1/table/version/batch-create.
func (s *Server) BatchCreateTableVersions(c echo.Context, params nsapi.BatchCreateTableVersionsParams) error {
	err := s.checkDelimiter(params.Delimiter)
	var req nsapi.BatchCreateTableVersionsRequest
	if err == nil {
		err = decodeJSON(c, &req)
	}
	if err = s.backed(c, "BatchCreateTableVersions", err); err != nil {
		return err
	}
	entries, err := wire.BatchCreateEntries(req, s.delimiter)
	if err != nil {
		return err
	}
	txn, vs, err := s.catalog.CommitTableVersions(c.Request().Context(), catalog.TxnBatchCreateTableVersions, entries)
	if err != nil {
		return err
	}
	resp := nsapi.BatchCreateTableVersionsResponse{Versions: make([]nsapi.TableVersion, len(vs)), TransactionId: ptr(txn.ID.Join(s.delimiter))}
	for i, v := range vs {
		resp.Versions[i] = tableVersion(v)
	}
	return writeJSON(c, resp)
}

// BatchCommitTables is POST /v1/table/batch-commit. All its operations (create_table_version,
// delete_table_versions, declare_table, deregister_table) commit as one transaction
// (namespace/batch.go, namespace/batch_delete.go, namespace/batch_catalog.go).
func (s *Server) BatchCommitTables(c echo.Context, params nsapi.BatchCommitTablesParams) error {
	err := s.checkDelimiter(params.Delimiter)
	var req nsapi.BatchCommitTablesRequest
	if err == nil {
		err = decodeJSON(c, &req)
	}
	if err = s.backed(c, "BatchCommitTables", err); err != nil {
		return err
	}
	entries, err := wire.BatchCommitEntries(req, s.delimiter)
	if err != nil {
		return err
	}
	opts, err := forceOptions(c) // force=true reaches the deregister entries, as on the deregister door
	if err != nil {
		return err
	}
	ctx := c.Request().Context()
	txn, vs, err := s.catalog.CommitTableVersions(ctx, catalog.TxnBatchCommitTables, entries, opts...)
	if err != nil {
		return err
	}
	id := txn.ID.Join(s.delimiter)
	resp := nsapi.BatchCommitTablesResponse{Results: make([]nsapi.CommitTableResult, len(vs)), TransactionId: &id}
	for i, v := range vs {
		switch {
		case entries[i].Declare != nil && v.Table != nil:
			t := v.Table
			r := &nsapi.DeclareTableResponse{Location: &t.URI, Properties: &t.Properties}
			if t.ManagedVersioning {
				r.ManagedVersioning = ptr(true)
			}
			// The batch is committed: options that cannot be made now are said, not hidden.
			if r.StorageOptions, err = s.storageOptions(ctx, t.ID, t.URI, t.StorageOptions, req.Operations[i].DeclareTable.VendCredentials); err != nil {
				return createdWithoutOptions(err, "declared", t.ID, s.delimiter, id)
			}
			resp.Results[i] = nsapi.CommitTableResult{DeclareTable: r}
			continue
		case entries[i].Deregister && v.Table != nil:
			t := v.Table
			resp.Results[i] = nsapi.CommitTableResult{DeregisterTable: &nsapi.DeregisterTableResponse{
				Id: ptr([]string(t.ID)), Location: &t.URI, Properties: &t.Properties,
			}}
			continue
		}
		if entries[i].Delete != nil {
			resp.Results[i] = nsapi.CommitTableResult{DeleteTableVersions: &nsapi.BatchDeleteTableVersionsResponse{
				DeletedCount: ptr(int64(v.Deleted)), TransactionId: &id,
			}}
			continue
		}
		resp.Results[i] = nsapi.CommitTableResult{CreateTableVersion: &nsapi.CreateTableVersionResponse{
			Version: ptr(tableVersion(v)), TransactionId: &id,
		}}
	}
	return writeJSON(c, resp)
}
