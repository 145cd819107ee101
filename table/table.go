package table

import (
	"context"
	"errors"
	"sync"

	"github.com/lancecat/lancecat/catalog"
	nserr "github.com/lancecat/lancecat/errors"
	"github.com/lancecat/lancecat/ident"
	"github.com/lancecat/lancecat/lance"
)

// Root is what a table's operations need of the directory namespace that holds it (package
// namespace): its dataset, and the transactions over several tables the root coordinates, which
// a table's reads settle before they answer and its version commits go through.
type Root interface {
	// Dataset is the dataset (main branch) of entry e in the root's storage.
	Dataset(e *catalog.Entry) *lance.Dataset
	// SettleOpened is the main branch's latest version once the root's committed transactions
	// are published, given the version the table opened (v, or its error err).
	SettleOpened(ctx context.Context, e *catalog.Entry, ds *lance.Dataset, v *lance.Version, err error) (*lance.Version, error)
	// SettledLatest publishes what committed transactions left pending on branch of e and
	// returns its latest version number.
	SettledLatest(ctx context.Context, e *catalog.Entry, branch string) (uint64, error)
	// Declared answers a read of e, which has no version: nil for a declared table, TableNotFound
	// for an entry that is no table.
	Declared(ctx context.Context, e *catalog.Entry) error
	// CommitTableVersions commits versions of tables as one transaction of the root.
	CommitTableVersions(ctx context.Context, kind string, entries []catalog.VersionEntry, opts ...catalog.Option) (catalog.Transaction, []catalog.TableVersion, error)
	// IndexBuilds are the root's background index builds.
	IndexBuilds() *Builds
}

// Table is one table of a root (catalog.Table): its entry and the operations on its dataset.
// The dataset's latest version is read at most once per handle: a handle lives for one request.
type Table struct {
	root Root
	t    *catalog.Entry

	mu        sync.Mutex
	opened    bool
	latest    *lance.Version
	latestErr error

	// known is the latest manifest the load listed (LoadAllTables), if knownSet.
	known    lance.ManifestLocation
	knownSet bool
}

var _ catalog.Table = (*Table)(nil)

// New is the handle of entry e of root.
func New(root Root, e *catalog.Entry) *Table { return &Table{root: root, t: e} }

// NewKnown is New for a table whose latest manifest the load that found it listed (known; a zero
// Version: declared, no version yet): KnownLatest answers it.
func NewKnown(root Root, e *catalog.Entry, known lance.ManifestLocation) *Table {
	return &Table{root: root, t: e, known: known, knownSet: true}
}

// CommitPrepared commits c on the main branch (see catalog.Table).
func (h *Table) CommitPrepared(ctx context.Context, c catalog.PreparedCommit) (*lance.Version, error) {
	ds, err := h.writable(ctx, "")
	if err != nil {
		return nil, err
	}
	return ds.Commit(ctx, c.Op, lance.CommitOptions{ReadVersion: c.ReadVersion})
}

// Root is the root the table was found in.
func (h *Table) Root() Root { return h.root }

// Meta is the table's entry.
func (h *Table) Meta() *catalog.Entry { return h.t }

// Dataset is the table's dataset (main branch); a handle of a root always has one.
func (h *Table) Dataset() (*lance.Dataset, error) { return h.root.Dataset(h.t), nil }

// KnownLatest is the table's latest manifest as the load that made this handle listed it (a
// zero Version: the table is only declared), and whether that load listed it at all. It is what
// the versions said a moment ago, for a caller that compares it with its own record (the sweep:
// a version written since is seen by the next sweep); an operation that writes reads its own.
func (h *Table) KnownLatest() (lance.ManifestLocation, bool) { return h.known, h.knownSet }

// openLatest opens the main branch's latest version, once per handle (its error too: the
// answer of one request is consistent).
func (h *Table) openLatest(ctx context.Context, ds *lance.Dataset) (*lance.Version, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if !h.opened {
		h.latest, h.latestErr = ds.OpenLatest(ctx)
		h.latest, h.latestErr = h.root.SettleOpened(ctx, h.t, ds, h.latest, h.latestErr)
		h.opened = true
	}
	return h.latest, h.latestErr
}

// latestOf opens the latest version of ds, the dataset of branch: once per handle on the main
// branch.
func (h *Table) latestOf(ctx context.Context, ds *lance.Dataset, branch string) (*lance.Version, error) {
	if branch == "" || branch == "main" {
		return h.openLatest(ctx, ds)
	}
	return ds.OpenLatest(ctx)
}

// State reads the table's dataset: its latest version, or the version or tag opts name. It is nil
// for a declared table no client has written yet.
func (h *Table) State(ctx context.Context, opts catalog.DescribeOptions) (*catalog.TableState, error) {
	t := h.t
	ds, err := h.branchDataset(ctx, opts.Branch)
	if err != nil {
		return nil, err
	}
	var ver *lance.Version
	switch {
	case opts.Version != nil:
		if *opts.Version < 0 {
			return nil, nserr.InvalidInputf("version %d is negative", *opts.Version)
		}
		ver, err = ds.OpenVersion(ctx, uint64(*opts.Version))
		if errors.Is(err, lance.ErrVersionNotFound) || errors.Is(err, lance.ErrDatasetNotFound) {
			return nil, nserr.TableVersionNotFoundf("table %s has no version %d", quoteID(t.ID), *opts.Version)
		}
	case opts.Tag != nil:
		ver, err = ds.OpenTag(ctx, *opts.Tag)
	default:
		ver, err = h.latestOf(ctx, ds, opts.Branch)
		if errors.Is(err, lance.ErrDatasetNotFound) {
			return nil, h.root.Declared(ctx, t)
		}
	}
	if err != nil {
		return nil, Err(t, err)
	}
	st := &catalog.TableState{Version: ver.Number()}
	if st.Schema, err = ver.JSONSchema(); err != nil {
		return nil, err
	}
	if opts.Detailed {
		stats, err := ver.Stats()
		if err != nil {
			return nil, err
		}
		st.Stats = &stats
	}
	return st, nil
}

// quoteID names table id in a message, its parts joined as the manifest joins them.
func quoteID(id ident.ID) string { return "'" + id.Join("$") + "'" }
