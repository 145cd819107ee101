package namespace

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/url"
	"path"
	"slices"
	"strings"

	"github.com/google/uuid"

	"github.com/lancecat/lancecat/catalog"
	nserr "github.com/lancecat/lancecat/errors"
	"github.com/lancecat/lancecat/ident"
	"github.com/lancecat/lancecat/lance"
	"github.com/lancecat/lancecat/storage"
)

// Dataset is the Lance dataset at the table's location.
func (n *Namespace) Dataset(t *catalog.Entry) *lance.Dataset {
	return lance.NewDatasetAt(storage.Sub(n.root, t.Location+"/"), t.URI)
}

func (n *Namespace) table(id ident.ID, r *row, loc string) *entry {
	t := &entry{Entry: &catalog.Entry{ID: id, Location: loc, URI: n.URI(loc), Properties: map[string]string{}, StorageOptions: clonedProps(n.opts.StorageOptions)}}
	if r != nil {
		t.inManifest, t.row = true, r
		t.Properties = decodeProps(r.Metadata)
	}
	return t
}

// v1Location is the compatibility-mode directory of root table name.
func v1Location(name string) string { return name + ".lance" }

// lookupTable finds table id: its manifest row, or (compatibility mode, root only) a <name>.lance
// directory with files and without the deregistered marker.
func (n *Namespace) lookupTable(ctx context.Context, s *snapshot, id ident.ID) (*entry, error) {
	oid, err := objectID(id)
	if err != nil {
		return nil, err
	}
	if id.IsRoot() {
		return nil, nserr.InvalidInputf("a table id needs at least one part")
	}
	if r := s.rows[oid]; r != nil {
		if r.Type == TypeTable && r.Location != nil {
			t := n.table(id, r, *r.Location)
			t.ManagedVersioning = s.managed()
			return t, nil
		}
		return nil, nserr.TableNotFoundf("table %s not found (it is a %s)", quoteID(id), r.Type)
	}
	if len(id) == 1 && !n.opts.DisableCompatibility {
		loc := v1Location(id[0])
		if !s.locations[loc] {
			ok, err := n.v1Exists(ctx, loc)
			if err != nil {
				return nil, err
			}
			if ok {
				t := n.table(id, nil, loc)
				t.ManagedVersioning = s.managed()
				return t, nil
			}
		}
	}
	if err := s.requireNamespace(id.Parent()); err != nil {
		return nil, err
	}
	return nil, nserr.TableNotFoundf("table %s not found", quoteID(id))
}

// v1Exists reports whether directory loc is a table: it holds a Lance version or the declared
// marker (files alone, such as the data file of a create that crashed before its first version,
// are no table any Lance reader can open) and is not marked deregistered.
func (n *Namespace) v1Exists(ctx context.Context, loc string) (bool, error) {
	_, ok, err := n.v1Check(ctx, loc)
	return ok, err
}

// newLocation picks the directory of a new table: <name>.lance for a root table in
// compatibility mode, else <hash>_<object_id>.
func (n *Namespace) newLocation(id ident.ID, oid string) string {
	if len(id) == 1 && !n.opts.DisableCompatibility {
		return v1Location(id[0])
	}
	return fmt.Sprintf("%08x_%s", rand.Uint32(), oid)
}

// relativeLocation turns a client-given location into one relative to the root; anything that
// would leave the root is refused. tableLocation adds the reserved paths.
func (n *Namespace) relativeLocation(loc string) (string, error) {
	loc = strings.TrimRight(loc, "/")
	root := n.opts.RootURI
	if strings.Contains(loc, "://") || strings.HasPrefix(loc, "/") {
		abs := loc
		if strings.HasPrefix(abs, "file://") && !strings.Contains(root, "://") {
			if u, err := url.Parse(abs); err == nil {
				abs = u.Path
			}
		}
		rel, ok := strings.CutPrefix(abs, root+"/")
		if root == "" || !ok {
			return "", nserr.InvalidInputf("location %q is outside the catalog root", loc)
		}
		loc = rel
	}
	clean := path.Clean(loc)
	if clean != loc || loc == "" || loc == "." || strings.HasPrefix(loc, "../") || loc == ".." || loc == ManifestTable || strings.HasPrefix(loc, ManifestTable+"/") {
		return "", nserr.InvalidInputf("location %q is not a directory inside the catalog root", loc)
	}
	if err := storage.ValidateKey(loc); err != nil {
		return "", nserr.InvalidInputf("location %q: %v", loc, err)
	}
	return loc, nil
}

