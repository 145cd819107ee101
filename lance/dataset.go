package lance

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/lancecat/lancecat/storage"
)

// Dataset is a Lance dataset rooted at its store: the store's keys are
// relative to the dataset root. It holds no state beyond the store, so it is
// safe for concurrent use and always reflects what storage holds now.
type Dataset struct {
	store storage.Bucket
	// root is the store of the main branch's directory, where _refs/ lives;
	// the same as store except on a branch.
	root storage.Bucket
	// location is the dataset root as Lance records it in base paths (an
	// absolute local path or a URI); "" when unknown.
	location string
	// branch is "" for main.
	branch string
}

// NewDataset returns the dataset whose root is store.
func NewDataset(store storage.Bucket) *Dataset { return &Dataset{store: store, root: store} }

// NewDatasetAt is NewDataset for a dataset whose location is known: the
// absolute local path ("/data/t.lance") or URI ("s3://bucket/t.lance") that
// Lance records as the base path of branches (shallow clones) of it.
func NewDatasetAt(store storage.Bucket, location string) *Dataset {
	return &Dataset{store: store, root: store, location: strings.TrimRight(location, "/")}
}

// Location is the dataset's location as given to NewDatasetAt ("" if not).
func (d *Dataset) Location() string { return d.location }

// BranchName is the branch this handle reads and writes ("" for main).
func (d *Dataset) BranchName() string { return d.branch }

// Store is the store the dataset's own files live in.
func (d *Dataset) Store() storage.Bucket { return d.store }

// ManifestLocation is one manifest file under _versions/.
type ManifestLocation struct {
	Version uint64
	// Key is relative to the dataset root.
	Key    string
	Size   int64
	ETag   string
	Scheme NamingScheme
}

const (
	// firstPageLimit is one name: with V2 names the newest manifest sorts
	// first, and a local listing stats every object it returns (an open,
	// fstat, xattr read and close through os.Root each), so every object
	// past the first is paid by every read of the latest version: 64 made
	// opening the latest of 1,000 versions twice as slow, 8 made
	// LatestLocation (so every count_rows) 4x slower than 2, and 2 still
	// stat'ed latest_version_hint.json, which sorts right after the
	// manifests of a one-version table (a third of count_rows' server time
	// in strace). A name that sorts before the newest manifest (a ".tmp…"
	// leftover, an in-flight commit's staging file) costs one more page,
	// of nextPageLimit names.
	firstPageLimit = 1
	nextPageLimit  = 8
	fullPageLimit  = storage.MaxListLimit
)

// scanManifests visits the attached-version manifests in _versions/ in
// listing (byte) order, starting after the key startAfter, until visit
// returns false. Everything that is not a manifest name is skipped.
func (d *Dataset) scanManifests(ctx context.Context, startAfter string, limit int, visit func(ManifestLocation) bool) error {
	opts := storage.ListOptions{StartAfter: startAfter, Limit: limit, Delimiter: true}
	for {
		page, err := d.store.List(ctx, VersionsDir, opts)
		if err != nil {
			return fmt.Errorf("lance: list %s: %w", VersionsDir, err)
		}
		for _, obj := range page.Objects {
			name, ok := strings.CutPrefix(obj.Key, VersionsDir)
			if !ok || strings.Contains(name, "/") {
				continue
			}
			version, scheme, ok := ParseManifestName(name)
			if !ok || IsDetachedVersion(version) {
				continue
			}
			loc := ManifestLocation{Version: version, Key: obj.Key, Size: obj.Size, ETag: obj.ETag, Scheme: scheme}
			if !visit(loc) {
				return nil
			}
		}
		if page.NextStartAfter == "" {
			return nil
		}
		// A store that does not advance would loop forever.
		if page.NextStartAfter <= opts.StartAfter {
			return fmt.Errorf("lance: list %s did not advance past %q", VersionsDir, opts.StartAfter)
		}
		opts.StartAfter = page.NextStartAfter
		opts.Limit = max(opts.Limit, nextPageLimit)
	}
}

