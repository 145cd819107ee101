package authz

// The doors of the Lance Namespace spec (54 operations), named after their route suffix.
const (
	// Creates are checked on the parent: the object does not exist yet.
	TableCreate            Action = "table.create"
	TableDeclare           Action = "table.declare"
	TableRegister          Action = "table.register"
	NamespaceCreate        Action = "namespace.create"
	MaterializedViewCreate Action = "materialized_view.create"

	// Owner tier: destroys, pointer moves and anything that rewrites history.
	TableDrop           Action = "table.drop"
	TableDeregister     Action = "table.deregister"
	TableRename         Action = "table.rename" // the source; the destination is TableCreate on its namespace
	TableRestore        Action = "table.restore"
	TableDeleteVersions Action = "table.version.delete"
	TableCreateBranch   Action = "table.branches.create"
	TableDeleteBranch   Action = "table.branches.delete"
	TableCreateTag      Action = "table.tags.create"
	TableUpdateTag      Action = "table.tags.update"
	TableDeleteTag      Action = "table.tags.delete"
	NamespaceDrop       Action = "namespace.drop"

	// Metadata reads.
	TableDescribe        Action = "table.describe"
	TableExists          Action = "table.exists"
	TableStats           Action = "table.stats"
	TableExplainPlan     Action = "table.explain_plan"
	TableAnalyzePlan     Action = "table.analyze_plan"
	TableListIndices     Action = "table.index.list"
	TableIndexStats      Action = "table.index.stats"
	TableListVersions    Action = "table.version.list"
	TableDescribeVersion Action = "table.version.describe"
	TableListTags        Action = "table.tags.list"
	TableGetTagVersion   Action = "table.tags.version"
	TableListBranches    Action = "table.branches.list"
	NamespaceDescribe    Action = "namespace.describe"
	NamespaceExists      Action = "namespace.exists"
	NamespaceList        Action = "namespace.list"       // the namespaces inside one (then Filter NamespaceListEntry)
	NamespaceListTables  Action = "namespace.table.list" // the tables inside one (then Filter TableListEntry)
	TransactionDescribe  Action = "transaction.describe" // checked on the transaction's namespace (its id's parent)

	// Data reads.
	TableQuery     Action = "table.query"
	TableCountRows Action = "table.count_rows"

	// Writer tier: data and schema changes that keep history.
	TableInsert               Action = "table.insert"
	TableMergeInsert          Action = "table.merge_insert"
	TableDeleteRows           Action = "table.delete"
	TableUpdateRows           Action = "table.update"
	TableAddColumns           Action = "table.add_columns"
	TableAlterColumns         Action = "table.alter_columns"
	TableDropColumns          Action = "table.drop_columns"
	TableBackfillColumn       Action = "table.backfill_column"
	TableCreateIndex          Action = "table.create_index"
	TableCreateScalarIndex    Action = "table.create_scalar_index"
	TableDropIndex            Action = "table.index.drop"
	TableUpdateSchemaMetadata Action = "table.schema_metadata.update"
	TableUpdateFieldMetadata  Action = "table.update_field_metadata"
	TableCreateVersion        Action = "table.version.create"
	TableBatchCommit          Action = "table.batch_commit"         // each entry of POST /v1/table/batch-commit
	TableBatchCreateVersion   Action = "table.version.batch_create" // each entry of POST /v1/table/version/batch-create
	MaterializedViewRefresh   Action = "materialized_view.refresh"  // a view is stored as a table; refreshing rewrites it
	TransactionAlter          Action = "transaction.alter"          // checked on the transaction's namespace (its id's parent)

	// Per-item checks of listings (see Authorizer.Filter).
	TableListEntry     Action = "table.list_entry"
	NamespaceListEntry Action = "namespace.list_entry"
	WarehouseListEntry Action = "warehouse.list_entry"
)

