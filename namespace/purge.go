package namespace

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	nserr "github.com/lancecat/lancecat/errors"
	"github.com/lancecat/lancecat/ident"
	"github.com/lancecat/lancecat/storage"
)

// ErrLocationInUse is the cause of a DeleteLocation refused because a table of the root uses the
// location (or a directory inside it, or one around it).
var ErrLocationInUse = errors.New("namespace: the location is in use by a table")

// Deleted is what DeleteLocation removed.
type Deleted struct {
	Objects int
	Bytes   int64
}

// DeleteLocation deletes every object under directory loc (relative to the root): the bytes of a
// dropped table the trash purge takes. A location is a table directory and nothing else: empty,
// absolute, dotted or the catalog's own paths (__manifest, _lancecat) are refused, and so is one a
// table of this root still references, whatever its id (a register may have adopted the bytes;
// they are that table's now). The check reads the manifest once: a register racing the delete is
// the caller's to exclude (the purge claims the trash record first).
func (n *Namespace) DeleteLocation(ctx context.Context, loc string) (Deleted, error) {
	if err := deletableLocation(loc); err != nil {
		return Deleted{}, err
	}
	if err := n.checkLocationUnused(ctx, loc); err != nil {
		return Deleted{}, err
	}
	objs, err := storage.ListAll(ctx, n.root, loc+"/")
	if err != nil {
		return Deleted{}, fmt.Errorf("namespace: list %s: %w", loc, err)
	}
	var out Deleted
	for _, o := range objs {
		if err := n.root.Delete(ctx, o.Key); err != nil {
			return out, fmt.Errorf("namespace: delete %s: %w", o.Key, err)
		}
		out.Objects++
		out.Bytes += o.Size
	}
	return out, nil
}

func deletableLocation(loc string) error {
	switch {
	case loc == "":
		return nserr.InvalidInputf("refusing to delete an empty location: it would be the whole root")
	case strings.HasPrefix(loc, "/") || strings.Contains(loc, "://") || strings.Contains(loc, `\`):
		return nserr.InvalidInputf("refusing to delete location %q: it is not relative to the root", loc)
	case strings.HasPrefix(loc, ManifestTable) || strings.HasPrefix(loc, "_lancecat"):
		return nserr.InvalidInputf("refusing to delete location %q: it is the catalog's own", loc)
	}
	if slices.ContainsFunc(strings.Split(loc, "/"), func(seg string) bool { return seg == "" || seg == "." || seg == ".." }) {
		return nserr.InvalidInputf("refusing to delete location %q: it has an empty or dotted segment", loc)
	}
	return nil
}

// checkLocationUnused refuses loc when a table of the root lives at it, inside it or around it.
func (n *Namespace) checkLocationUnused(ctx context.Context, loc string) error {
	s, err := n.snapshot(ctx)
	if err != nil {
		return err
	}
	overlaps := func(l string) bool {
		return l == loc || strings.HasPrefix(l, loc+"/") || strings.HasPrefix(loc, l+"/")
	}
	for _, r := range s.rows {
		if r.Type == TypeTable && r.Location != nil && overlaps(strings.TrimRight(*r.Location, "/")) {
			return nserr.Wrap(nserr.InvalidTableState, ErrLocationInUse,
				fmt.Sprintf("location %s is in use by table %s", loc, SplitID(r.ObjectID).Join(ident.DefaultDelimiter)))
		}
	}
	// In compatibility mode a <name>.lance directory of the root is a table of its own, unless it
	// carries the deregistered marker.
	if name, ok := strings.CutSuffix(loc, ".lance"); ok && !strings.Contains(name, "/") && !n.opts.DisableCompatibility {
		t, err := n.DescribeTable(ctx, ident.ID{name})
		switch {
		case err == nil && t.Location == loc:
			return nserr.Wrap(nserr.InvalidTableState, ErrLocationInUse, "location "+loc+" is the root table "+name)
		case err != nil && !nserr.Is(err, nserr.ErrTableNotFound) && !nserr.Is(err, nserr.ErrInvalidInput):
			return err
		}
	}
	return nil
}