// DeclareTable reserves table id: a .lance-reserved marker at a new location (where the client
// then writes the dataset), then the manifest entry; location, when given, is used instead. The
// marker is written first and only if absent, so an entry is never visible without it, and two
// declarations of one directory cannot both hold it.
func (n *Namespace) declareTable(ctx context.Context, id ident.ID, location string, props map[string]string) (*entry, error) {
	oid, err := objectID(id)
	if err != nil {
		return nil, err
	}
	if len(id) == 0 {
		return nil, nserr.InvalidInputf("a table id needs at least one part")
	}
	if location != "" {
		if location, err = n.tableLocation(location); err != nil {
			return nil, err
		}
		if err := n.checkEmpty(ctx, location); err != nil {
			return nil, err
		}
	}
	s, err := n.snapshot(ctx)
	if err != nil {
		return nil, err
	}
	if err := n.checkFree(ctx, s, id, oid); err != nil {
		return nil, err
	}
	loc, release, err := n.claimLocation(ctx, s, id, oid, location)
	if err != nil {
		return nil, err
	}
	defer release()
	// The marker holds a token of this declaration, so it is told apart from another's marker
	// written after a drop deleted this one (readers only test that the file exists).
	marker, token := loc+"/"+ReservedMarker, []byte(uuid.NewString())
	info, err := n.root.PutIfAbsent(ctx, marker, bytes.NewReader(token), int64(len(token)))
	if errors.Is(err, storage.ErrExists) {
		return nil, nserr.TableAlreadyExistsf("table %s already exists (location %s is already declared)", quoteID(id), loc)
	} else if err != nil {
		return nil, fmt.Errorf("namespace: write %s marker: %w", ReservedMarker, err)
	}
	t := n.table(id, nil, loc)
	t.Properties = clonedProps(props)
	n.testHook(hookBeforePublish, t)
	if err := n.publishEntry(ctx, t, oid, loc, props); err != nil {
		n.takeBack(context.WithoutCancel(ctx), loc, storage.ObjectInfo{Key: ReservedMarker, ETag: info.ETag})
		return nil, err
	}
	// The table is public now: a client (or an overwrite) writing its first version may already
	// have deleted the marker. Nothing may be taken back (see CreatingMarker).
	n.testHook(hookAfterPublish, t)
	return t, nil
}

// checkNoV1 refuses to create root table id over an unlisted <name>.lance directory.
func (n *Namespace) checkNoV1(ctx context.Context, id ident.ID) error {
	if len(id) != 1 || n.opts.DisableCompatibility {
		return nil
	}
	s, err := n.snapshot(ctx)
	if err != nil {
		return err
	}
	loc := v1Location(id[0])
	if s.locations[loc] {
		return nil
	}
	ok, err := n.v1Exists(ctx, loc)
	if err != nil {
		return err
	}
	if ok {
		if _, inManifest := s.rows[id[0]]; !inManifest {
			return nserr.TableAlreadyExistsf("table %s already exists", quoteID(id))
		}
	}
	return nil
}

// DescribeTable finds table id.
func (n *Namespace) describeTable(ctx context.Context, id ident.ID) (*entry, error) {
	s, err := n.snapshot(ctx)
	if err != nil {
		return nil, err
	}
	return n.lookupTable(ctx, s, id)
}

// TableExists fails with TableNotFound unless table id exists (an entry backed by neither a
// dataset nor a declaration does not: describe answers the same).
func (n *Namespace) TableExists(ctx context.Context, id ident.ID) error {
	t, err := n.describeTable(ctx, id)
	if err != nil || !t.inManifest {
		return err
	}
	if ghost, err := n.ghost(ctx, t.row); err != nil {
		return err
	} else if ghost {
		return n.declared(ctx, t)
	}
	return nil
}

// DropTable removes table id from the namespace and deletes its directory, so the name can be
// created again. Bytes another entry still holds (an alias from before locations were owned) are
// left alone: the entry is only unlinked.
func (n *Namespace) dropTable(ctx context.Context, id ident.ID) (*entry, error) {
	t, err := n.unlink(ctx, id)
	if err != nil {
		return nil, err
	}
	n.testHook(hookUnlinked, t)
	if !t.inManifest {
		if err := n.dropV1Dir(ctx, t); err != nil {
			return nil, err
		}
		return t, nil
	}
	if err := n.deleteDir(ctx, t.Location); err != nil {
		return nil, err
	}
	return t, nil
}

