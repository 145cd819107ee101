package namespace

// The handles of this root's tables (package table), and what they need of the root
// (table.Root): the transactions over several tables this root coordinates, which a table's
// reads settle and its version commits go through, and the root's background index builds.

import (
	"context"

	"github.com/lancecat/lancecat/catalog"
	"github.com/lancecat/lancecat/ident"
	"github.com/lancecat/lancecat/lance"
	"github.com/lancecat/lancecat/table"
)

// ManagedVersioningProperty is the root property that turns on table version management: the
// catalog is then the commit point of every table version (create_table_version).
const ManagedVersioningProperty = "table_version_management"

// managed reports whether the root property enables table version management.
func (s *snapshot) managed() bool {
	if s.ver == nil {
		return false
	}
	v := s.ver.Manifest().GetTableMetadata()[ManagedVersioningProperty]
	return v == "true" || v == "True" || v == "TRUE"
}

// LoadTable finds table id (as DescribeTable does) and returns its handle.
func (n *Namespace) LoadTable(ctx context.Context, id ident.ID) (catalog.Table, error) {
	t, err := n.describeTable(ctx, id)
	if err != nil {
		return nil, err
	}
	return n.handle(t), nil
}

// handle is the handle of entry t of this root.
func (n *Namespace) handle(t *entry) *table.Table { return table.New(tableRoot{n}, t.Entry) }

// dataset is table t's dataset on branch ("" or "main": the main branch).
func (n *Namespace) dataset(t *entry, branch string) (*lance.Dataset, error) {
	return table.OnBranch(n.Dataset(t.Entry), t.Entry, branch)
}

// tableErr adds table t to an error of the table layer (table.Err).
func tableErr(t *entry, err error) error { return table.Err(t.Entry, err) }

// indexBuilds are the background index builds of this root, made on first use.
func (n *Namespace) indexBuilds() *table.Builds {
	n.buildsOnce.Do(func() { n.builds = table.NewBuilds(n.opts.IndexBuild) })
	return n.builds
}

// WaitIndexBuilds waits until the background index builds this Namespace started have ended.
func (n *Namespace) WaitIndexBuilds() { n.indexBuilds().Wait() }

// CancelIndexBuilds cancels the running background index builds (a shutting-down replica):
// table.Builds.Cancel.
func (n *Namespace) CancelIndexBuilds() { n.indexBuilds().Cancel() }

// IndexTypes are the index types this namespace's CreateIndex builds (catalog.IndexTyper).
func (n *Namespace) IndexTypes() []string { return table.IndexTypes() }

var _ catalog.IndexTyper = (*Namespace)(nil)

// tableRoot is this root as its tables see it (table.Root). A table's entry is the catalog's; the
// settling below reads only its location and id, not how the manifest holds it.
type tableRoot struct{ n *Namespace }

// Namespace is the root itself, for a caller holding a table's handle (table.Table.Root) that
// needs more of its root than a table does (maintenance's stamp index).
func (r tableRoot) Namespace() *Namespace { return r.n }

func (r tableRoot) Dataset(e *catalog.Entry) *lance.Dataset { return r.n.Dataset(e) }

func (r tableRoot) SettleOpened(ctx context.Context, e *catalog.Entry, ds *lance.Dataset, v *lance.Version, err error) (*lance.Version, error) {
	return r.n.settleOpened(ctx, &entry{Entry: e}, ds, v, err)
}

func (r tableRoot) SettledLatest(ctx context.Context, e *catalog.Entry, branch string) (uint64, error) {
	return r.n.settledLatest(ctx, &entry{Entry: e}, branch)
}

func (r tableRoot) Declared(ctx context.Context, e *catalog.Entry) error {
	return r.n.declared(ctx, &entry{Entry: e})
}

func (r tableRoot) CommitTableVersions(ctx context.Context, kind string, entries []catalog.VersionEntry, opts ...catalog.Option) (catalog.Transaction, []catalog.TableVersion, error) {
	return r.n.CommitTableVersions(ctx, kind, entries, opts...)
}

func (r tableRoot) IndexBuilds() *table.Builds { return r.n.indexBuilds() }
