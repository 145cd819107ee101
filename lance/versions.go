package lance

import (
	"context"
	"fmt"
	"math"
	"slices"
	"time"

	"golang.org/x/sync/errgroup"
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
// ErrDatasetNotFound if there are none at all. Timestamps come
// from the manifests, so each listed version costs one read; page with
// Start and Limit on long histories.
func (d *Dataset) ListVersions(ctx context.Context, opts ListVersionsOptions) ([]VersionInfo, error) {
	locs, err := d.selectLocations(ctx, opts)
	if err != nil {
		return nil, err
	}
	out := make([]VersionInfo, len(locs))
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(manifestReadConcurrency)
	for i, loc := range locs {
		g.Go(func() error {
			f, err := readManifestFile(gctx, d.store, loc.Key, loc.Size, false)
			if err != nil {
				return err
			}
			if err := checkManifestVersion(f, loc); err != nil {
				return err
			}
			out[i] = VersionInfo{ManifestLocation: loc, Timestamp: manifestTime(f)}
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		return nil, err
	}
	return out, nil
}

// selectLocations picks the manifests of one page. Descending pages of a V2
// dataset are read straight off the listing (byte order is newest first), so
// they cost no more list requests than the page needs.
func (d *Dataset) selectLocations(ctx context.Context, opts ListVersionsOptions) ([]ManifestLocation, error) {
	if opts.Descending {
		latest, err := d.LatestLocation(ctx)
		if err != nil {
			return nil, err
		}
		if latest.Scheme == NamingV2 {
			return d.v2Descending(ctx, opts)
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

func (d *Dataset) v2Descending(ctx context.Context, opts ListVersionsOptions) ([]ManifestLocation, error) {
	startAfter := ""
	if opts.Start != 0 && opts.Start != math.MaxUint64 {
		// Keys after version Start+1's name are exactly versions <= Start.
		startAfter = NamingV2.ManifestKey(opts.Start + 1)
	}
	var locs []ManifestLocation
	var mixed bool
	err := d.scanManifests(ctx, startAfter, fullPageLimit, func(loc ManifestLocation) bool {
		if loc.Scheme != NamingV2 {
			mixed = true
			return false
		}
		locs = append(locs, loc)
		return opts.Limit <= 0 || len(locs) < opts.Limit
	})
	if err != nil {
		return nil, err
	}
	if mixed {
		return nil, ErrMixedNamingSchemes
	}
	return locs, nil
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
