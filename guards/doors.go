package guards

import (
	"context"

	"github.com/lancecat/lancecat/authz"
	nserr "github.com/lancecat/lancecat/errors"
)

// Kind is the kind of object a spec door acts on.
type Kind string

// Kinds of object a spec door acts on.
const (
	KindTable     Kind = "table"
	KindNamespace Kind = "namespace"
	// KindTransaction: a transaction, whose doors are checked on its namespace (the parent of
	// its id).
	KindTransaction Kind = "transaction"
)

// SpecDoor is what one spec operation checks: Action on the object its path {id} names (the
// parent, for a create). The zero SpecDoor is a listing filtered per item.
type SpecDoor struct {
	Action authz.Action
	Kind   Kind
}

// SpecDoors maps every spec operation id to its door, backed or not: an operation this server
// does not back yet answers its 406 the same with authorization on or off (a door missing here is
// refused with authorization on, which used to turn every unbacked door into a 403).
//
// ListAllTables has no door of its own: its items are filtered (TableListEntry). The batch doors
// (BatchCommitTables, BatchCreateTableVersions) have no {id} in their path: they name their tables
// in the body, so their handler checks each entry (authz.TableBatchCommit,
// authz.TableBatchCreateVersion on each entry's table) before it acts; the chain gives them no
// door of their own. A transaction's {id} is its namespace's id plus its own name, checked on
// that namespace (authz.TransactionDescribe, TransactionAlter: rules on the parent).
var SpecDoors = map[string]SpecDoor{
	"CreateNamespace":   {authz.NamespaceCreate, KindNamespace},
	"ListNamespaces":    {authz.NamespaceList, KindNamespace},
	"DescribeNamespace": {authz.NamespaceDescribe, KindNamespace},
	"DropNamespace":     {authz.NamespaceDrop, KindNamespace},
	"NamespaceExists":   {authz.NamespaceExists, KindNamespace},
	"ListTables":        {authz.NamespaceListTables, KindNamespace},
	"ListAllTables":     {},

	"CreateTable":   {authz.TableCreate, KindTable},
	"DeclareTable":  {authz.TableDeclare, KindTable},
	"RegisterTable": {authz.TableRegister, KindTable},

	"DropTable":                 {authz.TableDrop, KindTable},
	"DeregisterTable":           {authz.TableDeregister, KindTable},
	"RenameTable":               {authz.TableRename, KindTable},
	"RestoreTable":              {authz.TableRestore, KindTable},
	"CreateTableBranch":         {authz.TableCreateBranch, KindTable},
	"DeleteTableBranch":         {authz.TableDeleteBranch, KindTable},
	"CreateTableTag":            {authz.TableCreateTag, KindTable},
	"UpdateTableTag":            {authz.TableUpdateTag, KindTable},
	"DeleteTableTag":            {authz.TableDeleteTag, KindTable},
	"DescribeTable":             {authz.TableDescribe, KindTable},
	"TableExists":               {authz.TableExists, KindTable},
	"GetTableStats":             {authz.TableStats, KindTable},
	"ExplainTableQueryPlan":     {authz.TableExplainPlan, KindTable},
	"AnalyzeTableQueryPlan":     {authz.TableAnalyzePlan, KindTable},
	"ListTableIndices":          {authz.TableListIndices, KindTable},
	"DescribeTableIndexStats":   {authz.TableIndexStats, KindTable},
	"ListTableVersions":         {authz.TableListVersions, KindTable},
	"DescribeTableVersion":      {authz.TableDescribeVersion, KindTable},
	"ListTableTags":             {authz.TableListTags, KindTable},
	"GetTableTagVersion":        {authz.TableGetTagVersion, KindTable},
	"ListTableBranches":         {authz.TableListBranches, KindTable},
	"QueryTable":                {authz.TableQuery, KindTable},
	"CountTableRows":            {authz.TableCountRows, KindTable},
	"InsertIntoTable":           {authz.TableInsert, KindTable},
	"MergeInsertIntoTable":      {authz.TableMergeInsert, KindTable},
	"DeleteFromTable":           {authz.TableDeleteRows, KindTable},
	"UpdateTable":               {authz.TableUpdateRows, KindTable},
	"AlterTableAddColumns":      {authz.TableAddColumns, KindTable},
	"AlterTableAlterColumns":    {authz.TableAlterColumns, KindTable},
	"AlterTableDropColumns":     {authz.TableDropColumns, KindTable},
	"AlterTableBackfillColumns": {authz.TableBackfillColumn, KindTable},
	"CreateTableIndex":          {authz.TableCreateIndex, KindTable},
	"CreateTableScalarIndex":    {authz.TableCreateScalarIndex, KindTable},
	"DropTableIndex":            {authz.TableDropIndex, KindTable},
	"UpdateTableSchemaMetadata": {authz.TableUpdateSchemaMetadata, KindTable},
	"UpdateFieldMetadata":       {authz.TableUpdateFieldMetadata, KindTable},
	"CreateTableVersion":        {authz.TableCreateVersion, KindTable},
	// Despite its name, one table: the one in the path (a body id must agree with it).
	"BatchDeleteTableVersions": {authz.TableDeleteVersions, KindTable},

	// Checked per entry by their handler (see above).
	"BatchCommitTables":        {},
	"BatchCreateTableVersions": {},

	// A view is stored as a table at its id.
	"CreateMaterializedView":  {authz.MaterializedViewCreate, KindTable},
	"RefreshMaterializedView": {authz.MaterializedViewRefresh, KindTable},

	"DescribeTransaction": {authz.TransactionDescribe, KindTransaction},
	"AlterTransaction":    {authz.TransactionAlter, KindTransaction},
}

// Deps are what the door guards consult.
type Deps struct {
	// Delimiter joins id parts in paths.
	Delimiter string
	// Authorizer decides the doors; nil or disabled: authorization off, every door open.
	Authorizer authz.Authorizer
	// Catalog answers existence for the oracle rule of the spec doors; nil: a denial is the denial.
	Catalog Existence
	// ReadOnly puts the replica in read-only maintenance mode (ReadOnly).
	ReadOnly bool
	// Shed bounds the writes the replica runs at once; nil: unbounded.
	Shed *Shedder
}

// SpecChain is the chain of spec operation op: read-only mode, shape (delimiter and path id), the
// door's action on its object, then write shedding. Identity is settled before it by
// authentication (with authorization on a request has a principal or was refused 401). The
// conflict guards of the doors that create, destroy or move need the decoded body and run in the
// door's handler (NotProtected, NotTrashed, Overwrite, NamespaceDrop).
//
// A listing filtered per item and, with authorization off, an unmapped operation get no door
// guards (their handler decodes and answers); with authorization on an unmapped operation is
// refused.
func SpecChain(op string, d Deps) Chain {
	door, mapped := SpecDoors[op]
	governed := Authorizes(d.Authorizer)
	switch {
	case !mapped && governed:
		return d.around(NewChain(Guard{StageAuthorization, "unmapped", func(context.Context, *Request) error {
			return nserr.PermissionDeniedf("operation %s has no authorization rule, so it is refused", op)
		}}))
	case !mapped || door.Action == "":
		return d.around(nil)
	}
	c := NewChain(PathID(d.Delimiter))
	if governed {
		c = c.Then(Authorize(door, d.Authorizer, d.Catalog))
	}
	return d.around(c)
}
