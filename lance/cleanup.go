package lance

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/lancecat/lancecat/lance/pb/tablepb"
	"github.com/lancecat/lancecat/storage"
)

// Directories of a dataset (keys relative to its root).
const (
	DataDir      = "data/"
	DeletionsDir = "_deletions/"
	IndicesDir   = "_indices/"
)

// CleanupOptions choose the versions cleanup removes. A version is removed
// only if every given criterion selects it; the latest version, tagged
// versions and branch fork points are always kept.
type CleanupOptions struct {
	// OlderThan selects versions committed before it.
	OlderThan time.Time
	// KeepLast, when > 0, keeps the newest KeepLast versions.
	KeepLast int
	// DryRun reports what would be removed without removing anything.
	DryRun bool
}

// CleanupReport lists what cleanup removed (or, in a dry run, would remove).
type CleanupReport struct {
	DryRun          bool     `json:"dry_run"`
	RemovedVersions []uint64 `json:"removed_versions"`
	KeptVersions    []uint64 `json:"kept_versions"`
	// RemovedFiles are keys relative to the dataset root: manifests,
	// transaction files, data files, deletion files and index files.
	RemovedFiles []string `json:"removed_files"`
	BytesRemoved int64    `json:"bytes_removed"`
}

// fileSet is the files one manifest references, as keys relative to the
// dataset root; index directories end in "/".
type fileSet map[string]bool

// Cleanup removes old versions of this branch and every file that only
// they reference. Files referenced by a retained version, by any version of
// any branch, or by no manifest at all (an in-flight write) are left alone.
func (d *Dataset) Cleanup(ctx context.Context, opts CleanupOptions) (CleanupReport, error) {
	rep := CleanupReport{DryRun: opts.DryRun}
	if opts.OlderThan.IsZero() && opts.KeepLast <= 0 {
		return rep, errorf(ErrInvalidInput, "lance: cleanup needs an age (older than) or a number of versions to keep")
	}
	locs, err := d.manifestLocations(ctx)
	if err != nil {
		return rep, err
	}
	if len(locs) == 0 {
		return rep, ErrDatasetNotFound
	}
	protected, err := d.protectedVersions(ctx)
	if err != nil {
		return rep, err
	}
	versions := make([]*Version, len(locs))
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(manifestReadConcurrency)
	for i, loc := range locs {
		g.Go(func() (err error) {
			versions[i], err = d.open(gctx, loc)
			return err
		})
	}
	if err := g.Wait(); err != nil {
		return rep, err
	}
	keep := fileSet{}
	var removed []*Version
	for i, v := range versions {
		fromEnd := len(versions) - 1 - i
		remove := fromEnd > 0 && !protected[v.Number()] &&
			(opts.OlderThan.IsZero() || v.Timestamp().Before(opts.OlderThan)) &&
			(opts.KeepLast <= 0 || fromEnd >= opts.KeepLast)
		if remove {
			removed = append(removed, v)
			rep.RemovedVersions = append(rep.RemovedVersions, v.Number())
			continue
		}
		rep.KeptVersions = append(rep.KeptVersions, v.Number())
		d.referencedFiles(v, keep)
	}
	if len(removed) == 0 {
		return rep, nil
	}
	if err := d.branchReferences(ctx, keep); err != nil {
		return rep, err
	}
	drop := fileSet{}
	for _, v := range removed {
		d.referencedFiles(v, drop)
	}
	// Manifests go first: if we stop half way, what is left is unreferenced
	// files, never a listed version missing its files.
	var sizes = map[string]int64{}
	var keys []string
	for _, v := range removed {
		keys = append(keys, v.Location.Key)
		sizes[v.Location.Key] = v.Location.Size
	}
	var files []string
	for key := range drop {
		if !keep[key] {
			files = append(files, key)
		}
	}
	slices.Sort(files)
	for _, key := range files {
		if !strings.HasSuffix(key, "/") {
			info, err := d.store.Stat(ctx, key)
			if errors.Is(err, storage.ErrNotFound) {
				continue
			}
			if err != nil {
				return rep, fmt.Errorf("lance: stat %s: %w", key, err)
			}
			keys = append(keys, key)
			sizes[key] = info.Size
			continue
		}
		objs, err := listAll(ctx, d.store, key)
		if err != nil {
			return rep, err
		}
		for _, o := range objs {
			keys = append(keys, o.Key)
			sizes[o.Key] = o.Size
		}
	}
	for _, key := range keys {
		if !opts.DryRun {
			if err := d.store.Delete(ctx, key); err != nil {
				return rep, fmt.Errorf("lance: delete %s: %w", key, err)
			}
		}
		rep.RemovedFiles = append(rep.RemovedFiles, key)
		rep.BytesRemoved += sizes[key]
	}
	return rep, nil
}

