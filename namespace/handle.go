package namespace

import (
	"context"
	"sync"

	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/lancecat/lancecat/dml"
	"github.com/lancecat/lancecat/ident"
	"github.com/lancecat/lancecat/lance"
	"github.com/lancecat/lancecat/query"
)

// TableOps is one table as LoadTable found it (catalog.Table): its entry and the operations on its
// dataset, in the root it was found in. branch "" is the main branch.
type TableOps interface {
	// Meta is the table's entry, as DescribeTable answers it.
	Meta() *Table
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

// TableHandle is TableOps in this root. The dataset's latest version is read at most once per
// handle: a handle lives for one request.
type TableHandle struct {
	n *Namespace
	t *Table

	mu        sync.Mutex
	opened    bool
	latest    *lance.Version
	latestErr error

	// known is the latest manifest the load listed (LoadAllTables), if knownSet.
	known    lance.ManifestLocation
	knownSet bool
}

// LoadTable finds table id (as DescribeTable does) and returns its handle.
func (n *Namespace) LoadTable(ctx context.Context, id ident.ID) (TableOps, error) {
	t, err := n.DescribeTable(ctx, id)
	if err != nil {
		return nil, err
	}
	return n.handle(t), nil
}

var _ TableOps = (*TableHandle)(nil)

// handle is the handle of entry t of this root.
func (n *Namespace) handle(t *Table) *TableHandle { return &TableHandle{n: n, t: t} }

// CommitPrepared commits c on the main branch (see TableOps).
func (h *TableHandle) CommitPrepared(ctx context.Context, c PreparedCommit) (*lance.Version, error) {
	ds, err := h.writable(ctx, "")
	if err != nil {
		return nil, err
	}
	return ds.Commit(ctx, c.Op, lance.CommitOptions{ReadVersion: c.ReadVersion})
}

// Meta is the table's entry.
func (h *TableHandle) Meta() *Table { return h.t }

// Namespace is the root the table was found in.
func (h *TableHandle) Namespace() *Namespace { return h.n }

// Dataset is the table's dataset (main branch).
func (h *TableHandle) Dataset() *lance.Dataset { return h.n.Dataset(h.t) }

// openLatest opens the main branch's latest version, once per handle (its error too: the
// answer of one request is consistent).
func (h *TableHandle) openLatest(ctx context.Context, ds *lance.Dataset) (*lance.Version, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if !h.opened {
		h.latest, h.latestErr = ds.OpenLatest(ctx)
		h.latest, h.latestErr = h.n.settleOpened(ctx, h.t, ds, h.latest, h.latestErr)
		h.opened = true
	}
	return h.latest, h.latestErr
}

// latestOf opens the latest version of ds, the dataset of branch: once per handle on the main
// branch.
func (h *TableHandle) latestOf(ctx context.Context, ds *lance.Dataset, branch string) (*lance.Version, error) {
	if branch == "" || branch == "main" {
		return h.openLatest(ctx, ds)
	}
	return ds.OpenLatest(ctx)
}
