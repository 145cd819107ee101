package lance

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/lancecat/lancecat/storage"
)

// VersionInfo describes one version for listings.
type VersionInfo struct {
	ManifestLocation
	// Timestamp is the commit time recorded in the manifest (UTC); zero if
	// the manifest has none.
	Timestamp time.Time
}

// ListVersionsOptions selects a page of versions.
type ListVersionsOptions struct {
	// Descending lists the newest first.
	Descending bool
	// Start, when non-zero, is the first version of the page: versions below
	// it are skipped in ascending order, versions above it in descending
	// order. It need not exist (cleanup leaves gaps).
	Start uint64
	// Limit caps the page; <= 0 means no limit.
	Limit int
}

// manifestReadConcurrency bounds parallel manifest reads when listing.
const manifestReadConcurrency = 8

// ListVersions lists versions with their commit timestamps;
// ErrDatasetNotFound if there are none at all. Timestamps come from the
// manifests (as Lance's own listing does), so each listed version costs one
// read, though only its version and timestamp fields are decoded; page with
// Start and Limit on long histories (a descending page of a V2 dataset
// lists only about Limit keys).
func (d *Dataset) ListVersions(ctx context.Context, opts ListVersionsOptions) ([]VersionInfo, error) {
	locs, err := d.selectLocations(ctx, opts)
	if err != nil {
		return nil, err
	}
	out := make([]VersionInfo, len(locs))
	gone := make([]bool, len(locs))
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(manifestReadConcurrency)
	for i, loc := range locs {
		g.Go(func() error {
			sum, err := readManifestSummary(gctx, d.store, loc.Key, loc.Size)
			if errors.Is(err, storage.ErrNotFound) {
				// Listed a moment ago and deleted since (a concurrent version deletion or
				// cleanup): the version is gone, which is what a listing after it says.
				gone[i] = true
				return nil
			}
			if err != nil {
				return err
			}
			if sum.Version != loc.Version {
				return fmt.Errorf("%w: %s holds version %d", ErrCorruptManifest, loc.Key, sum.Version)
			}
			out[i] = VersionInfo{ManifestLocation: loc, Timestamp: sum.Timestamp}
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		return nil, err
	}
	kept := out[:0]
	for i, v := range out {
		if !gone[i] {
			kept = append(kept, v)
		}
	}
	return kept, nil
}

// selectLocations picks the manifests of one page. Descending pages of a V2
// dataset are read straight off the listing (byte order is newest first), so
// they cost no more list requests than the page needs.
func (d *Dataset) selectLocations(ctx context.Context, opts ListVersionsOptions) ([]ManifestLocation, error) {
	if opts.Descending {
		locs, ok, err := d.v2Descending(ctx, opts)
		if err != nil || ok {
			return locs, err
		}
	}
	locs, err := d.manifestLocations(ctx)
	if err != nil {
		return nil, err
	}
	if len(locs) == 0 {
		return nil, ErrDatasetNotFound
	}
	if opts.Descending {
		slices.Reverse(locs)
	}
	start := 0
	if opts.Start != 0 {
		start = slices.IndexFunc(locs, func(l ManifestLocation) bool {
			if opts.Descending {
				return l.Version <= opts.Start
			}
			return l.Version >= opts.Start
		})
		if start < 0 {
			return nil, nil
		}
	}
	locs = locs[start:]
	if opts.Limit > 0 && len(locs) > opts.Limit {
		locs = locs[:opts.Limit]
	}
	return locs, nil
}

// v2Descending reads a descending page straight off the listing of a V2
// dataset, asking only for about as many keys as the page needs. ok is false
// when the dataset has V1 names (the caller then sorts a full listing).
func (d *Dataset) v2Descending(ctx context.Context, opts ListVersionsOptions) (locs []ManifestLocation, ok bool, err error) {
	startAfter := ""
	if opts.Start != 0 && opts.Start != math.MaxUint64 {
		// Keys after version Start+1's name are exactly versions <= Start.
		startAfter = NamingV2.ManifestKey(opts.Start + 1)
	}
	pageLimit := fullPageLimit
	if opts.Limit > 0 {
		pageLimit = min(fullPageLimit, opts.Limit+firstPageLimit)
	}
	var sawV1 bool
	err = d.scanManifests(ctx, startAfter, pageLimit, func(loc ManifestLocation) bool {
		if loc.Scheme != NamingV2 {
			sawV1 = true
			return false
		}
		locs = append(locs, loc)
		return opts.Limit <= 0 || len(locs) < opts.Limit
	})
	switch {
	case err != nil:
		return nil, false, err
	case sawV1 && len(locs) > 0:
		return nil, false, ErrMixedNamingSchemes
	case sawV1:
		return nil, false, nil
	case len(locs) > 0:
		return locs, true, nil
	}
	// Nothing at or below Start: an empty page of a V2 dataset, or a V1
	// dataset whose names all sort before startAfter, or no dataset.
	latest, err := d.LatestLocation(ctx)
	if err != nil {
		return nil, false, err
	}
	return nil, latest.Scheme == NamingV2, nil
}

func manifestTime(f *ManifestFile) time.Time {
	if ts := f.Manifest.GetTimestamp(); ts != nil {
		return ts.AsTime()
	}
	return time.Time{}
}

// checkManifestVersion guards against a manifest stored under another
// version's name; Lance requires the two to agree.
func checkManifestVersion(f *ManifestFile, loc ManifestLocation) error {
	if got := f.Manifest.GetVersion(); got != loc.Version {
		return fmt.Errorf("%w: %s holds version %d", ErrCorruptManifest, loc.Key, got)
	}
	return nil
}
