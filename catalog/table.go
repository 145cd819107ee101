package catalog

import (
	"context"

	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/lancecat/lancecat/dml"
	"github.com/lancecat/lancecat/ident"
	"github.com/lancecat/lancecat/lance"
	"github.com/lancecat/lancecat/query"
)

// The table handle and the words it speaks: a table's entry, the version a read sees, what a
// write did, and the writes a writer beside the handle prepares (PreparedCommit).

// TableOps is one table as LoadTable found it (catalog.Table): its entry and the operations on its
// dataset, in the root it was found in. branch "" is the main branch.
type Table interface {
	// Meta is the table's entry, as DescribeTable answers it.
	Meta() *Entry
	// State reads the dataset at the version or tag opts name (latest: nil for a declared table
	// no client has written yet).
	State(ctx context.Context, opts DescribeOptions) (*TableState, error)

	Restore(ctx context.Context, branch string, version int64) (uint64, error)
	Stats(ctx context.Context, branch string) (lance.TableStats, error)

	ListVersions(ctx context.Context, q VersionQuery) ([]TableVersion, string, error)
	DescribeVersion(ctx context.Context, branch string, version *int64) (TableVersion, error)
	CreateVersion(ctx context.Context, nv NewTableVersion) (TableVersion, error)
	DeleteVersions(ctx context.Context, branch string, ranges []lance.VersionRange) (int, error)

	ListTags(ctx context.Context, token string, limit int) ([]lance.Tag, string, error)
	GetTag(ctx context.Context, name string) (lance.Tag, error)
	CreateTag(ctx context.Context, name string, version int64, branch string) (lance.Tag, error)
	UpdateTag(ctx context.Context, name string, version int64, branch string) (lance.Tag, error)
	DeleteTag(ctx context.Context, name string) error

	// Branches (namespace/branches.go): Lance's own refs and tree/<name>/ clones.
	ListBranches(ctx context.Context, token string, limit int) ([]lance.Branch, string, error)
	CreateBranch(ctx context.Context, name, from string, version *int64) (lance.Branch, error)
	DeleteBranch(ctx context.Context, name string) error

	UpdateSchemaMetadata(ctx context.Context, branch string, updates lance.MetadataUpdate) (map[string]string, error)
	UpdateFieldMetadata(ctx context.Context, branch string, updates []FieldMetadataUpdate) (uint64, map[string]map[string]string, error)
	DropColumns(ctx context.Context, branch string, paths []string) (uint64, error)

	// The data plane (data.go): reads resolve the version they see, writes are one Lance
	// transaction each on the branch.
	Query(ctx context.Context, at ReadAt, req query.Request) (array.RecordReader, uint64, error)
	Count(ctx context.Context, at ReadAt, filter string) (count, version uint64, err error)
	Explain(ctx context.Context, at ReadAt, req query.Request, verbose bool) (string, error)
	Analyze(ctx context.Context, at ReadAt, req query.Request) (string, error)
	Insert(ctx context.Context, branch string, rs lance.RecordStream, overwrite bool) (WriteResult, error)
	Delete(ctx context.Context, branch, predicate string) (WriteResult, error)
	Update(ctx context.Context, branch, predicate string, set []dml.Assignment) (WriteResult, error)
	Merge(ctx context.Context, branch string, rs lance.RecordStream, m dml.MergeInsert) (WriteResult, error)
	AddColumns(ctx context.Context, branch string, cols []dml.NewColumn) (uint64, error)
	AlterColumns(ctx context.Context, branch string, alts []dml.Alteration) (uint64, error)

	// Indices (H-index, namespace/indices.go): scalar indices in Lance's format.
	CreateIndex(ctx context.Context, req CreateIndexRequest) (uint64, error)
	ListIndices(ctx context.Context, branch string, version *int64) ([]IndexDescription, error)
	IndexStats(ctx context.Context, branch string, version *int64, name string) (lance.IndexStats, error)
	DropIndex(ctx context.Context, branch string, name string) (uint64, error)

	// CommitPrepared commits, on the main branch, a write whose data files a writer beside the
	// handle already wrote into the table (package mview: a computed column's declaration, a
	// backfill's checkpoint, a view's refresh). It is a method of the handle, not a commit on its
	// dataset, so that every layer of the catalog sees the write (catalog/governed records it).
	// A lost race is the dataset's own error (lance.ErrCommitConflict), for the writer to retry.
	CommitPrepared(ctx context.Context, c PreparedCommit) (*lance.Version, error)

	// Dataset is the table's Lance dataset (main branch) in this server's storage, for the
	// writers beside the handle (package mview writes fragments into it, maintenance makes its
	// passes) and their reads. A write they prepare is still committed through the handle
	// (CommitPrepared), so every layer sees it. A handle with no dataset here (a remote
	// catalog's) answers Unsupported.
	Dataset() (*lance.Dataset, error)
	// KnownLatest is the latest manifest the load listed, when it listed one (a walk over every
	// table, namespace.Namespace.LoadAllTables), so the walk need not list it again.
	KnownLatest() (lance.ManifestLocation, bool)
}

// PreparedCommit is one write for CommitPrepared: Op, based on ReadVersion, and what it is.
type PreparedCommit struct {
	// What the write is: PreparedColumnsDeclared, PreparedColumnFilled or PreparedViewRefreshed.
	What string
	// Columns are the columns it declares or fills.
	Columns     []string
	Op          lance.Operation
	ReadVersion uint64
	// Attrs say more about it (a backfill's fragments, a refresh's mode), for its event.
	Attrs map[string]string
}

// The writes a PreparedCommit is.
const (
	PreparedColumnsDeclared = "columns_declared" // computed columns join the schema, all-null
	PreparedColumnFilled    = "column_filled"    // a backfill checkpoint: a computed column's values
	PreparedViewRefreshed   = "view_refreshed"   // a materialized view's rows, recomputed or merged
)

// Table is a table entry of the namespace.
type Entry struct {
	ID ident.ID
	// Location is the table directory relative to the root.
	Location string
	// URI is the location as Lance clients address it (under Options.RootURI).
	URI string
	// Properties are the properties given when the table was declared or registered.
	Properties map[string]string
	// StorageOptions are what a client needs to read and write URI (Options.StorageOptions).
	StorageOptions map[string]string
	// ManagedVersioning is set when the root enables table version management: clients must
	// commit versions through create_table_version.
	ManagedVersioning bool
}

// TableState is what a table's dataset says at one version.
type TableState struct {
	Version uint64
	Schema  lance.JSONSchema
	Stats   *lance.TableStats
}

// DescribeOptions select the version DescribeTable reads.
type DescribeOptions struct {
	Version *int64
	Tag     *string
	// Detailed adds the table's stats.
	Detailed bool
	// Branch reads a branch ("" or "main": the main branch).
	Branch string
}

// ReadAt is what a read sees: the latest version of Branch ("" or "main": the main branch), or
// Version, or the version Tag points at (at most one of Version and Tag).
type ReadAt struct {
	Branch  string
	Version *int64
	Tag     *string
}

// WriteResult is what a write did: the version it committed and the rows it touched.
type WriteResult struct {
	Version                    uint64
	Inserted, Updated, Deleted uint64
}

// FieldMetadataUpdate changes one field's metadata: a merge (nil deletes a key), or with
// Replace the field's whole metadata becomes the non-nil entries.
type FieldMetadataUpdate struct {
	Path     string
	Metadata lance.MetadataUpdate
	Replace  bool
}
