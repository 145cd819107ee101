package maintenance

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strconv"
	"strings"

	"github.com/lancecat/lancecat/lance"
	"github.com/lancecat/lancecat/namespace"
	"github.com/lancecat/lancecat/storage"
	"github.com/lancecat/lancecat/table"
)

// The stamp index: one directory per root that says, in one listing, which of the root's tables
// are idle since their last pass. A table's own stamp (_maintenance/done-<version>, written under
// its lease) stays the record a pass trusts; the index is a hint the sweep uses to skip reading
// it, so that 10,000 idle tables cost the listing of their versions (which the walk over the
// catalog makes anyway) and one listing of the index, not one more listing each.
//
// An entry is the key <location hash>-<version>-<manifest ETag hash>, written after a pass left
// the table at that version (or by a sweep that found the table's own stamp there) and only when
// that version's manifest names no base path. A table is idle when its latest manifest, as the
// walk listed it, has the version and the ETag an entry names: any new version written by any
// Lance client (which knows nothing of the index) changes the latest, and a table dropped and
// made again at the same location has other manifests (their ETags differ), so a stale entry never
// makes a changed table look idle. A missing or stale entry only costs the table's own stamp
// (read as before, and the entry written again). Entries of a location are replaced when a newer
// one is written; nothing else reads them.
//
// The index lives under the directory every root reserves for the catalog (never a table
// location, skipped by the orphan scan and the drift scan of tables).
const stampIndexDir = namespace.ControlDir + "/maintenance-stamps/"

// rooted is a table handle that knows the root it was found in (table.Table), and a root that
// is a directory namespace of this server.
type (
	rooted  interface{ Root() table.Root }
	dirRoot interface{ Namespace() *namespace.Namespace }
)

// rootOf is the root table t was found in (nil: not known; the index is then not used).
func rootOf(t located) *namespace.Namespace {
	if r, ok := t.table.(rooted); ok {
		if n, ok := r.Root().(dirRoot); ok {
			return n.Namespace()
		}
	}
	return nil
}

// indexKey is the index entry saying the table at location is idle at manifest m ("" when m has
// no ETag: nothing would tell a table made again apart).
func indexKey(location string, m lance.ManifestLocation) string {
	if m.ETag == "" || m.Version == 0 {
		return ""
	}
	tag := sha256.Sum256([]byte(m.ETag))
	return fmt.Sprintf("%s-%020d-%s", locationHash(location), m.Version, hex.EncodeToString(tag[:8]))
}

// locationHash names a table location in index keys (a location can be long and hold '/').
func locationHash(location string) string {
	h := sha256.Sum256([]byte(location))
	return hex.EncodeToString(h[:16])
}

// locationOfKey is the location hash an index key starts with.
func locationOfKey(key string) string {
	h, _, _ := strings.Cut(key, "-")
	return h
}

// stampIndex is one root's index as one listing read it.
type stampIndex struct {
	keys  map[string]bool
	byLoc map[string][]string // location hash -> its keys
	err   error
}

func readStampIndex(ctx context.Context, root storage.Bucket) stampIndex {
	idx := stampIndex{keys: map[string]bool{}, byLoc: map[string][]string{}}
	objs, err := storage.ListAll(ctx, root, stampIndexDir)
	if err != nil {
		idx.err = err
		return idx
	}
	for _, o := range objs {
		key := strings.TrimPrefix(o.Key, stampIndexDir)
		parts := strings.Split(key, "-")
		if len(parts) != 3 {
			continue
		}
		if _, err := strconv.ParseUint(parts[1], 10, 64); err != nil {
			continue
		}
		idx.keys[key] = true
		idx.byLoc[parts[0]] = append(idx.byLoc[parts[0]], key)
	}
	return idx
}

// idle says whether the index has the entry for location at latest.
func (idx stampIndex) idle(location string, latest lance.ManifestLocation) bool {
	key := indexKey(location, latest)
	return idx.err == nil && key != "" && idx.keys[key]
}

// writeIndexEntry records that the table at location is idle at manifest m (its manifest names no
// base path) and deletes the location's older entries (old: as the sweep's listing found them,
// when listed; else they are listed here — by prefix, but a local listing reads the whole
// directory, so the sweep passes its own: 10,000 entries listed once each made 10,000 writes
// quadratic).
func writeIndexEntry(ctx context.Context, root storage.Bucket, location string, m lance.ManifestLocation, old []string, listed bool) error {
	key := indexKey(location, m)
	if key == "" {
		return nil
	}
	if !listed {
		objs, err := storage.ListAll(ctx, root, stampIndexDir+locationOfKey(key)+"-")
		if err != nil {
			return err
		}
		for _, o := range objs {
			old = append(old, strings.TrimPrefix(o.Key, stampIndexDir))
		}
	}
	if _, err := root.Put(ctx, stampIndexDir+key, bytes.NewReader(nil), 0); err != nil {
		return err
	}
	for _, k := range old {
		if k != key {
			if err := root.Delete(ctx, stampIndexDir+k); err != nil {
				return err
			}
		}
	}
	return nil
}

// prune deletes the entries of locations that hold no table of the root (live: the location
// hashes of every table the sweep's walk found there): what dropped tables left behind. An entry
// pruned while a table was just made there only costs that table one read of its own stamp.
func (idx stampIndex) prune(ctx context.Context, root storage.Bucket, live map[string]bool) error {
	if idx.err != nil {
		return nil
	}
	for h, keys := range idx.byLoc {
		if live[h] {
			continue
		}
		for _, k := range keys {
			if err := root.Delete(ctx, stampIndexDir+k); err != nil {
				return err
			}
		}
	}
	return nil
}
