package catalog

import (
	"time"

	"github.com/lancecat/lancecat/ident"
	"github.com/lancecat/lancecat/lance"
)

// Versions and transactions: what the version operations report and take, and the entries and
// actions of the spec's batch and transaction operations.

// TableVersion is one version of a table as the version operations report it.
type TableVersion struct {
	Version uint64
	// ManifestPath is the manifest's path in object-store form (no scheme, no leading "/",
	// relative to the store root: the bucket, or "/" for local files), unless the client sent
	// another form to create_table_version, whose answer then uses that form.
	ManifestPath string
	ManifestSize int64
	ETag         string
	Timestamp    time.Time
	Metadata     map[string]string
	// TransactionID is the transaction that created the version (CreateVersion's answer only).
	TransactionID ident.ID
	// Deleted is how many versions a delete_table_versions entry of a batch deleted (its
	// answer only; the other fields are unset then).
	Deleted int
	// Table is the table a declare_table or deregister_table entry of a batch declared or
	// deregistered (its answer only; the other fields are unset then).
	Table *Entry
}

// VersionQuery selects a page of versions.
type VersionQuery struct {
	Branch     string
	Descending bool
	// Limit caps the page (<= 0: all); Token is the last version of the previous page.
	Limit int
	Token string
}

// NewTableVersion is a create_table_version request: a manifest the client staged.
type NewTableVersion struct {
	Version      int64
	ManifestPath string
	ManifestSize *int64
	NamingScheme string // "V1", "V2" or "" (V2)
	Branch       string
	Metadata     map[string]string
}

// VersionEntry is one version of a batch: the table and its staged manifest.
type VersionEntry struct {
	Table ident.ID
	NewTableVersion
	// Delete, when set, makes the entry a delete_table_versions of the table instead
	// (batch_commit_tables only; NewTableVersion is unused then).
	Delete *VersionDeletion
	// Declare, when set, makes the entry a declare_table of Table; Deregister a
	// deregister_table of it (batch_commit_tables only: batch_catalog.go).
	Declare    *TableDeclaration
	Deregister bool
}

// VersionDeletion is a delete_table_versions entry of a batch: the versions of Branch in
// Ranges ([start, end); end < 0: through the latest).
type VersionDeletion struct {
	Branch string
	Ranges []lance.VersionRange
}

// TableDeclaration is a declare_table entry of a batch: Location "" picks one.
type TableDeclaration struct {
	Location   string
	Properties map[string]string
}

// Transaction statuses (the spec's TransactionStatus, in its PascalCase spelling).
const (
	TxnQueued    = "Queued"
	TxnRunning   = "Running"
	TxnSucceeded = "Succeeded"
	TxnFailed    = "Failed"
	TxnCanceled  = "Canceled"
)

// Transaction kinds: the operation that made the transaction.
const (
	TxnCreateTableVersion       = "create_table_version"
	TxnBatchCreateTableVersions = "batch_create_table_versions"
	TxnBatchCommitTables        = "batch_commit_tables"
)

// Transaction is a transaction as describe_transaction answers it.
type Transaction struct {
	// ID is the transaction's id: the namespace of the (first) table it touches, then its name.
	ID         ident.ID
	Status     string
	Properties map[string]string
}

// TransactionAction is one action of alter_transaction: exactly one of its fields is set.
type TransactionAction struct {
	SetStatus *string
	Set       *PropertySet
	Unset     *PropertyUnset
}

// PropertySet sets Key to Value; Mode is Overwrite (default), Fail or Skip when it is set.
type PropertySet struct{ Key, Value, Mode string }

// PropertyUnset removes Key; Mode is Skip (default) or Fail when it is not set.
type PropertyUnset struct{ Key, Mode string }
