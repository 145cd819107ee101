package lance

import (
	"context"
	"fmt"
	"time"

	"github.com/lancecat/lancecat/lance/pb/filepb"
	"github.com/lancecat/lancecat/lance/pb/tablepb"
)

// Version is one committed version of a dataset as its manifest file
// describes it. The protobuf messages are shared, not copied: treat them as
// read-only, and proto.Clone before building a new version from them.
type Version struct {
	Location ManifestLocation
	File     *ManifestFile
}

// OpenLatest opens the newest version (found by listing, see LatestLocation).
func (d *Dataset) OpenLatest(ctx context.Context) (*Version, error) {
	loc, err := d.LatestLocation(ctx)
	if err != nil {
		return nil, err
	}
	return d.open(ctx, loc)
}

// OpenVersion opens one version; ErrVersionNotFound if it has no manifest.
func (d *Dataset) OpenVersion(ctx context.Context, version uint64) (*Version, error) {
	loc, err := d.ResolveVersion(ctx, version)
	if err != nil {
		return nil, err
	}
	return d.open(ctx, loc)
}

// open reads the manifest at loc; loc.Size < 0 means unknown.
// The decode of an immutable manifest file is shared (manifestCache);
// which file loc names was found by the caller, afresh.
func (d *Dataset) open(ctx context.Context, loc ManifestLocation) (*Version, error) {
	key := d.manifestCacheKey(loc)
	if f := sharedManifests.get(key); f != nil {
		return &Version{Location: loc, File: f}, nil
	}
	f, err := readManifestFile(ctx, d.store, loc.Key, loc.Size, true)
	if err != nil {
		return nil, err
	}
	if err := checkManifestVersion(f, loc); err != nil {
		return nil, err
	}
	sharedManifests.put(key, f, loc.Size)
	return &Version{Location: loc, File: f}, nil
}

// Number is the version number.
func (v *Version) Number() uint64 { return v.Location.Version }

// Manifest is the version's manifest message.
func (v *Version) Manifest() *tablepb.Manifest { return v.File.Manifest }

// Timestamp is the commit time recorded in the manifest (zero if absent).
func (v *Version) Timestamp() time.Time { return manifestTime(v.File) }

// Fields is the schema as Lance stores it: every field, nested ones
// included, flattened in pre-order (a parent precedes its children, linked
// by parent_id; top-level fields have parent_id -1).
func (v *Version) Fields() []*filepb.Field { return v.File.Manifest.GetFields() }

// Indices lists the index segments recorded in this version (several
// entries with one name are segments of one logical index).
func (v *Version) Indices() []*tablepb.IndexMetadata { return v.File.Indices.GetIndices() }

// Transaction is the inline transaction that produced this version, or nil
// when the manifest has none (the _transactions/ file is then the source).
func (v *Version) Transaction() *tablepb.Transaction { return v.File.Transaction }

// FragmentStats is what a manifest records about one fragment's rows.
type FragmentStats struct {
	ID uint64
	// PhysicalRows counts every row in the data files, deleted ones too.
	PhysicalRows uint64
	// DeletedRows is the size of the fragment's deletion vector.
	DeletedRows uint64
	// HasDeletionFile is set when the fragment has a deletion file.
	HasDeletionFile bool
	// RowsKnown is false when the manifest lacks physical_rows or
	// num_deleted_rows (old writers, or a foreign writer that skipped them);
	// Lance treats a zero in either as "not recorded", and so do we.
	RowsKnown bool
}

// LiveRows is PhysicalRows - DeletedRows; meaningful only when RowsKnown.
func (s FragmentStats) LiveRows() uint64 {
	if s.DeletedRows > s.PhysicalRows {
		return 0
	}
	return s.PhysicalRows - s.DeletedRows
}

// Fragments reports every fragment's row bookkeeping, in manifest order.
func (v *Version) Fragments() []FragmentStats {
	frags := v.File.Manifest.GetFragments()
	out := make([]FragmentStats, len(frags))
	for i, f := range frags {
		s := FragmentStats{ID: f.GetId(), PhysicalRows: f.GetPhysicalRows(), RowsKnown: f.GetPhysicalRows() > 0}
		if del := f.GetDeletionFile(); del != nil {
			s.HasDeletionFile = true
			s.DeletedRows = del.GetNumDeletedRows()
			s.RowsKnown = s.RowsKnown && s.DeletedRows > 0
		}
		out[i] = s
	}
	return out
}

// CountRows counts live rows from the manifest alone, as Lance's count_rows
// does when every fragment records its counts. ErrRowCountUnknown names
// the first fragment that would need its files read.
func (v *Version) CountRows() (uint64, error) {
	var total uint64
	for _, s := range v.Fragments() {
		if !s.RowsKnown {
			return 0, fmt.Errorf("%w: fragment %d of version %d", ErrRowCountUnknown, s.ID, v.Number())
		}
		if s.DeletedRows > s.PhysicalRows {
			return 0, fmt.Errorf("%w: fragment %d deletes %d of %d rows", ErrCorruptManifest, s.ID, s.DeletedRows, s.PhysicalRows)
		}
		total += s.LiveRows()
	}
	return total, nil
}