// Governance doors on tables and namespaces (the control-plane verbs).
const (
	TableProtectionDescribe     Action = "table.protection.describe"
	TableProtectionSet          Action = "table.protection.set"
	TableUndrop                 Action = "table.undrop"
	TableTasks                  Action = "table.tasks"
	TablePolicySet              Action = "table.policy.set"
	TablePolicyDescribe         Action = "table.policy.describe"
	TablePolicyDelete           Action = "table.policy.delete"
	TableAccessList             Action = "table.access.list"
	TableAccessCheck            Action = "table.access.check"
	TableAccessGraph            Action = "table.access.graph"
	TableMyPermissions          Action = "table.access.my_permissions"
	TableMaintenancePreview     Action = "table.maintenance.preview"
	TableMaintenanceRun         Action = "table.maintenance.run"
	TableMaintenanceCompact     Action = "table.maintenance.compact"
	TableMaintenanceReindex     Action = "table.maintenance.reindex"
	TablePublish                Action = "table.publish"
	TablePublishAccept          Action = "table.publish.accept_assertions"
	TableCredentialsRead        Action = "table.credentials.read"
	TableCredentialsWrite       Action = "table.credentials.write"
	TableCredentialsMaintain    Action = "table.credentials.maintain"
	TableCommit                 Action = "table.commit"
	TableBlobs                  Action = "table.blobs"
	TableHistory                Action = "table.history"
	TableChanges                Action = "table.changes"
	TableErasure                Action = "table.erasure"
	TableCompactionPlan         Action = "table.compaction_plan"
	TableCompactionCommit       Action = "table.compaction_commit"
	NamespaceProtectionDescribe Action = "namespace.protection.describe"
	NamespaceProtectionSet      Action = "namespace.protection.set"
	NamespaceUndrop             Action = "namespace.undrop"
	NamespaceTasks              Action = "namespace.tasks"
	NamespacePolicySet          Action = "namespace.policy.set"
	NamespacePolicyDescribe     Action = "namespace.policy.describe"
	NamespacePolicyDelete       Action = "namespace.policy.delete"
	NamespaceAccessList         Action = "namespace.access.list"
	NamespaceAccessCheck        Action = "namespace.access.check"
	NamespaceAccessGraph        Action = "namespace.access.graph"
	NamespaceMyPermissions      Action = "namespace.access.my_permissions"
	NamespaceManagedAccessGet   Action = "namespace.managed_access.describe"
	NamespaceManagedAccessSet   Action = "namespace.managed_access.set"

	// Granting and revoking on a table, namespace or warehouse: the rung picks the door
	// (GrantAction, RevokeAction). Each door asks that the caller holds the rung itself.
	AccessGrantOwner         Action = "access.grant.owner"
	AccessGrantWriter        Action = "access.grant.writer"
	AccessGrantReader        Action = "access.grant.reader"
	AccessGrantValidator     Action = "access.grant.validator"
	AccessGrantMaintainer    Action = "access.grant.maintainer"
	AccessGrantManageGrants  Action = "access.grant.manage_grants"
	AccessGrantPassGrants    Action = "access.grant.pass_grants"
	AccessRevokeOwner        Action = "access.revoke.owner"
	AccessRevokeWriter       Action = "access.revoke.writer"
	AccessRevokeReader       Action = "access.revoke.reader"
	AccessRevokeValidator    Action = "access.revoke.validator"
	AccessRevokeMaintainer   Action = "access.revoke.maintainer"
	AccessRevokeManageGrants Action = "access.revoke.manage_grants"
	AccessRevokePassGrants   Action = "access.revoke.pass_grants"
)