// dropV1Dir deletes the directory of t, a compatibility-mode root table (<name>.lance, no row).
// That it is a table was decided on what the directory held a moment ago: since, its table may
// have been dropped and a create of the name may have claimed the emptied directory for its own
// (not yet committed) table. So the directory is claimed first (CreatingMarker, put if absent:
// no create can claim it meanwhile, and one that has claimed it makes this drop find no table),
// then checked again, emptied, and the claim dropped last.
func (n *Namespace) dropV1Dir(ctx context.Context, t *entry) error {
	loc := t.Location
	gone := nserr.TableNotFoundf("table %s not found", quoteID(t.ID))
	token := []byte(uuid.NewString())
	claim, err := n.root.PutIfAbsent(ctx, loc+"/"+CreatingMarker, bytes.NewReader(token), int64(len(token)))
	switch {
	case errors.Is(err, storage.ErrExists):
		return gone // a create or declare is filling it: no table of its own
	case err != nil:
		return fmt.Errorf("namespace: write %s marker: %w", CreatingMarker, err)
	}
	key := loc + "/" + CreatingMarker
	defer func() {
		cleanup := context.WithoutCancel(ctx)
		if cur, err := n.root.Stat(cleanup, key); err == nil && cur.ETag == claim.ETag {
			_ = n.root.Delete(cleanup, key)
		}
	}()
	s, err := n.snapshot(ctx)
	if err != nil {
		return err
	}
	if s.locations[loc] || n.holder(s, loc, "") != nil {
		return gone // a create committed it (and let go of its claim) meanwhile: its table now
	}
	if _, err := n.root.Stat(ctx, loc+"/"+DeregisteredMarker); err == nil {
		return gone
	}
	objs, err := storage.ListAll(ctx, n.root, loc+"/")
	if err != nil {
		return fmt.Errorf("namespace: list %s: %w", loc, err)
	}
	for _, o := range objs {
		if o.Key == key {
			continue
		}
		if err := n.root.Delete(ctx, o.Key); err != nil {
			return fmt.Errorf("namespace: delete %s: %w", o.Key, err)
		}
	}
	return nil
}

// DeregisterTable removes table id from the namespace and keeps its data. A root directory in
// compatibility mode is marked deregistered, so the listing does not bring it back.
func (n *Namespace) deregisterTable(ctx context.Context, id ident.ID) (*entry, error) {
	t, err := n.unlink(ctx, id)
	if err != nil {
		return nil, err
	}
	if len(id) == 1 && !n.opts.DisableCompatibility && t.Location == v1Location(id[0]) {
		if _, err := n.root.Put(ctx, t.Location+"/"+DeregisteredMarker, bytes.NewReader(nil), 0); err != nil {
			return nil, fmt.Errorf("namespace: write %s marker: %w", DeregisteredMarker, err)
		}
	}
	return t, nil
}

// unlink deletes table id's manifest entry (a no-op for a directory-only root table).
func (n *Namespace) unlink(ctx context.Context, id ident.ID) (*entry, error) {
	var t *entry
	_, err := n.commit(ctx, func(s *snapshot) (*change, error) {
		var err error
		if t, err = n.lookupTable(ctx, s, id); err != nil {
			return nil, err
		}
		if !t.inManifest {
			return nil, errNoChange
		}
		return &change{deletes: []*row{t.row}}, nil
	})
	return t, err
}

// RegisterTable adds an existing dataset at location (relative to the root, or a URI inside it)
// as table id. Mode Overwrite replaces an existing entry of that id.
func (n *Namespace) registerTable(ctx context.Context, id ident.ID, location, mode string, props map[string]string) (*entry, error) {
	oid, err := objectID(id)
	if err != nil {
		return nil, err
	}
	if len(id) == 0 {
		return nil, nserr.InvalidInputf("a table id needs at least one part")
	}
	loc, err := n.tableLocation(location)
	if err != nil {
		return nil, err
	}
	if mode != catalog.ModeOverwrite {
		if err := n.checkNoV1(ctx, id); err != nil {
			return nil, err
		}
	}
	var t *entry
	_, err = n.commit(ctx, func(s *snapshot) (*change, error) {
		if err := s.requireNamespace(id.Parent()); err != nil {
			return nil, err
		}
		ch := &change{}
		if r := s.rows[oid]; r != nil {
			if mode != catalog.ModeOverwrite || r.Type != TypeTable {
				return nil, nserr.TableAlreadyExistsf("table %s already exists", quoteID(id))
			}
			ch.deletes = append(ch.deletes, r)
		}
		// The entry an overwrite replaces lets go of its location in this same commit.
		if err := n.checkUnheld(ctx, s, loc, oid); err != nil {
			return nil, err
		}
		// Register names an existing table: a location with neither a dataset nor a declaration
		// would make an entry every read answers TableNotFound (an unfinished create), so the
		// register that made it must not answer ok (scripts/faults: register → ok, describe →
		// 404, after a drop had destroyed what was at the location).
		if ok, err := n.backed(ctx, loc); err != nil {
			return nil, err
		} else if !ok {
			return nil, nserr.TableNotFoundf("there is no Lance table at %s to register as %s (neither a dataset nor a declaration)", loc, quoteID(id))
		}
		t = n.table(id, nil, loc)
		t.Properties = clonedProps(props)
		ch.inserts = append(ch.inserts, newRow{ObjectID: oid, Type: TypeTable, Location: &loc, Metadata: encodeProps(props)})
		return ch, nil
	})
	if err != nil {
		return nil, err
	}
	t.inManifest = true
	if err := n.root.Delete(ctx, loc+"/"+DeregisteredMarker); err != nil {
		return nil, fmt.Errorf("namespace: remove %s marker: %w", DeregisteredMarker, err)
	}
	return t, nil
}

