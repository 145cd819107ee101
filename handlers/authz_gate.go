package handlers

// The authorization gate of the spec operations: every spec door is mapped to its authz.Action and
// checked on its object (the parent, for a create) before the handler runs. A door without a
// mapping is refused. With authorization off (no authorizer, or a disabled one) the gate is not
// installed at all and every door behaves as before.

import (
	"context"

	"github.com/labstack/echo/v4"

	"github.com/lancecat/lancecat/authz"
	"github.com/lancecat/lancecat/catalog/governed"
	nserr "github.com/lancecat/lancecat/errors"
	"github.com/lancecat/lancecat/ident"
)

// Kinds of object a spec door acts on.
const (
	doorTable     = "table"
	doorNamespace = "namespace"
)

// specDoor is what one spec operation checks: action on the object its path {id} names.
type specDoor struct {
	action authz.Action
	kind   string
}

// specDoors maps every spec operation id to its door. An operation missing here is refused with
// authorization on. Left unmapped on purpose (refused until they are checked per entry or resolved
// to their namespace): the batch doors (BatchCommitTables, BatchCreateTableVersions), the
// transaction doors (AlterTransaction, DescribeTransaction: the
// transaction's namespace is not in the path) and the materialized-view doors.
//
// ListAllTables has no door of its own: its items are filtered (TableListEntry).
var specDoors = map[string]specDoor{
	"CreateNamespace":   {authz.NamespaceCreate, doorNamespace},
	"ListNamespaces":    {authz.NamespaceList, doorNamespace},
	"DescribeNamespace": {authz.NamespaceDescribe, doorNamespace},
	"DropNamespace":     {authz.NamespaceDrop, doorNamespace},
	"NamespaceExists":   {authz.NamespaceExists, doorNamespace},
	"ListTables":        {authz.NamespaceListTables, doorNamespace},
	"ListAllTables":     {},

	"CreateTable":   {authz.TableCreate, doorTable},
	"DeclareTable":  {authz.TableDeclare, doorTable},
	"RegisterTable": {authz.TableRegister, doorTable},

	"DropTable":                 {authz.TableDrop, doorTable},
	"DeregisterTable":           {authz.TableDeregister, doorTable},
	"RenameTable":               {authz.TableRename, doorTable},
	"RestoreTable":              {authz.TableRestore, doorTable},
	"CreateTableBranch":         {authz.TableCreateBranch, doorTable},
	"DeleteTableBranch":         {authz.TableDeleteBranch, doorTable},
	"CreateTableTag":            {authz.TableCreateTag, doorTable},
	"UpdateTableTag":            {authz.TableUpdateTag, doorTable},
	"DeleteTableTag":            {authz.TableDeleteTag, doorTable},
	"DescribeTable":             {authz.TableDescribe, doorTable},
	"TableExists":               {authz.TableExists, doorTable},
	"GetTableStats":             {authz.TableStats, doorTable},
	"ExplainTableQueryPlan":     {authz.TableExplainPlan, doorTable},
	"AnalyzeTableQueryPlan":     {authz.TableAnalyzePlan, doorTable},
	"ListTableIndices":          {authz.TableListIndices, doorTable},
	"DescribeTableIndexStats":   {authz.TableIndexStats, doorTable},
	"ListTableVersions":         {authz.TableListVersions, doorTable},
	"DescribeTableVersion":      {authz.TableDescribeVersion, doorTable},
	"ListTableTags":             {authz.TableListTags, doorTable},
	"GetTableTagVersion":        {authz.TableGetTagVersion, doorTable},
	"ListTableBranches":         {authz.TableListBranches, doorTable},
	"QueryTable":                {authz.TableQuery, doorTable},
	"CountTableRows":            {authz.TableCountRows, doorTable},
	"InsertIntoTable":           {authz.TableInsert, doorTable},
	"MergeInsertIntoTable":      {authz.TableMergeInsert, doorTable},
	"DeleteFromTable":           {authz.TableDeleteRows, doorTable},
	"UpdateTable":               {authz.TableUpdateRows, doorTable},
	"AlterTableAddColumns":      {authz.TableAddColumns, doorTable},
	"AlterTableAlterColumns":    {authz.TableAlterColumns, doorTable},
	"AlterTableDropColumns":     {authz.TableDropColumns, doorTable},
	"AlterTableBackfillColumns": {authz.TableBackfillColumn, doorTable},
	"CreateTableIndex":          {authz.TableCreateIndex, doorTable},
	"CreateTableScalarIndex":    {authz.TableCreateScalarIndex, doorTable},
	"DropTableIndex":            {authz.TableDropIndex, doorTable},
	"UpdateTableSchemaMetadata": {authz.TableUpdateSchemaMetadata, doorTable},
	"UpdateFieldMetadata":       {authz.TableUpdateFieldMetadata, doorTable},
	"CreateTableVersion":        {authz.TableCreateVersion, doorTable},
	// Despite its name, one table: the one in the path (a body id must agree with it).
	"BatchDeleteTableVersions": {authz.TableDeleteVersions, doorTable},
}

