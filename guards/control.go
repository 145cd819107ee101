package guards

import (
	"context"
	"net/url"

	"github.com/lancecat/lancecat/authz"
	nserr "github.com/lancecat/lancecat/errors"
	"github.com/lancecat/lancecat/ident"
	"github.com/lancecat/lancecat/registry"
)

// ControlDoor is what one control-plane operation checks before its handler: the shape of its
// path parameters, then Action on the object they name.
type ControlDoor struct {
	// Shape checks the path parameters (in order).
	Shape []func(delimiter string) Guard
	// Action on Object is the door's authorization; "" when the operation decides it itself
	// (InService says why) or has none.
	Action authz.Action
	Object func(r *Request) authz.Object
	// Missing, when set, is the answer to a caller the check denies: the answer for a missing
	// object, so a destructive door is no existence oracle.
	Missing func(r *Request) error
	// InService is why the operation authorizes inside governance: its object or its order
	// depends on what only the operation reads (a record, or the body it decodes).
	InService string
	// Table, when set, makes the door a table operation of the LanceDB remote dialect (issue
	// 34): it is authorized exactly like a spec door on its table (Oracle: a denied caller gets
	// the same answer whether the table exists or not), so Action, Object and Missing are unused.
	Table authz.Action
}

// pathName is a path parameter as the generated control wrapper hands it to the handler:
// path-unescaped (a raw value that does not unescape is left as sent, for its shape to refuse).
func pathName(r *Request, name string) string {
	raw := r.param(name)
	if v, err := url.PathUnescape(raw); err == nil {
		return v
	}
	return raw
}

func projectParam(r *Request) string   { return pathName(r, "project_id") }
func warehouseParam(r *Request) string { return pathName(r, "warehouse_id") }

func catalogObject(*Request) authz.Object   { return authz.Catalog }
func projectObject(r *Request) authz.Object { return authz.ProjectObject(projectParam(r)) }
func warehouseObject(r *Request) authz.Object {
	return authz.WarehouseObject(warehouseParam(r))
}
func tableObject(r *Request) authz.Object     { return authz.TableObject(r.ID) }
func namespaceObject(r *Request) authz.Object { return authz.NamespaceObject(r.ID) }

// ProjectMissing is the answer for a project that does not exist, and (on destructive doors) for
// one the caller may not act on: the two must be indistinguishable.
func ProjectMissing(id string) error {
	return nserr.NamespaceNotFoundf("project %q does not exist", id)
}

func projectMissing(r *Request) error { return ProjectMissing(projectParam(r)) }

// ProjectShape is the shape of a project id.
func ProjectShape(id string) error {
	if err := registry.ValidName(id); err != nil {
		return nserr.InvalidInputf("project id: %v", err)
	}
	return nil
}

// WarehouseShape is the shape of a warehouse id.
func WarehouseShape(id string) error {
	if err := registry.ValidName(id); err != nil {
		return nserr.InvalidInputf("warehouse id: %v", err)
	}
	return nil
}

// ObjectShape checks kind and id of a table or namespace a governance door is about. A table of
// the root namespace (an id of one part, as LanceDB's remote mode creates them) is a table like
// any other; the root namespace itself is the catalog: it is neither protected nor given a policy.
func ObjectShape(kind string, id ident.ID, delimiter string) error {
	switch kind {
	case registry.KindTable:
		if id.IsRoot() {
			return nserr.InvalidInputf("a table id names a table: the root namespace (%q) is not one", delimiter)
		}
	case registry.KindNamespace:
		if id.IsRoot() {
			return nserr.InvalidInputf("the root namespace cannot be protected or given a policy; name a namespace")
		}
	default:
		return nserr.Internalf("governance: object kind %q is neither %s nor %s", kind, registry.KindTable, registry.KindNamespace)
	}
	return id.Validate(delimiter)
}

func projectShape(string) Guard {
	return Guard{StageShape, "project id", func(_ context.Context, r *Request) error { return ProjectShape(projectParam(r)) }}
}

func warehouseShape(string) Guard {
	return Guard{StageShape, "warehouse id", func(_ context.Context, r *Request) error { return WarehouseShape(warehouseParam(r)) }}
}

