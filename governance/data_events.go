package governance

// Events of the data writes made through the Lance spec's table doors (recorded by
// catalog/governed's table handle through Changed, like the lifecycle events of changes.go).
// Each names the table (table:…) and carries the version the write committed ("version"), the
// branch when not main ("branch") and what it changed (row counts, column paths).
const (
	EventTableRowsInserted   = "table_rows_inserted"
	EventTableOverwritten    = "table_overwritten"
	EventTableRowsMerged     = "table_rows_merged"
	EventTableRowsUpdated    = "table_rows_updated"
	EventTableRowsDeleted    = "table_rows_deleted"
	EventTableColumnsAdded   = "table_columns_added"
	EventTableColumnsAltered = "table_columns_altered"
	EventTableColumnsDropped = "table_columns_dropped"
)
