package lance

import (
	"context"
	"fmt"
	"slices"
	"strconv"
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

// DefaultUnverifiedAge is how old a file no manifest references must be
// before cleanup removes it: Lance's UNVERIFIED_THRESHOLD_DAYS. Younger
// unreferenced files may belong to a writer that has not committed yet.
const DefaultUnverifiedAge = 7 * 24 * time.Hour

// Cleanup follows Lance's cleanup_old_versions (rust/lance/src/dataset/
// cleanup.rs):
//
//   - a version is old when every given criterion selects it; the latest
//     version, tagged versions and branch fork points are never old;
//   - files referenced by a kept version (or by any version of any branch)
//     stay; files referenced only by old versions are "verified" garbage
//     and go with them;
//   - files under data/, _deletions/, _indices/, _transactions/ and the
//     _versions/.tmp leftovers that no manifest references at all go only
//     when they were last modified before the earliest kept version was
//     committed AND longer ago than the unverified age (7 days): an
//     in-flight writer's files look exactly like an abandoned writer's
//     until it commits. This also prunes the _transactions/*.txn files of
//     versions cleaned long ago, and what an interrupted cleanup left;
//   - a _transactions/{rv}-….txn no kept version references goes at once
//     when version rv+1 is gone (staleTransaction): its writer can no
//     longer commit;
//   - blob sidecars data/<stem>/… count as referenced when data/<stem>.lance is.
//
// Where lancecat differs: Lance deletes manifests and files in one
// unordered stream; we delete files first and manifests last, so an
// interrupted cleanup leaves every kept version whole and the old versions
// still listed, and the next run (which selects them again) finishes the
// job without waiting out the unverified age. A dataset with a manifest
// feature flag we do not know is refused (ErrUnsupportedFeature): we could
// not tell which files its manifests reference.

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
	// UnverifiedAge overrides DefaultUnverifiedAge (0: the default; < 0:
	// remove unreferenced files of any age, Lance's delete_unverified, only
	// safe when no writer can be running).
	UnverifiedAge time.Duration
	// Now is the clock for the unverified age (zero: time.Now()).
	Now time.Time
}

func (o CleanupOptions) unverifiedBefore() time.Time {
	now := o.Now
	if now.IsZero() {
		now = time.Now()
	}
	switch {
	case o.UnverifiedAge < 0:
		return now.Add(time.Hour) // everything is old enough
	case o.UnverifiedAge == 0:
		return now.Add(-DefaultUnverifiedAge)
	}
	return now.Add(-o.UnverifiedAge)
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
	// UnverifiedRemoved counts the RemovedFiles no manifest referenced.
	UnverifiedRemoved int `json:"unverified_removed"`
	// UnverifiedKept counts unreferenced files left because they are too
	// young (possibly a writer's that has not committed yet).
	UnverifiedKept int `json:"unverified_kept"`
}

// fileSet is the files one manifest references, as keys relative to the
// dataset root; index directories end in "/".
type fileSet map[string]bool

// has says whether key is in the set: itself, its index directory, or (a
// blob sidecar data/<stem>/…) its data file data/<stem>.lance.
func (s fileSet) has(key string) bool {
	if s[key] {
		return true
	}
	for _, dir := range []string{IndicesDir, DataDir} {
		rest, ok := strings.CutPrefix(key, dir)
		if !ok {
			continue
		}
		first, _, nested := strings.Cut(rest, "/")
		if !nested {
			return false
		}
		if dir == IndicesDir {
			return s[dir+first+"/"]
		}
		return s[dir+first+".lance"]
	}
	return false
}

// cleanupScanDirs are the directories whose unreferenced files cleanup
// considers (Lance's managed subtrees); anything else under the root
// (_refs/, tree/, foreign files) is never touched.
var cleanupScanDirs = []string{DataDir, DeletionsDir, IndicesDir, TransactionsDir}

