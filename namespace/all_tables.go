package namespace

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"golang.org/x/sync/errgroup"

	"github.com/lancecat/lancecat/catalog"
	"github.com/lancecat/lancecat/lance"
	"github.com/lancecat/lancecat/storage"
	"github.com/lancecat/lancecat/table"
)

// parallelChecks bounds the compatibility-mode directory checks a listing of the root has in
// flight: each is a listing and two stats, a round trip each on object storage, and a root
// holding 10,000 <name>.lance tables must not wait on them one at a time.
const parallelChecks = 16

// LoadAllTables loads every table of the root, in object-id order: what ListAllTables and then a
// LoadTable of each listed name would answer, but with each table's checks made once (the
// maintenance sweep walks every table: a compatibility-mode root table's checks list its versions
// and stat two markers, and doing that twice, then listing its versions a third time, was two
// thirds of an idle sweep). A compatibility-mode table's handle keeps the latest manifest its
// check listed (TableHandle.KnownLatest).
func (n *Namespace) LoadAllTables(ctx context.Context) ([]catalog.Table, error) {
	s, err := n.snapshot(ctx)
	if err != nil {
		return nil, err
	}
	byOID := map[string]*table.Table{}
	for oid, r := range s.rows {
		if r.Type != TypeTable || r.Location == nil {
			continue // an entry without a location is no table LoadTable would find
		}
		t := n.table(splitObjectID(oid), r, *r.Location)
		t.ManagedVersioning = s.managed()
		byOID[oid] = n.handle(t)
	}
	if !n.opts.DisableCompatibility {
		v1, err := n.v1Found(ctx, s)
		if err != nil {
			return nil, err
		}
		for _, f := range v1 {
			if byOID[f.name] != nil {
				continue
			}
			t := n.table(splitObjectID(f.name), nil, v1Location(f.name))
			t.ManagedVersioning = s.managed()
			byOID[f.name] = table.NewKnown(tableRoot{n}, t.Entry, f.latest)
		}
	}
	oids := make([]string, 0, len(byOID))
	for oid := range byOID {
		oids = append(oids, oid)
	}
	slices.Sort(oids)
	out := make([]catalog.Table, len(oids))
	for i, oid := range oids {
		out[i] = byOID[oid]
	}
	return out, nil
}

// v1Table is a compatibility-mode root table as the root's listing found it.
type v1Table struct {
	name   string
	latest lance.ManifestLocation // zero Version: declared, no version yet
}

// v1Found are the root's <name>.lance directories that are tables of their own (not backing a
// manifest entry, not deregistered, not being created), in name order, each checked once; the
// checks run side by side.
func (n *Namespace) v1Found(ctx context.Context, s *snapshot) ([]v1Table, error) {
	var names []string
	opts := storage.ListOptions{Delimiter: true, Limit: storage.MaxListLimit}
	for {
		page, err := n.root.List(ctx, "", opts)
		if err != nil {
			return nil, fmt.Errorf("namespace: list the root: %w", err)
		}
		for _, p := range page.CommonPrefixes {
			loc := strings.TrimSuffix(p, "/")
			name, ok := strings.CutSuffix(loc, ".lance")
			if !ok || name == "" || strings.Contains(name, Delimiter) || s.locations[loc] {
				continue
			}
			if r := s.rows[name]; r != nil {
				continue
			}
			names = append(names, name)
		}
		if page.NextStartAfter == "" || page.NextStartAfter <= opts.StartAfter {
			break
		}
		opts.StartAfter = page.NextStartAfter
	}
	found := make([]v1Table, len(names))
	live := make([]bool, len(names))
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(parallelChecks)
	for i, name := range names {
		g.Go(func() error {
			latest, ok, err := n.v1Check(gctx, v1Location(name))
			found[i], live[i] = v1Table{name: name, latest: latest}, ok
			return err
		})
	}
	if err := g.Wait(); err != nil {
		return nil, err
	}
	out := found[:0]
	for i, f := range found {
		if live[i] {
			out = append(out, f)
		}
	}
	return out, nil
}

// v1Check reports whether directory loc is a table (v1Exists) and, when it is, its latest
// manifest as the check listed it (zero Version: only the declared marker).
func (n *Namespace) v1Check(ctx context.Context, loc string) (lance.ManifestLocation, bool, error) {
	// Backed: a Lance version, or else the declared marker (namespace.backed, keeping what it
	// listed).
	latest, err := lance.NewDataset(storage.Sub(n.root, loc+"/")).LatestLocation(ctx)
	switch {
	case errors.Is(err, lance.ErrDatasetNotFound):
		latest = lance.ManifestLocation{}
		if _, err := n.root.Stat(ctx, loc+"/"+ReservedMarker); errors.Is(err, storage.ErrNotFound) {
			return latest, false, nil
		} else if err != nil {
			return latest, false, fmt.Errorf("namespace: stat %s: %w", loc, err)
		}
	case err != nil:
		return latest, false, fmt.Errorf("namespace: list %s: %w", loc, err)
	}
	if _, err := n.root.Stat(ctx, loc+"/"+CreatingMarker); err == nil {
		return latest, false, nil // a create or declare is filling it (or crashed doing so)
	} else if !errors.Is(err, storage.ErrNotFound) {
		return latest, false, fmt.Errorf("namespace: stat %s: %w", loc, err)
	}
	_, err = n.root.Stat(ctx, loc+"/"+DeregisteredMarker)
	if errors.Is(err, storage.ErrNotFound) {
		return latest, true, nil
	}
	if err != nil {
		return latest, false, fmt.Errorf("namespace: stat %s: %w", loc, err)
	}
	return latest, false, nil
}