// referencedFiles adds the files of v that live in this dataset's own
// directory (no base_id) to set.
func (d *Dataset) referencedFiles(v *Version, set fileSet) {
	m := v.Manifest()
	if name := m.GetTransactionFile(); name != "" {
		set[TransactionsDir+name] = true
	}
	for _, f := range m.GetFragments() {
		for _, df := range f.GetFiles() {
			if df.BaseId == nil {
				set[DataDir+df.GetPath()] = true
			}
		}
		if del := f.GetDeletionFile(); del != nil && del.BaseId == nil {
			set[DeletionFileKey(f.GetId(), del)] = true
		}
	}
	for _, idx := range v.Indices() {
		if idx.BaseId == nil {
			set[IndexDir(idx)] = true
		}
	}
}

// branchReferences adds the files of this dataset that any version of any
// branch reaches through a base path.
func (d *Dataset) branchReferences(ctx context.Context, set fileSet) error {
	branches, err := d.ListBranches(ctx)
	if err != nil {
		return err
	}
	main := d.Main()
	for _, b := range branches {
		bd, err := main.Branch(b.Name)
		if err != nil {
			return err
		}
		if bd.location == d.location && d.location != "" {
			continue // ourselves
		}
		locs, err := bd.manifestLocations(ctx)
		if err != nil {
			return err
		}
		for _, loc := range locs {
			v, err := bd.open(ctx, loc)
			if err != nil {
				return err
			}
			d.baseReferences(v, set)
		}
	}
	return nil
}

// baseReferences adds the files another dataset's version v reaches in our
// directory. Without a known location every base path might be us, so all
// of them count (keeping too much is safe; deleting too much is not).
func (d *Dataset) baseReferences(v *Version, set fileSet) {
	m := v.Manifest()
	ours := map[uint32]bool{}
	for _, bp := range m.GetBasePaths() {
		if d.location == "" || (bp.GetIsDatasetRoot() && strings.TrimRight(bp.GetPath(), "/") == d.location) {
			ours[bp.GetId()] = true
		}
	}
	for _, f := range m.GetFragments() {
		for _, df := range f.GetFiles() {
			if df.BaseId != nil && ours[df.GetBaseId()] {
				set[DataDir+df.GetPath()] = true
			}
		}
		if del := f.GetDeletionFile(); del != nil && del.BaseId != nil && ours[del.GetBaseId()] {
			set[DeletionFileKey(f.GetId(), del)] = true
		}
	}
	for _, idx := range v.Indices() {
		if idx.BaseId != nil && ours[idx.GetBaseId()] {
			set[IndexDir(idx)] = true
		}
	}
}

// DeletionFileKey is _deletions/{fragment_id}-{read_version}-{id}.{arrow|bin}.
func DeletionFileKey(fragmentID uint64, del *tablepb.DeletionFile) string {
	ext := "arrow"
	if del.GetFileType() == tablepb.DeletionFile_BITMAP {
		ext = "bin"
	}
	return fmt.Sprintf("%s%d-%d-%d.%s", DeletionsDir, fragmentID, del.GetReadVersion(), del.GetId(), ext)
}

// IndexDir is _indices/<uuid>/ of one index segment.
func IndexDir(idx *tablepb.IndexMetadata) string {
	return IndicesDir + FormatUUID(idx.GetUuid().GetUuid()) + "/"
}

// FormatUUID renders 16 bytes as a hyphenated lowercase UUID.
func FormatUUID(b []byte) string {
	if len(b) != 16 {
		return fmt.Sprintf("%x", b)
	}
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:16])
}
