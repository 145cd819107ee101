package namespace

import (
	"context"
	"sync"

	"github.com/lancecat/lancecat/catalog"
	"github.com/lancecat/lancecat/ident"
	"github.com/lancecat/lancecat/lance"
)

// TableHandle is TableOps in this root. The dataset's latest version is read at most once per
// handle: a handle lives for one request.
type TableHandle struct {
	n *Namespace
	t *entry

	mu        sync.Mutex
	opened    bool
	latest    *lance.Version
	latestErr error

	// known is the latest manifest the load listed (LoadAllTables), if knownSet.
	known    lance.ManifestLocation
	knownSet bool
}

// LoadTable finds table id (as DescribeTable does) and returns its handle.
func (n *Namespace) LoadTable(ctx context.Context, id ident.ID) (catalog.Table, error) {
	t, err := n.describeTable(ctx, id)
	if err != nil {
		return nil, err
	}
	return n.handle(t), nil
}

var _ catalog.Table = (*TableHandle)(nil)

// handle is the handle of entry t of this root.
func (n *Namespace) handle(t *entry) *TableHandle { return &TableHandle{n: n, t: t} }

// CommitPrepared commits c on the main branch (see TableOps).
func (h *TableHandle) CommitPrepared(ctx context.Context, c catalog.PreparedCommit) (*lance.Version, error) {
	ds, err := h.writable(ctx, "")
	if err != nil {
		return nil, err
	}
	return ds.Commit(ctx, c.Op, lance.CommitOptions{ReadVersion: c.ReadVersion})
}

// Meta is the table's entry.
func (h *TableHandle) Meta() *catalog.Entry { return h.t.Entry }

// Namespace is the root the table was found in.
func (h *TableHandle) Namespace() *Namespace { return h.n }

// Dataset is the table's dataset (main branch); a handle of this root always has one.
func (h *TableHandle) Dataset() (*lance.Dataset, error) { return h.n.Dataset(h.t.Entry), nil }

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