func objectShape(kind string) func(string) Guard {
	return func(delimiter string) Guard {
		return Guard{StageShape, kind + " id", func(_ context.Context, r *Request) error { return ObjectShape(kind, r.ID, delimiter) }}
	}
}

var (
	tableShape     = []func(string) Guard{PathID, objectShape(registry.KindTable)}
	namespaceShape = []func(string) Guard{PathID, objectShape(registry.KindNamespace)}
	projectDoor    = func(a authz.Action) ControlDoor {
		return ControlDoor{Shape: []func(string) Guard{projectShape}, Action: a, Object: projectObject, Missing: projectMissing}
	}
)

// ControlDoors maps every control-plane operation to its door. A door with an Action is
// authorized here; the others say why they are not (InService) or have nothing to check.
var ControlDoors = map[string]ControlDoor{
	"CreateProject": {InService: "the project id is in the body: its shape (400 for every caller) comes first, " +
		"then project.create on the catalog"},
	"ListProjects":          {Action: authz.ProjectList, Object: catalogObject},
	"DescribeProject":       {Shape: []func(string) Guard{projectShape}, Action: authz.ProjectDescribe, Object: catalogObject},
	"DeleteProject":         projectDoor(authz.ProjectDelete),
	"SetProjectProtection":  projectDoor(authz.ProjectDelete),
	"SetProjectPolicy":      projectDoor(authz.ProjectPolicySet),
	"DescribeProjectPolicy": projectDoor(authz.ProjectPolicyDescribe),
	"DeleteProjectPolicy":   projectDoor(authz.ProjectPolicyDelete),

	"CreateWarehouse": {InService: "the project is in the body and must exist (the same 404 for every caller) " +
		"before warehouse.create is checked on it"},
	"ListWarehouses":         {InService: "a listing: every warehouse is filtered (warehouse.list-entry)"},
	"DescribeWarehouse":      {Shape: []func(string) Guard{warehouseShape}, Action: authz.WarehouseDescribe, Object: warehouseObject},
	"DeleteWarehouse":        {InService: warehouseOnProject},
	"DeactivateWarehouse":    {InService: warehouseOnProject},
	"ActivateWarehouse":      {InService: warehouseOnProject},
	"SetWarehouseProtection": {InService: warehouseOnProject},
	"ListWarehouseNamespaces": {
		Shape: []func(string) Guard{warehouseShape}, Action: authz.WarehouseListNamespaces, Object: warehouseObject,
	},
	"CreateWarehouseNamespace": {InService: "the namespace name is in the body: its shape (400 for every caller) " +
		"and whether this server routes to warehouses (406) come first"},

	"DescribeTableProtection":     {Shape: tableShape, Action: authz.TableProtectionDescribe, Object: tableObject},
	"SetTableProtection":          {Shape: tableShape, Action: authz.TableProtectionSet, Object: tableObject},
	"DescribeNamespaceProtection": {Shape: namespaceShape, Action: authz.NamespaceProtectionDescribe, Object: namespaceObject},
	"SetNamespaceProtection":      {Shape: namespaceShape, Action: authz.NamespaceProtectionSet, Object: namespaceObject},
	"SetTablePolicy":              {Shape: tableShape, Action: authz.TablePolicySet, Object: tableObject},
	"DescribeTablePolicy":         {Shape: tableShape, Action: authz.TablePolicyDescribe, Object: tableObject},
	"DeleteTablePolicy":           {Shape: tableShape, Action: authz.TablePolicyDelete, Object: tableObject},
	"SetNamespacePolicy":          {Shape: namespaceShape, Action: authz.NamespacePolicySet, Object: namespaceObject},
	"DescribeNamespacePolicy":     {Shape: namespaceShape, Action: authz.NamespacePolicyDescribe, Object: namespaceObject},
	"DeleteNamespacePolicy":       {Shape: namespaceShape, Action: authz.NamespacePolicyDelete, Object: namespaceObject},

	"UndropTable":     {InService: inTrash},
	"UndropNamespace": {InService: inTrash},
	"ListTableTasks":  {Shape: tableShape, Action: authz.TableTasks, Object: tableObject},

	"RunTableMaintenance": {Shape: tableShape, Action: authz.TableMaintenanceRun, Object: tableObject},
	"ListNamespaceTasks":  {Shape: namespaceShape, Action: authz.NamespaceTasks, Object: namespaceObject},

	// Issue 34: the LanceDB remote client's LSM doors. Reading the (absent) spec or stats is
	// reading the table's metadata; the writes are gated as the index they would install or drop
	// (Lance keeps the spec as the __lance_mem_wal system index) and as maintenance (flush,
	// compact), so a caller learns they are refused only when it could have asked.
	"GetTableLsmWriteSpec":   {Shape: tableShape, Table: authz.TableDescribe},
	"GetTableLsmStats":       {Shape: tableShape, Table: authz.TableDescribe},
	"SetTableLsmWriteSpec":   {Shape: tableShape, Table: authz.TableCreateIndex},
	"UnsetTableLsmWriteSpec": {Shape: tableShape, Table: authz.TableDropIndex},
	"FlushTableLsm":          {Shape: tableShape, Table: authz.TableMaintenanceRun},
	"CompactTableLsm":        {Shape: tableShape, Table: authz.TableMaintenanceRun},
	// Prewarming loads what a query reads, for the next query: gated like the query.
	"PrewarmTableIndex": {Shape: tableShape, Table: authz.TableQuery},
	"PrewarmTableData":  {Shape: tableShape, Table: authz.TableQuery},
	// Not backed yet (406); gated as what they would do: read both branches, write main's
	// columns, create the clone in its namespace.
	"DiffTableBranch":       {Shape: tableShape, Table: authz.TableListBranches},
	"CherryPickTableBranch": {Shape: tableShape, Table: authz.TableAddColumns},
	"CloneTable":            {Shape: tableShape, Table: authz.TableCreate},

	// Issue 34: the remote client's job doors (package jobs). A job's table is in its record.
	"ListJobs":    {InService: "a listing: each job is filtered by its table (table.tasks)"},
	"DescribeJob": {InService: jobOnTable},
	"CancelJob":   {InService: jobOnTable},

	"ListEvents":   {Action: authz.EventsRead, Object: catalogObject},
	"GrantAccess":  {InService: "the door depends on the object type and relation in the body"},
	"RevokeAccess": {InService: "the door depends on the object type and relation in the body"},
	"ListAccess":   {InService: "the door depends on the object type in the query"},
	"DescribeMe":   {InService: "every caller may describe itself; what it holds is reported, never refused"},
	// Issue 18: what the server backs is no object's secret.
	"GetCapabilities": {InService: "describes the server, not an object: every authenticated caller may read it"},
}

