package namespace

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"

	"github.com/lancecat/lancecat/catalog"
	"github.com/lancecat/lancecat/lance"
	"github.com/lancecat/lancecat/storage"
	"github.com/lancecat/lancecat/table"
)

// Delimiter joins the parts of an object id in the manifest (fixed by the format).
const Delimiter = "$"

// Marker files inside a table directory.
const (
	ReservedMarker     = ".lance-reserved"
	DeregisteredMarker = ".lance-deregistered"
)

// Options configure a Namespace.
type Options struct {
	// RootURI is the root as Lance clients address it: an absolute local path or a URI
	// ("s3://bucket/prefix"). Table locations are answered under it.
	RootURI string
	// StorageOptions are handed to clients with every table location (endpoint, credentials…).
	StorageOptions map[string]string
	// DisableCompatibility turns off compatibility mode: root tables are then only those in the
	// manifest, and new root tables get hashed directories.
	DisableCompatibility bool
	// CompactAfter is the number of manifest fragments at which a write rewrites the live rows
	// into one fragment; 0 means 64.
	CompactAfter int
	// Reserved are paths under the root (relative to it) the server keeps for itself: its control
	// root, a warehouse root inside the catalog root… (ReservedUnder finds them). No table location
	// may be, contain or lie inside one; __manifest, the storage's temp area and _lancecat are
	// always reserved.
	Reserved []string
	// IndexBuild says which index builds run in the background and how they report
	// (table.Builds).
	IndexBuild table.IndexBuildOptions
}

// Namespace is the Lance directory namespace V2 over one root. It is safe for concurrent use,
// also by several processes (and LanceDB's own directory namespace) on the same root: every
// write is a Lance commit validated against the version it is based on.
type Namespace struct {
	root     storage.Bucket
	manifest *lance.Dataset
	opts     Options
	reserved []string // Options.Reserved and the built-in reserved paths

	mu  sync.Mutex // serialises snapshot loads
	cur *snapshot

	// hooks run another operation at a point of a create, declare, overwrite or drop, in tests
	// (export_test.go); nil otherwise.
	hooks map[hookPoint]func(*entry)

	buildsOnce sync.Once
	builds     *table.Builds // the background index builds (indexBuilds)
}

// New serves the directory namespace whose root is bucket. Nothing is read or written until the
// first operation; the manifest table is created by the first write.
func New(bucket storage.Bucket, opts Options) *Namespace {
	if opts.CompactAfter <= 0 {
		opts.CompactAfter = 64
	}
	opts.RootURI = strings.TrimRight(opts.RootURI, "/")
	return &Namespace{
		root:     bucket,
		manifest: lance.NewDataset(storage.Sub(bucket, ManifestTable+"/")),
		opts:     opts,
		reserved: reservedPaths(opts.Reserved),
	}
}

// snapshot returns the newest version of the manifest table. A cached version is current when
// the next version's manifest does not exist: one stat per call instead of a listing.
func (n *Namespace) snapshot(ctx context.Context) (*snapshot, error) {
	n.mu.Lock()
	defer n.mu.Unlock()
	cur := n.cur
	if cur != nil && cur.ver != nil {
		next := cur.ver.Location.Scheme.ManifestKey(cur.ver.Number() + 1)
		_, err := n.manifest.Store().Stat(ctx, next)
		if errors.Is(err, storage.ErrNotFound) {
			return cur, nil
		}
		if err != nil {
			return nil, fmt.Errorf("namespace: stat %s: %w", next, err)
		}
	}
	ver, err := n.manifest.OpenLatest(ctx)
	if errors.Is(err, lance.ErrDatasetNotFound) {
		s := &snapshot{schema: manifestSchema()}
		_ = s.index()
		return s, nil
	}
	if err != nil {
		return nil, fmt.Errorf("namespace: open __manifest: %w", err)
	}
	if cur != nil && cur.ver != nil && cur.ver.Number() == ver.Number() {
		return cur, nil
	}
	s, err := loadSnapshot(ctx, n.manifest.Store(), ver, cur)
	if err != nil {
		return nil, err
	}
	if cur == nil || cur.version() < s.version() {
		n.cur = s
	}
	return s, nil
}

// remember installs a snapshot this process just committed.
func (n *Namespace) remember(s *snapshot) {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.cur == nil || n.cur.version() < s.version() {
		n.cur = s
	}
}

// URI is the location of key (relative to the root) as clients address it.
func (n *Namespace) URI(key string) string {
	key = strings.TrimLeft(key, "/")
	if n.opts.RootURI == "" {
		return key
	}
	return n.opts.RootURI + "/" + key
}

// A root's directory namespace is a catalog.Catalog as it is.
var _ catalog.Catalog = (*Namespace)(nil)