// Control-plane doors: projects, warehouses, the estate.
const (
	ProjectCreate         Action = "project.create" // on Catalog: estate admins mint tenants
	ProjectList           Action = "project.list"   // on Catalog
	ProjectDescribe       Action = "project.describe"
	ProjectDelete         Action = "project.delete"
	ProjectMembersList    Action = "project.members.list"
	ProjectGrantAdmin     Action = "project.members.grant_admin"
	ProjectGrantMember    Action = "project.members.grant_member"
	ProjectRevokeAdmin    Action = "project.members.revoke_admin"
	ProjectRevokeMember   Action = "project.members.revoke_member"
	ProjectMyPermissions  Action = "project.access.my_permissions"
	ProjectPoliciesList   Action = "project.policies.list"
	ProjectPolicySet      Action = "project.policy.set"
	ProjectPolicyDescribe Action = "project.policy.describe"
	ProjectPolicyDelete   Action = "project.policy.delete"

	WarehouseCreate           Action = "warehouse.create" // on the project
	WarehouseDescribe         Action = "warehouse.describe"
	WarehouseListNamespaces   Action = "warehouse.namespaces.list"
	WarehouseAccessList       Action = "warehouse.access.list"
	WarehouseCreateNamespace  Action = "warehouse.namespaces.create"
	WarehouseUnbindNamespace  Action = "warehouse.namespaces.unbind" // on the project
	WarehouseDeactivate       Action = "warehouse.deactivate"        // on the project
	WarehouseActivate         Action = "warehouse.activate"          // on the project
	WarehouseDelete           Action = "warehouse.delete"            // on the project
	WarehouseMyPermissions    Action = "warehouse.access.my_permissions"
	WarehouseManagedAccessGet Action = "warehouse.managed_access.describe"
	WarehouseManagedAccessSet Action = "warehouse.managed_access.set"

	EventsRead Action = "events.read" // on Catalog
	// On Catalog: CreateNamespace of the root namespace over itself (ExistOk/Overwrite), which sets
	// estate-wide properties such as table_version_management.
	CatalogPropertiesSet Action = "catalog.properties.set"
	AccessAdmin          Action = "access.admin" // on Catalog: raw tuples, check, expand, list, simulate, model

	// NamespaceContentsRead is no door of its own: it asks whether a caller reads everything a
	// namespace (a warehouse, the catalog) holds, the relation every object inside inherits. Only
	// such a caller is told that an id inside it is free (404); anyone else gets a door's 403
	// whether or not the object exists.
	NamespaceContentsRead Action = "namespace.contents.read"
)

// tableParents are the types a table's parent may be: its namespace, or the Catalog for a table at
// the root namespace (a single-part id). A view's and a transaction's parents are the same.
var tableParents = []string{TypeNamespace, TypeCatalog}

