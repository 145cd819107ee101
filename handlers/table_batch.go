package handlers

// The batch doors: version commits across tables, all or none (namespace/batch.go). Their path
// has no {id}: the tables are named in the body, so each entry is authorized here, every one
// before anything is committed, with the spec doors' oracle rule (guards.Oracle), so that a
// batch with one table the caller may not write is refused whole and says nothing about whether
// that table exists.

import (
	"context"
	"fmt"

	"github.com/labstack/echo/v4"

	"github.com/lancecat/lancecat/authz"
	"github.com/lancecat/lancecat/catalog"
	nserr "github.com/lancecat/lancecat/errors"
	"github.com/lancecat/lancecat/gen/nsapi"
	"github.com/lancecat/lancecat/guards"
	"github.com/lancecat/lancecat/ident"
	"github.com/lancecat/lancecat/lance"
)

// versionEntry is a create_table_version body of a batch as the catalog takes it.
func (s *Server) versionEntry(where string, id []string, req nsapi.CreateTableVersionRequest) (catalog.VersionEntry, error) {
	tid := ident.ID(id)
	if len(tid) == 0 {
		return catalog.VersionEntry{}, nserr.InvalidInputf("%s.id is required", where)
	}
	if err := tid.Validate(s.delimiter); err != nil {
		return catalog.VersionEntry{}, nserr.InvalidInputf("%s.id: %v", where, err)
	}
	return catalog.VersionEntry{Table: tid, NewTableVersion: catalog.NewTableVersion{
		Version: req.Version, ManifestPath: req.ManifestPath, ManifestSize: req.ManifestSize,
		NamingScheme: strOf(req.NamingScheme), Branch: strOf(req.Branch), Metadata: props(req.Metadata),
	}}, nil
}

// authorizeEntries checks action on every entry's table, and a deletion entry's door action
// (delete versions) on its table (authorization off: nothing to check).
func (s *Server) authorizeEntries(ctx context.Context, action authz.Action, entries []catalog.VersionEntry) error {
	if !guards.Authorizes(s.authorizer) {
		return nil
	}
	o := guards.Oracle{Authorizer: s.authorizer}
	if s.catalog != nil {
		o.Catalog = s.catalog
	}
	p := authz.PrincipalFrom(ctx)
	for _, e := range entries {
		a := action
		switch {
		case e.Delete != nil:
			a = authz.TableDeleteVersions
		case e.Declare != nil:
			a = authz.TableDeclare // the declare door's rule: create in the parent namespace
		case e.Deregister:
			a = authz.TableDeregister
		}
		if err := o.Authorize(ctx, guards.SpecDoor{Action: a, Kind: guards.KindTable}, p, e.Table); err != nil {
			return err
		}
	}
	return nil
}

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
	if len(req.Entries) == 0 {
		return nserr.InvalidInputf("entries must name at least one table version")
	}
	entries := make([]catalog.VersionEntry, len(req.Entries))
	for i, e := range req.Entries {
		entries[i], err = s.versionEntry(fmt.Sprintf("entries[%d]", i), e.Id, nsapi.CreateTableVersionRequest{
			Version: e.Version, ManifestPath: e.ManifestPath, ManifestSize: e.ManifestSize,
			NamingScheme: e.NamingScheme, Branch: e.Branch, Metadata: e.Metadata,
		})
		if err != nil {
			return err
		}
	}
	ctx := c.Request().Context()
	if err := s.authorizeEntries(ctx, authz.TableBatchCreateVersion, entries); err != nil {
		return err
	}
	txn, vs, err := s.catalog.CommitTableVersions(ctx, catalog.TxnBatchCreateTableVersions, entries)
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
	if len(req.Operations) == 0 {
		return nserr.InvalidInputf("operations must name at least one operation")
	}
	entries := make([]catalog.VersionEntry, len(req.Operations))
	for i, op := range req.Operations {
		where := fmt.Sprintf("operations[%d]", i)
		kinds := 0
		for _, set := range []bool{op.CreateTableVersion != nil, op.DeclareTable != nil, op.DeleteTableVersions != nil, op.DeregisterTable != nil} {
			if set {
				kinds++
			}
		}
		if kinds != 1 {
			return nserr.InvalidInputf("%s must set exactly one of create_table_version, declare_table, delete_table_versions, deregister_table", where)
		}
		switch {
		case op.DeclareTable != nil:
			d := op.DeclareTable
			if entries[i], err = s.catalogEntry(where+".declare_table", d.Id); err != nil {
				return err
			}
			entries[i].Declare = &catalog.TableDeclaration{Location: strOf(d.Location), Properties: props(d.Properties)}
		case op.DeregisterTable != nil:
			if entries[i], err = s.catalogEntry(where+".deregister_table", op.DeregisterTable.Id); err != nil {
				return err
			}
			entries[i].Deregister = true
		case op.DeleteTableVersions != nil:
			if entries[i], err = s.deletionEntry(where+".delete_table_versions", *op.DeleteTableVersions); err != nil {
				return err
			}
		default:
			var id []string
			if op.CreateTableVersion.Id != nil {
				id = *op.CreateTableVersion.Id
			}
			if entries[i], err = s.versionEntry(where+".create_table_version", id, *op.CreateTableVersion); err != nil {
				return err
			}
		}
	}
	ctx := c.Request().Context()
	if err := s.authorizeEntries(ctx, authz.TableBatchCommit, entries); err != nil {
		return err
	}
	opts, err := forceOptions(c) // force=true reaches the deregister entries, as on the deregister door
	if err != nil {
		return err
	}
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

// deletionEntry is a delete_table_versions body of a batch as the catalog takes it.
func (s *Server) deletionEntry(where string, req nsapi.BatchDeleteTableVersionsRequest) (catalog.VersionEntry, error) {
	var tid ident.ID
	if req.Id != nil {
		tid = ident.ID(*req.Id)
	}
	if len(tid) == 0 {
		return catalog.VersionEntry{}, nserr.InvalidInputf("%s.id is required", where)
	}
	if err := tid.Validate(s.delimiter); err != nil {
		return catalog.VersionEntry{}, nserr.InvalidInputf("%s.id: %v", where, err)
	}
	ranges := make([]lance.VersionRange, len(req.Ranges))
	for i, r := range req.Ranges {
		if r.StartVersion < 0 {
			return catalog.VersionEntry{}, nserr.InvalidInputf("%s.ranges[%d].start_version %d is negative", where, i, r.StartVersion)
		}
		ranges[i] = lance.VersionRange{Start: uint64(r.StartVersion), End: r.EndVersion}
	}
	return catalog.VersionEntry{Table: tid, Delete: &catalog.VersionDeletion{Branch: strOf(req.Branch), Ranges: ranges}}, nil
}

// catalogEntry is the table a declare_table or deregister_table body of a batch names.
func (s *Server) catalogEntry(where string, id *[]string) (catalog.VersionEntry, error) {
	var tid ident.ID
	if id != nil {
		tid = ident.ID(*id)
	}
	if len(tid) == 0 {
		return catalog.VersionEntry{}, nserr.InvalidInputf("%s.id is required", where)
	}
	if err := tid.Validate(s.delimiter); err != nil {
		return catalog.VersionEntry{}, nserr.InvalidInputf("%s.id: %v", where, err)
	}
	return catalog.VersionEntry{Table: tid}, nil
}
