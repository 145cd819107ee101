package namespace

import (
	"context"
	"fmt"
	"strings"

	nserr "github.com/lancecat/lancecat/errors"
	"github.com/lancecat/lancecat/ident"
	"github.com/lancecat/lancecat/storage"
)

// Deleted is what DeleteLocation removed.
type Deleted struct {
	Objects int
	Bytes   int64
}

// DeleteLocation deletes every object under directory loc (relative to the root): the bytes of a
// dropped table the trash purge takes. A location is a table directory and nothing else: what the
// gate of every door refuses (the root, anything outside it, the reserved paths) is refused here
// too, and so is a location a table of this root still holds, at it, inside it or around it,
// whatever its id (a register may have adopted the bytes; they are that table's now). The check
// reads the manifest once: a register racing the delete is the caller's to exclude (the purge
// claims the trash record first).
func (n *Namespace) DeleteLocation(ctx context.Context, loc string) (Deleted, error) {
	rel, err := n.tableLocation(loc)
	if err != nil {
		return Deleted{}, fmt.Errorf("refusing to delete location %q: %w", loc, err)
	}
	if err := n.checkLocationUnused(ctx, rel); err != nil {
		return Deleted{}, err
	}
	objs, err := storage.ListAll(ctx, n.root, rel+"/")
	if err != nil {
		return Deleted{}, fmt.Errorf("namespace: list %s: %w", rel, err)
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

// checkLocationUnused refuses loc when a table of the root lives at it, inside it or around it.
func (n *Namespace) checkLocationUnused(ctx context.Context, loc string) error {
	user, err := n.locationUser(ctx, loc)
	if err != nil {
		return err
	}
	if user != "" {
		return nserr.Wrap(nserr.InvalidTableState, ErrLocationInUse, fmt.Sprintf("location %s is in use by %s", loc, user))
	}
	// In compatibility mode a <name>.lance directory of the root is a table of its own, unless it
	// carries the deregistered marker.
	if name, ok := strings.CutSuffix(loc, ".lance"); ok && !strings.Contains(name, "/") && !n.opts.DisableCompatibility {
		t, err := n.describeTable(ctx, ident.ID{name})
		switch {
		case err == nil && t.Location == loc:
			return nserr.Wrap(nserr.InvalidTableState, ErrLocationInUse, "location "+loc+" is the root table "+name)
		case err != nil && !nserr.Is(err, nserr.ErrTableNotFound) && !nserr.Is(err, nserr.ErrInvalidInput):
			return err
		}
	}
	return nil
}