// rules is the whole door → relation table (reference §2.2, with every formerly unmapped
// destructive verb made explicit: branch delete and version delete are owner tier).
var rules = map[Action]rule{
	TableCreate:     parentIs("can_create_table", tableParents),
	TableDeclare:    parentIs("can_create_table", tableParents),
	TableRegister:   parentIs("can_create_table", tableParents),
	NamespaceCreate: parentIs("can_create_namespace", namespaceParents),
	// A materialized view is materialized into a Lance table at the view's id: creating one is
	// creating a table there (a namespace's can_create_materialized_view is the same writer tier),
	// and can_create_table is also defined on the Catalog, the parent of a view at the root.
	MaterializedViewCreate: parentIs("can_create_table", tableParents),

	TableDrop:           is("can_drop", onTable),
	TableDeregister:     is("can_deregister", onTable),
	TableRename:         is("can_drop", onTable),
	TableRestore:        is("can_restore", onTable),
	TableDeleteVersions: is("can_drop", onTable),
	TableCreateBranch:   is("can_create_branch", onTable),
	TableDeleteBranch:   is("can_drop", onTable),
	TableCreateTag:      is("can_create_tag", onTable),
	TableUpdateTag:      is("can_update_tag", onTable),
	TableDeleteTag:      is("can_drop", onTable),
	NamespaceDrop:       is("can_delete", onNamespace),

	NamespaceContentsRead: is("reads", namespaceParents),

	TableDescribe:        is("can_get_metadata", onTable),
	TableExists:          is("can_get_metadata", onTable),
	TableStats:           is("can_get_metadata", onTable),
	TableListIndices:     is("can_get_metadata", onTable),
	TableIndexStats:      is("can_get_metadata", onTable),
	TableListVersions:    is("can_get_metadata", onTable),
	TableDescribeVersion: is("can_get_metadata", onTable),
	TableListTags:        is("can_get_metadata", onTable),
	TableGetTagVersion:   is("can_get_metadata", onTable),
	TableListBranches:    is("can_get_metadata", onTable),
	NamespaceDescribe:    is("can_get_metadata", onNamespace),
	NamespaceExists:      is("can_get_metadata", onNamespace),
	NamespaceList:        is("can_get_metadata", onNamespace),
	NamespaceListTables:  is("can_get_metadata", onNamespace),
	// A transaction's id is its namespace's id plus its own name, like a table's: it is checked on
	// that namespace (the Catalog, for a transaction at the root). reads, not can_get_metadata:
	// a navigator, who only sees that the namespace exists, learns nothing of its transactions.
	TransactionDescribe: parentIs("reads", tableParents),

	TableQuery:     is("can_read_data", onTable),
	TableCountRows: is("can_read_data", onTable),
	// A plan names the filter's columns and, analyzed, how many rows matched at each stage: the
	// count of any predicate, which is reading the data.
	TableExplainPlan: is("can_read_data", onTable),
	TableAnalyzePlan: is("can_read_data", onTable),

	TableInsert:               is("can_write_data", onTable),
	TableMergeInsert:          is("can_write_data", onTable),
	TableDeleteRows:           is("can_write_data", onTable),
	TableUpdateRows:           is("can_write_data", onTable),
	TableAddColumns:           is("can_write_data", onTable),
	TableAlterColumns:         is("can_write_data", onTable),
	TableDropColumns:          is("can_write_data", onTable),
	TableBackfillColumn:       is("can_write_data", onTable),
	TableCreateIndex:          is("can_write_data", onTable),
	TableCreateScalarIndex:    is("can_write_data", onTable),
	TableDropIndex:            is("can_write_data", onTable),
	TableUpdateSchemaMetadata: is("can_write_data", onTable),
	TableUpdateFieldMetadata:  is("can_write_data", onTable),
	TableCreateVersion:        is("can_write_data", onTable),
	TableBatchCommit:          is("can_write_data", onTable),
	TableBatchCreateVersion:   is("can_write_data", onTable),
	MaterializedViewRefresh:   is("can_write_data", onTable),
	TransactionAlter:          parentIs("can_update_properties", tableParents),

	TableListEntry:     is("can_read_data", onTable),
	NamespaceListEntry: is("can_get_metadata", onNamespace),
	WarehouseListEntry: is("can_get_metadata", onWarehouse),

	TableProtectionDescribe:     is("can_drop", onTable),
	TableProtectionSet:          is("can_drop", onTable),
	TableUndrop:                 is("can_drop", onTable),
	TableTasks:                  is("can_get_metadata", onTable),
	TablePolicySet:              is("can_drop", onTable),
	TablePolicyDescribe:         is("can_get_metadata", onTable),
	TablePolicyDelete:           is("can_drop", onTable),
	TableAccessList:             is("can_drop", onTable),
	TableAccessCheck:            is("can_drop", onTable),
	TableAccessGraph:            is("can_drop", onTable),
	TableMyPermissions:          is("can_get_metadata", onTable),
	TableMaintenancePreview:     is("can_maintain", onTable),
	TableMaintenanceRun:         is("can_maintain", onTable),
	TableMaintenanceCompact:     is("can_drop", onTable),
	TableMaintenanceReindex:     is("can_drop", onTable),
	TablePublish:                is("can_update_tag", onTable),
	TablePublishAccept:          is("can_promote", onTable),
	TableCredentialsRead:        is("can_read_data", onTable),
	TableCredentialsWrite:       is("can_write_data", onTable),
	TableCredentialsMaintain:    is("can_maintain", onTable),
	TableCommit:                 is("can_write_data", onTable),
	TableBlobs:                  is("can_read_data", onTable),
	TableHistory:                is("can_get_metadata", onTable),
	TableChanges:                is("can_read_data", onTable),
	TableErasure:                is("can_drop", onTable),
	TableCompactionPlan:         is("can_maintain", onTable),
	TableCompactionCommit:       is("can_maintain", onTable),
	NamespaceProtectionDescribe: is("can_delete", onNamespace),
	NamespaceProtectionSet:      is("can_delete", onNamespace),
	NamespaceUndrop:             is("can_delete", onNamespace),
	NamespaceTasks:              is("can_get_metadata", onNamespace),
	NamespacePolicySet:          is("can_delete", onNamespace),
	NamespacePolicyDescribe:     is("can_get_metadata", onNamespace),
	NamespacePolicyDelete:       is("can_delete", onNamespace),
	NamespaceAccessList:         is("can_delete", onNamespace),
	NamespaceAccessCheck:        is("can_delete", onNamespace),
	NamespaceAccessGraph:        is("can_delete", onNamespace),
	NamespaceMyPermissions:      is("can_get_metadata", onNamespace),
	NamespaceManagedAccessGet:   is("can_get_metadata", onNamespace),
	NamespaceManagedAccessSet:   is("can_set_managed_access", onNamespace),

	AccessGrantOwner:         is("can_grant_owner", onGrantable),
	AccessGrantWriter:        is("can_grant_writer", onGrantable),
	AccessGrantReader:        is("can_grant_reader", onGrantable),
	AccessGrantValidator:     is("can_grant_validator", onGrantable),
	AccessGrantMaintainer:    is("can_grant_maintainer", onGrantable),
	AccessGrantManageGrants:  is("can_grant_manage_grants", onGrantable),
	AccessGrantPassGrants:    is("can_grant_pass_grants", onGrantable),
	AccessRevokeOwner:        is("can_revoke_owner", onGrantable),
	AccessRevokeWriter:       is("can_revoke_writer", onGrantable),
	AccessRevokeReader:       is("can_revoke_reader", onGrantable),
	AccessRevokeValidator:    is("can_revoke_validator", onGrantable),
	AccessRevokeMaintainer:   is("can_revoke_maintainer", onGrantable),
	AccessRevokeManageGrants: is("can_revoke_manage_grants", onGrantable),
	AccessRevokePassGrants:   is("can_revoke_pass_grants", onGrantable),

	ProjectCreate:         is("can_create_project", onCatalog),
	ProjectList:           is("can_list_projects", onCatalog),
	ProjectDescribe:       is("can_list_projects", onCatalog),
	ProjectDelete:         is("can_administer", onProject),
	ProjectMembersList:    is("can_read_assignments", onProject),
	ProjectGrantAdmin:     is("can_grant_admin", onProject),
	ProjectGrantMember:    is("can_grant_member", onProject),
	ProjectRevokeAdmin:    is("can_grant_admin", onProject),
	ProjectRevokeMember:   is("can_grant_member", onProject),
	ProjectMyPermissions:  is("member", onProject), // a project has no reader-tier can_*: membership is the floor
	ProjectPoliciesList:   is("can_administer", onProject),
	ProjectPolicySet:      is("can_administer", onProject),
	ProjectPolicyDescribe: is("can_administer", onProject),
	ProjectPolicyDelete:   is("can_administer", onProject),

	WarehouseCreate:           parentIs("can_create_warehouse", onProject),
	WarehouseDescribe:         is("can_get_metadata", onWarehouse),
	WarehouseListNamespaces:   is("can_get_metadata", onWarehouse),
	WarehouseAccessList:       is("can_read_assignments", onWarehouse),
	WarehouseCreateNamespace:  is("can_create_namespace", onWarehouse),
	WarehouseUnbindNamespace:  parentIs("can_administer", onProject),
	WarehouseDeactivate:       parentIs("can_create_warehouse", onProject),
	WarehouseActivate:         parentIs("can_create_warehouse", onProject),
	WarehouseDelete:           parentIs("can_administer", onProject),
	WarehouseMyPermissions:    is("can_get_metadata", onWarehouse),
	WarehouseManagedAccessGet: is("can_get_metadata", onWarehouse),
	WarehouseManagedAccessSet: is("can_set_managed_access", onWarehouse),

	EventsRead:           is("can_observe_events", onCatalog),
	CatalogPropertiesSet: is("can_update_properties", onCatalog),
	AccessAdmin:          is("can_administer_access", onCatalog),
}