// Cleanup removes old versions of this branch and every file that only
// they reference, and files no manifest references past the unverified age.
// Files referenced by a retained version or by any version of any branch
// are left alone.
func (d *Dataset) Cleanup(ctx context.Context, opts CleanupOptions) (CleanupReport, error) {
	rep := CleanupReport{DryRun: opts.DryRun}
	if opts.OlderThan.IsZero() && opts.KeepLast <= 0 {
		return rep, Errorf(ErrInvalidInput, "lance: cleanup needs an age (older than) or a number of versions to keep")
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
	versions, err := d.openWritableVersions(ctx, locs)
	if err != nil {
		return rep, err
	}
	keep := fileSet{}
	var removed []*Version
	var earliestKept time.Time
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
		if earliestKept.IsZero() || v.Timestamp().Before(earliestKept) {
			earliestKept = v.Timestamp()
		}
		d.referencedFiles(v, keep)
	}
	if err := d.branchReferences(ctx, keep); err != nil {
		return rep, err
	}
	verified := fileSet{}
	for _, v := range removed {
		d.referencedFiles(v, verified)
	}
	unverifiedBefore := opts.unverifiedBefore()
	if earliestKept.Before(unverifiedBefore) {
		unverifiedBefore = earliestKept
	}
	var objs []storage.ObjectInfo
	for _, dir := range cleanupScanDirs {
		list, err := listAll(ctx, d.store, dir)
		if err != nil {
			return rep, err
		}
		objs = append(objs, list...)
	}
	tmps, err := listAll(ctx, d.store, VersionsDir+".tmp")
	if err != nil {
		return rep, err
	}
	objs = append(objs, tmps...)
	slices.SortFunc(objs, func(a, b storage.ObjectInfo) int { return strings.Compare(a.Key, b.Key) })
	kept := map[uint64]bool{}
	for _, n := range rep.KeptVersions {
		kept[n] = true
	}
	latest := versions[len(versions)-1].Number()
	// Files first, manifests last: see the package comment above.
	var doomed []storage.ObjectInfo
	for _, o := range objs {
		if keep.has(o.Key) {
			continue
		}
		if verified.has(o.Key) || staleTransaction(o.Key, kept, latest) {
			doomed = append(doomed, o)
			continue
		}
		if o.ModTime.Before(unverifiedBefore) {
			doomed = append(doomed, o)
			rep.UnverifiedRemoved++
			continue
		}
		rep.UnverifiedKept++
	}
	for _, v := range removed {
		doomed = append(doomed, storage.ObjectInfo{Key: v.Location.Key, Size: v.Location.Size})
	}
	for _, o := range doomed {
		if !opts.DryRun {
			if err := d.store.Delete(ctx, o.Key); err != nil {
				return rep, fmt.Errorf("lance: delete %s: %w", o.Key, err)
			}
		}
		rep.RemovedFiles = append(rep.RemovedFiles, o.Key)
		rep.BytesRemoved += o.Size
	}
	return rep, nil
}

// staleTransaction says whether key is a transaction file no kept version
// references of a writer that can no longer commit: _transactions/{rv}-….txn
// whose version rv+1 is gone (not kept, and older than the latest). Such a
// writer would have to check its conflicts against version rv+1's transaction,
// which no longer exists, so it fails; its file is garbage now, without waiting
// out the unverified age (no Lance tool prunes these). A writer reading the
// latest version (rv+1 not committed yet) is never matched.
func staleTransaction(key string, kept map[uint64]bool, latest uint64) bool {
	name, ok := strings.CutPrefix(key, TransactionsDir)
	if !ok || strings.Contains(name, "/") || !strings.HasSuffix(name, ".txn") {
		return false
	}
	head, _, ok := strings.Cut(name, "-")
	if !ok {
		return false
	}
	rv, err := strconv.ParseUint(head, 10, 64)
	if err != nil || rv+1 >= latest {
		return false
	}
	return !kept[rv+1]
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

// References is every file of this dataset's directory that some version
// references: every version of this branch (not only the kept ones) and every
// version of every branch reaching in through a base path — what an orphan
// scan must never call garbage.
type References struct {
	set fileSet
	// Versions are the versions of this branch that were read.
	Versions []uint64
	// BasePaths are the base paths any version names (a shallow clone or a
	// multi-base dataset): files may live outside this directory.
	BasePaths []string
}

// Has says whether key (relative to the dataset root) is referenced: the
// file itself, its index directory, or a blob sidecar of a referenced data
// file.
func (r *References) Has(key string) bool { return r.set.has(key) }

// References reads every version of this branch and of every branch and
// answers what they reference. A dataset with a feature flag we do not know is
// refused (ErrUnsupportedFeature): we could not tell what it references.
func (d *Dataset) References(ctx context.Context) (*References, error) {
	locs, err := d.manifestLocations(ctx)
	if err != nil {
		return nil, err
	}
	if len(locs) == 0 {
		return nil, ErrDatasetNotFound
	}
	versions, err := d.openWritableVersions(ctx, locs)
	if err != nil {
		return nil, err
	}
	refs := &References{set: fileSet{}}
	bases := map[string]bool{}
	for _, v := range versions {
		refs.Versions = append(refs.Versions, v.Number())
		d.referencedFiles(v, refs.set)
		refs.set[v.Location.Key] = true
		for _, bp := range v.Manifest().GetBasePaths() {
			bases[bp.GetPath()] = true
		}
	}
	for b := range bases {
		refs.BasePaths = append(refs.BasePaths, b)
	}
	slices.Sort(refs.BasePaths)
	if err := d.branchReferences(ctx, refs.set); err != nil {
		return nil, err
	}
	return refs, nil
}

// openWritableVersions reads every manifest at locs, in parallel, refusing any whose feature
// flags we do not know: cleanup and the orphan scan both need every version, and both must not
// act on a dataset they cannot fully read.
func (d *Dataset) openWritableVersions(ctx context.Context, locs []ManifestLocation) ([]*Version, error) {
	versions := make([]*Version, len(locs))
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(manifestReadConcurrency)
	for i, loc := range locs {
		g.Go(func() (err error) {
			versions[i], err = d.open(gctx, loc)
			if err == nil {
				err = CheckWritable(versions[i].Manifest())
			}
			return err
		})
	}
	if err := g.Wait(); err != nil {
		return nil, err
	}
	return versions, nil
}