// governed reports whether decisions are real.
func (s *Server) governed() bool { return s.authorizer != nil && s.authorizer.Enabled() }

// Gate is the authorization middleware of the spec doors. specOp names the spec operation a routed
// request is (false for anything that is not a spec operation: control routes check their own
// doors, probes need none). With authorization off it is a pass-through.
func (s *Server) Gate(specOp func(c echo.Context) (string, bool)) echo.MiddlewareFunc {
	return func(next echo.HandlerFunc) echo.HandlerFunc {
		if !s.governed() {
			return next
		}
		return func(c echo.Context) error {
			op, ok := specOp(c)
			if !ok {
				return next(c)
			}
			door, ok := specDoors[op]
			if !ok {
				return nserr.PermissionDeniedf("operation %s has no authorization rule, so it is refused", op)
			}
			if door.action == "" { // a listing filtered per item
				return next(c)
			}
			if err := s.checkDelimiter(queryPtr(c, "delimiter")); err != nil {
				return err
			}
			id, err := ident.ParsePath(c.Param("id"), s.delimiter)
			if err != nil {
				return err
			}
			if err := s.authorize(c.Request().Context(), door, id); err != nil {
				return err
			}
			return next(c)
		}
	}
}

func queryPtr(c echo.Context, name string) *string {
	v := c.QueryParam(name)
	return &v
}

// objectOf is the authorization object of a spec door's id.
func objectOf(kind string, id ident.ID) authz.Object {
	if kind == doorTable {
		return authz.TableObject(id)
	}
	return authz.NamespaceObject(id)
}

// authorize checks door on id for the request's principal.
//
// The answer to a caller the check denies never depends on whether the object exists: a missing
// object (for a create, a missing parent namespace) is the catalog's 404 only to a caller who
// reads everything in the namespace that would hold it (NamespaceContentsRead, the relation every
// object inside inherits), and such a caller would pass a reading door on it had it existed.
// Everyone else gets the same 403 for an object that exists and one that does not: a grant on a
// sibling (which makes the parent visible through its child edge) reveals nothing about the
// parent's other ids.
func (s *Server) authorize(ctx context.Context, door specDoor, id ident.ID) error {
	p := authz.PrincipalFrom(ctx)
	_, onParent, err := authz.RelationFor(door.action)
	if err != nil {
		return err
	}
	if door.kind == doorNamespace && id.IsRoot() && !onParent {
		switch door.action {
		case authz.NamespaceList, authz.NamespaceListTables, authz.NamespaceDescribe, authz.NamespaceExists:
			return nil // the root always exists; listings are filtered per item
		}
		return nserr.PermissionDeniedf("the root namespace is the catalog itself")
	}
	target := objectOf(door.kind, id)
	if onParent {
		target = authz.NamespaceObject(id.Parent())
	}
	err = s.authorizer.Check(ctx, p, door.action, target)
	if err == nil || nserr.CodeOf(err) != nserr.PermissionDenied || s.catalog == nil {
		return err
	}
	denied := err
	if onParent {
		parent := id.Parent()
		if parent.IsRoot() {
			return denied
		}
		perr := s.catalog.NamespaceExists(ctx, parent)
		if perr == nil {
			return denied
		}
		if nserr.CodeOf(perr) != nserr.NamespaceNotFound {
			return perr
		}
		return s.missing(ctx, p, parent, perr, denied)
	}
	if exists(ctx, s.catalog, door.kind, id) {
		// An object written straight to storage has no edges: attach it (and its orphaned
		// ancestors) where its id says it lives, then ask again.
		if governed.AdoptOrphans(ctx, s.authorizer, door.kind == doorTable, id) {
			return s.authorizer.Check(ctx, p, door.action, target)
		}
		return denied
	}
	return s.missing(ctx, p, id, nil, denied)
}

// missing is the answer to a denied caller about id, which does not exist: notFound (nil: let the
// handler answer its own 404) to whoever reads everything in the nearest namespace above id that
// exists, denied to everyone else.
func (s *Server) missing(ctx context.Context, p authz.Principal, id ident.ID, notFound, denied error) error {
	holder := id.Parent()
	for !holder.IsRoot() {
		err := s.catalog.NamespaceExists(ctx, holder)
		if err == nil {
			break
		}
		if nserr.CodeOf(err) != nserr.NamespaceNotFound {
			return err
		}
		holder = holder.Parent()
	}
	err := s.authorizer.Check(ctx, p, authz.NamespaceContentsRead, authz.NamespaceObject(holder))
	switch {
	case err == nil:
		return notFound
	case nserr.CodeOf(err) == nserr.PermissionDenied:
		return denied
	default:
		return err
	}
}

// exists reports whether the table or namespace id exists (false on any error).
func exists(ctx context.Context, catalog Catalog, kind string, id ident.ID) bool {
	if kind == doorTable {
		return catalog.TableExists(ctx, id) == nil
	}
	return catalog.NamespaceExists(ctx, id) == nil
}