// manifestLocations lists every attached version, ascending. It refuses a
// directory that mixes naming schemes, as Lance does.
func (d *Dataset) manifestLocations(ctx context.Context) ([]ManifestLocation, error) {
	var locs []ManifestLocation
	var schemes [3]bool
	err := d.scanManifests(ctx, "", fullPageLimit, func(loc ManifestLocation) bool {
		locs = append(locs, loc)
		schemes[loc.Scheme] = true
		return true
	})
	if err != nil {
		return nil, err
	}
	if schemes[NamingV1] && schemes[NamingV2] {
		return nil, ErrMixedNamingSchemes
	}
	slices.SortFunc(locs, func(a, b ManifestLocation) int {
		if c := cmp.Compare(a.Version, b.Version); c != 0 {
			return c
		}
		// V1 tolerates leading zeros ("01.manifest"); keep the canonical name.
		return cmpBool(a.Key != a.Scheme.ManifestKey(a.Version), b.Key != b.Scheme.ManifestKey(b.Version))
	})
	return slices.CompactFunc(locs, func(a, b ManifestLocation) bool { return a.Version == b.Version }), nil
}

// LatestLocation finds the newest version by listing _versions/ (never from
// latest_version_hint.json). With V2 names the first listed manifest is the
// newest, so a long history costs one small list request; V1 names sort as
// strings, not numbers, so they need the full listing.
//
// No cached "latest is N" hint validated by the absence of N+1: cleanup
// keeps tagged versions and branch fork points (cleanup.go), so N can
// outlive a deleted N+1 (tag N, commit N+1 and N+2, clean up: N+1 is gone,
// N and N+2 remain) and such a check would answer N; a table dropped and
// recreated at the same location reaching N again would fool it too.
func (d *Dataset) LatestLocation(ctx context.Context) (ManifestLocation, error) {
	var first *ManifestLocation
	err := d.scanManifests(ctx, "", firstPageLimit, func(loc ManifestLocation) bool {
		first = &loc
		return false
	})
	if err != nil {
		return ManifestLocation{}, err
	}
	if first == nil {
		return ManifestLocation{}, ErrDatasetNotFound
	}
	if first.Scheme == NamingV2 {
		return *first, nil
	}
	locs, err := d.manifestLocations(ctx)
	if err != nil {
		return ManifestLocation{}, err
	}
	if len(locs) == 0 { // deleted between the two listings
		return ManifestLocation{}, ErrDatasetNotFound
	}
	return locs[len(locs)-1], nil
}

// NamingScheme is the scheme of the dataset's newest manifest, the one a new
// commit must use. ErrDatasetNotFound means there is nothing to follow (Lance
// picks V2 for new datasets).
func (d *Dataset) NamingScheme(ctx context.Context) (NamingScheme, error) {
	loc, err := d.LatestLocation(ctx)
	if err != nil {
		return 0, err
	}
	return loc.Scheme, nil
}

// ResolveVersion finds the manifest of version: the V2 name first, then V1,
// as Lance does, so it works without knowing the dataset's scheme.
func (d *Dataset) ResolveVersion(ctx context.Context, version uint64) (ManifestLocation, error) {
	schemes := []NamingScheme{NamingV2, NamingV1}
	if IsDetachedVersion(version) {
		schemes = schemes[:1] // both schemes give the same name
	}
	for _, scheme := range schemes {
		key := scheme.ManifestKey(version)
		info, err := d.store.Stat(ctx, key)
		if errors.Is(err, storage.ErrNotFound) {
			continue
		}
		if err != nil {
			return ManifestLocation{}, fmt.Errorf("lance: stat %s: %w", key, err)
		}
		return ManifestLocation{Version: version, Key: key, Size: info.Size, ETag: info.ETag, Scheme: scheme}, nil
	}
	return ManifestLocation{}, fmt.Errorf("%w: %d", ErrVersionNotFound, version)
}

// PutManifest publishes f as version f.Manifest.Version under scheme. It
// never overwrites: if that version exists the error is ErrVersionExists,
// which is how a writer learns it lost a commit race.
func (d *Dataset) PutManifest(ctx context.Context, scheme NamingScheme, f *ManifestFile) (ManifestLocation, error) {
	data, err := f.Encode()
	if err != nil {
		return ManifestLocation{}, err
	}
	version := f.Manifest.GetVersion()
	key := scheme.ManifestKey(version)
	info, err := d.store.PutIfAbsent(ctx, key, bytes.NewReader(data), int64(len(data)))
	if errors.Is(err, storage.ErrExists) {
		return ManifestLocation{}, fmt.Errorf("%w: %d (%s: %w)", ErrVersionExists, version, key, err)
	}
	if err != nil {
		return ManifestLocation{}, fmt.Errorf("lance: put %s: %w", key, err)
	}
	return ManifestLocation{Version: version, Key: key, Size: info.Size, ETag: info.ETag, Scheme: scheme}, nil
}

func cmpBool(a, b bool) int {
	switch {
	case a == b:
		return 0
	case !a:
		return -1
	}
	return 1
}
