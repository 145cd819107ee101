package governance

// Events of the writes made through the Lance spec's table doors (recorded by catalog/governed's
// table handle through Changed, like the lifecycle events of changes.go): every door that writes
// a table records one (server.TestEveryWriteDoorRecordsItsEvent walks them). Each names the table
// (table:…) and carries the version the write committed ("version") when it made one, the branch
// when not main ("branch") and what it changed (row counts, column paths, the tag, branch or
// index).
const (
	EventTableRowsInserted   = "table_rows_inserted"
	EventTableOverwritten    = "table_overwritten"
	EventTableRowsMerged     = "table_rows_merged"
	EventTableRowsUpdated    = "table_rows_updated"
	EventTableRowsDeleted    = "table_rows_deleted"
	EventTableColumnsAdded   = "table_columns_added" // computed columns too ("computed": "true")
	EventTableColumnsAltered = "table_columns_altered"
	EventTableColumnsDropped = "table_columns_dropped"
	// EventTableColumnBackfilled is one checkpoint of a computed column's backfill ("column",
	// "fragments" filled by that commit).
	EventTableColumnBackfilled = "table_column_backfilled"
	// EventTableViewRefreshed is a materialized view's refresh commit ("mode": full or incremental).
	EventTableViewRefreshed = "table_view_refreshed"

	EventTableRestored             = "table_restored" // "restored_from": the version made latest again
	EventTableVersionCreated       = "table_version_created"
	EventTableVersionsDeleted      = "table_versions_deleted" // "deleted": how many
	EventTableTagCreated           = "table_tag_created"
	EventTableTagUpdated           = "table_tag_updated"
	EventTableTagDeleted           = "table_tag_deleted"
	EventTableBranchCreated        = "table_branch_created"
	EventTableBranchDeleted        = "table_branch_deleted"
	EventTableIndexCreated         = "table_index_created"
	EventTableIndexDropped         = "table_index_dropped"
	EventTableSchemaMetadataUpdate = "table_schema_metadata_updated" // "keys": the keys set or removed
	EventTableFieldMetadataUpdate  = "table_field_metadata_updated"
	// EventTransactionAltered is alter_transaction: on the transaction's namespace, naming the
	// transaction ("transaction") and its status after the change ("status").
	EventTransactionAltered = "transaction_altered"
)