const (
	warehouseOnProject = "checked on the warehouse's project, which only the warehouse record names; " +
		"a denial is answered like a missing warehouse"
	jobOnTable = "checked on the job's table (table.tasks), which only the job's record names; " +
		"a denial is answered like a missing job"
	inTrash = "decided by the trash (governance.Trash), which reads the trash record first"
)

// ControlChain is the chain of control operation op: identity, read-only mode, the shape of its
// path parameters, its action on its object (a denial answered as Missing says), then write
// shedding. An operation not in ControlDoors gets identity and the replica's guards only.
func ControlChain(op string, d Deps) Chain {
	c := NewChain(Identity(d.Authorizer))
	door, ok := ControlDoors[op]
	if !ok {
		return d.around(c)
	}
	for _, shape := range door.Shape {
		c = c.Then(shape(d.Delimiter))
	}
	if door.Table != "" && Authorizes(d.Authorizer) {
		return d.around(c.Then(Authorize(SpecDoor{Action: door.Table, Kind: KindTable}, d.Authorizer, d.Catalog)))
	}
	if door.Action == "" || !Authorizes(d.Authorizer) {
		return d.around(c)
	}
	a := d.Authorizer
	return d.around(c.Then(Guard{StageAuthorization, "authorize " + string(door.Action), func(ctx context.Context, r *Request) error {
		err := a.Check(ctx, r.Principal, door.Action, door.Object(r))
		if err != nil && door.Missing != nil {
			return Hidden(err, door.Missing(r))
		}
		return err
	}}))
}
