package namespace

// What the maintenance drift scan (maintenance/drift.go) reads of a root, and the one repair it
// may make here. Read-only views of the manifest and the root's top level, plus UnlinkEmpty: a
// table entry removed only if, inside the manifest commit, its location still holds nothing.

import (
	"context"
	"errors"
	"fmt"
	"strings"

	nserr "github.com/lancecat/lancecat/errors"
	"github.com/lancecat/lancecat/ident"
	"github.com/lancecat/lancecat/storage"
)

// TableEntry is one table row of the manifest.
type TableEntry struct {
	ID ident.ID
	// Location is the row's location relative to the root ("" when it names the whole root or
	// something outside it: the scan cannot check it). Stored is the location as the row has it.
	Location string
	Stored   string
}

// TableEntries lists every table row of the manifest (not the compatibility-mode root tables).
func (n *Namespace) TableEntries(ctx context.Context) ([]TableEntry, error) {
	s, err := n.snapshot(ctx)
	if err != nil {
		return nil, err
	}
	var out []TableEntry
	for oid, r := range s.rows {
		if r.Type != TypeTable || r.Location == nil {
			continue
		}
		e := TableEntry{ID: splitObjectID(oid), Stored: *r.Location}
		if _, err := n.relativeLocation(strings.TrimRight(*r.Location, "/")); err == nil {
			e.Location = n.storedLocation(*r.Location)
		}
		out = append(out, e)
	}
	return out, nil
}

// RootBucket is the root's storage, for listing its top level and for a root-wide lease.
func (n *Namespace) RootBucket() storage.Bucket { return n.root }

// ReservedPaths are the paths under the root the catalog keeps for itself (never a table).
func (n *Namespace) ReservedPaths() []string { return append([]string(nil), n.reserved...) }

// DirectoryTables are the root's compatibility-mode tables (<name>.lance directories no row
// names): tables known only by the directory listing, as the Lance directory namespace knows
// them. Their locations, relative to the root.
func (n *Namespace) DirectoryTables(ctx context.Context) ([]string, error) {
	if n.opts.DisableCompatibility {
		return nil, nil
	}
	s, err := n.snapshot(ctx)
	if err != nil {
		return nil, err
	}
	names, err := n.v1Tables(ctx, s)
	if err != nil {
		return nil, err
	}
	out := make([]string, len(names))
	for i, name := range names {
		out[i] = v1Location(name)
	}
	return out, nil
}

// ErrLocationNotEmpty refuses UnlinkEmpty: the table's location holds objects (again).
var ErrLocationNotEmpty = errors.New("namespace: the table's location is not empty")

// UnlinkEmpty removes table id's manifest row, only if the row still names location and, checked
// inside the manifest commit (so again on every retry), nothing is stored under location. It
// deletes no object: the row pointed at nothing.
func (n *Namespace) UnlinkEmpty(ctx context.Context, id ident.ID, location string) error {
	_, err := n.commit(ctx, func(s *snapshot) (*change, error) {
		t, err := n.lookupTable(ctx, s, id)
		if err != nil {
			return nil, err
		}
		if !t.inManifest || n.storedLocation(t.Location) != location || location == "" {
			return nil, nserr.ConcurrentModificationf("table %s changed since the scan", quoteID(id))
		}
		page, err := n.root.List(ctx, location+"/", storage.ListOptions{Limit: 1})
		if err != nil {
			return nil, fmt.Errorf("namespace: list %s: %w", location, err)
		}
		if len(page.Objects) > 0 {
			return nil, ErrLocationNotEmpty
		}
		return &change{deletes: []*row{t.row}}, nil
	})
	return err
}