// RenameTable moves table id to newNamespace (nil: its own) under newName. It is a pointer
// move in one commit: the entry of the source is retired and the destination registered at the
// source's own location, so of concurrent renames of one table exactly one succeeds.
func (n *Namespace) renameTable(ctx context.Context, id ident.ID, newNamespace ident.ID, newName string) (*entry, error) {
	if newNamespace == nil {
		newNamespace = id.Parent()
	}
	dest := newNamespace.Child(newName)
	destOID, err := objectID(dest)
	if err != nil {
		return nil, err
	}
	if newName == "" {
		return nil, nserr.InvalidInputf("new_table_name is required")
	}
	if err := n.checkNoV1(ctx, dest); err != nil {
		return nil, err
	}
	var t *entry
	_, err = n.commit(ctx, func(s *snapshot) (*change, error) {
		src, err := n.lookupTable(ctx, s, id)
		if err != nil {
			return nil, err
		}
		if err := s.requireNamespace(newNamespace); err != nil {
			return nil, err
		}
		if s.rows[destOID] != nil {
			return nil, nserr.TableAlreadyExistsf("table %s already exists", quoteID(dest))
		}
		loc := src.Location
		nr := newRow{ObjectID: destOID, Type: TypeTable, Location: &loc}
		ch := &change{}
		if src.row != nil {
			ch.deletes = append(ch.deletes, src.row)
			nr.Metadata, nr.BaseObjects, nr.like = src.row.Metadata, src.row.BaseObjects, src.row
		}
		ch.inserts = append(ch.inserts, nr)
		t = n.table(dest, nil, loc)
		t.Properties = src.Properties
		return ch, nil
	})
	if err != nil {
		return nil, err
	}
	t.inManifest = true
	return t, nil
}

// ListTables lists the direct child tables of namespace id by name, in name order. In
// compatibility mode the root also lists its <name>.lance directories.
func (n *Namespace) ListTables(ctx context.Context, id ident.ID, token string, limit int) (catalog.Page, error) {
	s, err := n.snapshot(ctx)
	if err != nil {
		return catalog.Page{}, err
	}
	if err := s.requireNamespace(id); err != nil {
		return catalog.Page{}, err
	}
	oid, _ := objectID(id)
	names := s.childNames(oid, TypeTable)
	if id.IsRoot() && !n.opts.DisableCompatibility {
		v1, err := n.v1Tables(ctx, s)
		if err != nil {
			return catalog.Page{}, err
		}
		names = append(names, v1...)
		slices.Sort(names)
		names = slices.Compact(names)
	}
	return catalog.PageOf(names, token, limit), nil
}

// ListAllTables lists every table of the namespace by its full object id ("ns$sub$table"), in
// order.
func (n *Namespace) ListAllTables(ctx context.Context, token string, limit int) (catalog.Page, error) {
	s, err := n.snapshot(ctx)
	if err != nil {
		return catalog.Page{}, err
	}
	var names []string
	for oid, r := range s.rows {
		if r.Type == TypeTable {
			names = append(names, oid)
		}
	}
	if !n.opts.DisableCompatibility {
		v1, err := n.v1Tables(ctx, s)
		if err != nil {
			return catalog.Page{}, err
		}
		names = append(names, v1...)
	}
	slices.Sort(names)
	return catalog.PageOf(slices.Compact(names), token, limit), nil
}

// SplitID turns an object id from ListAllTables into its parts.
func SplitID(oid string) ident.ID { return splitObjectID(oid) }

// v1Tables are the root's <name>.lance directories that are tables of their own: not backing a
// manifest entry, not deregistered.
func (n *Namespace) v1Tables(ctx context.Context, s *snapshot) ([]string, error) {
	found, err := n.v1Found(ctx, s)
	if err != nil {
		return nil, err
	}
	out := make([]string, len(found))
	for i, f := range found {
		out[i] = f.name
	}
	return out, nil
}

// entry is a table entry as this root holds it: the catalog's entry, and whether (and by which
// manifest row) the manifest holds it.
type entry struct {
	*catalog.Entry
	// inManifest is false for a compatibility-mode root table found only as <name>.lance.
	inManifest bool
	row        *row
}
