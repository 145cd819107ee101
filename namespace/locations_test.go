package namespace

import (
	"bytes"
	"context"
	"fmt"
	"sort"
	"testing"

	"gotest.tools/v3/assert"

	"github.com/lancecat/lancecat/catalog"
	nserr "github.com/lancecat/lancecat/errors"
	"github.com/lancecat/lancecat/ident"
	"github.com/lancecat/lancecat/storage"
)

// keys lists every object of the bucket: what "nothing written" compares.
func keys(t *testing.T, b storage.Bucket) []string {
	t.Helper()
	objs, err := storage.ListAll(context.Background(), b, "")
	assert.NilError(t, err)
	out := make([]string, 0, len(objs))
	for _, o := range objs {
		out = append(out, o.Key)
	}
	sort.Strings(out)
	return out
}

// put writes one object (a stand-in for bytes someone else owns).
func put(t *testing.T, b storage.Bucket, key, body string) {
	t.Helper()
	_, err := b.Put(context.Background(), key, bytes.NewReader([]byte(body)), int64(len(body)))
	assert.NilError(t, err)
}

// writtenTable declares id and writes version 1 of its dataset: a table with bytes.
func writtenTable(t *testing.T, n *Namespace, id ident.ID, location string) *catalog.Entry {
	t.Helper()
	ctx := context.Background()
	tb, err := n.DeclareTable(ctx, id, location, nil)
	assert.NilError(t, err)
	assert.NilError(t, emptyDataset(ctx, n.Dataset(tb)))
	return tb
}

// hasVersion asserts that table id still reads its version 1: its bytes are intact.
func hasVersion(t *testing.T, n *Namespace, id ident.ID) {
	t.Helper()
	ctx := context.Background()
	tb, err := n.DescribeTable(ctx, id)
	assert.NilError(t, err)
	st, err := n.handleOf(tb).State(ctx, catalog.DescribeOptions{})
	assert.NilError(t, err)
	assert.Assert(t, st != nil, "table %v lost its dataset", id)
	assert.Equal(t, st.Version, uint64(1))
}

// locationDoors are every door of the namespace that takes a client-given location.
var locationDoors = []struct {
	name string
	// declares is set for doors where "" means "pick one".
	declares bool
	call     func(ctx context.Context, n *Namespace, id ident.ID, loc string) error
}{
	{"register", false, func(ctx context.Context, n *Namespace, id ident.ID, loc string) error {
		_, err := n.RegisterTable(ctx, id, loc, "", nil)
		return err
	}},
	{"register overwrite", false, func(ctx context.Context, n *Namespace, id ident.ID, loc string) error {
		_, err := n.RegisterTable(ctx, id, loc, catalog.ModeOverwrite, nil)
		return err
	}},
	{"declare", true, func(ctx context.Context, n *Namespace, id ident.ID, loc string) error {
		_, err := n.DeclareTable(ctx, id, loc, nil)
		return err
	}},
	{"create", true, func(ctx context.Context, n *Namespace, id ident.ID, loc string) error {
		_, _, err := n.CreateTable(ctx, id, catalog.NewTable{Location: loc, Schema: manifestSchema()})
		return err
	}},
}

// TestLocationsReserved: no door accepts a location that is the root, leaves it, or is, contains
// or lies inside a path the catalog keeps for itself (issue 10 item 1: a register at _lancecat
// followed by a drop deleted the control root). The refusal is InvalidInput and writes nothing.
func TestLocationsReserved(t *testing.T) {
	ctx := context.Background()
	n, b := newTestNamespace(t)
	_, err := n.CreateNamespace(ctx, ident.ID{"ns1"}, nil, "")
	assert.NilError(t, err)
	// The control root's records, which the attack deleted.
	put(t, b, "_lancecat/_apikeys/k1.json", "{}")

	locations := []string{
		"_lancecat", "_lancecat/", "_lancecat/_apikeys", "_LanceCat", "/root/_lancecat", "file:///root/_lancecat",
		"__manifest", "__manifest/data", "/root/__manifest",
		".lancecat-tmp", ".lancecat-tmp/x",
		"", ".", "./", "/root", "/root/", "file:///root",
		"..", "../x", "a/../../x", "a/../x", "./x", "a//b", "/root/../x",
		"/abs", "/elsewhere/t", "file:///elsewhere/t", "s3://other-bucket/t", "s3://other-bucket/root/t",
		"a\\b", "a\x00b",
	}
	for _, door := range locationDoors {
		for i, loc := range locations {
			if loc == "" && door.declares {
				continue // "" picks a location
			}
			t.Run(fmt.Sprintf("%s/%q", door.name, loc), func(t *testing.T) {
				before := keys(t, b)
				err := door.call(ctx, n, ident.ID{"ns1", fmt.Sprintf("x%d", i)}, loc)
				assert.ErrorIs(t, err, nserr.ErrInvalidInput)
				assert.DeepEqual(t, keys(t, b), before)
			})
		}
	}
	// The root table door of compatibility mode too.
	_, err = n.RegisterTable(ctx, ident.ID{"x"}, "_lancecat", "", nil)
	assert.ErrorIs(t, err, nserr.ErrInvalidInput)
	page, err := n.ListAllTables(ctx, "", 0)
	assert.NilError(t, err)
	assert.Equal(t, len(page.Names), 0)
}

// TestLocationsHeld: a location equal to, inside or around another table's is refused with
// TableAlreadyExists, by every door, whatever form it is given in; nothing is written (issue 10
// item 2: an alias's drop deleted its victim's bytes, and read around the victim's grants).
func TestLocationsHeld(t *testing.T) {
	ctx := context.Background()
	n, b := newTestNamespace(t)
	for _, ns := range []string{"ns1", "ns2"} {
		_, err := n.CreateNamespace(ctx, ident.ID{ns}, nil, "")
		assert.NilError(t, err)
	}
	secret := writtenTable(t, n, ident.ID{"ns2", "secret"}, "")
	nested := writtenTable(t, n, ident.ID{"ns2", "nested"}, "dir/nested")

	locations := []string{
		secret.Location, secret.Location + "/", "/root/" + secret.Location, "file:///root/" + secret.Location,
		secret.Location + "/_versions", secret.Location + "/data/x",
		nested.Location, "dir", "dir/nested/sub",
	}
	for _, door := range locationDoors {
		for i, loc := range locations {
			t.Run(fmt.Sprintf("%s/%q", door.name, loc), func(t *testing.T) {
				before := keys(t, b)
				err := door.call(ctx, n, ident.ID{"ns1", fmt.Sprintf("steal%d", i)}, loc)
				assert.ErrorIs(t, err, nserr.ErrTableAlreadyExists)
				assert.ErrorIs(t, err, ErrLocationInUse)
				assert.DeepEqual(t, keys(t, b), before)
			})
		}
	}
	page, err := n.ListTables(ctx, ident.ID{"ns1"}, "", 0)
	assert.NilError(t, err)
	assert.Equal(t, len(page.Names), 0)
	hasVersion(t, n, ident.ID{"ns2", "secret"})
	hasVersion(t, n, ident.ID{"ns2", "nested"})

	// An overwrite of the holder itself at its own location is no alias.
	_, err = n.RegisterTable(ctx, ident.ID{"ns2", "secret"}, secret.Location, catalog.ModeOverwrite, nil)
	assert.NilError(t, err)
	// An overwrite of another entry may not take the location either.
	writtenTable(t, n, ident.ID{"ns1", "mine"}, "")
	_, err = n.RegisterTable(ctx, ident.ID{"ns1", "mine"}, secret.Location, catalog.ModeOverwrite, nil)
	assert.ErrorIs(t, err, nserr.ErrTableAlreadyExists)

	// Once the holder is deregistered, its bytes may be registered again: that is what register
	// is for. Declaring a new table over them is refused: a declared table starts empty.
	_, err = n.DeregisterTable(ctx, ident.ID{"ns2", "secret"})
	assert.NilError(t, err)
	_, err = n.DeclareTable(ctx, ident.ID{"ns1", "over"}, secret.Location, nil)
	assert.ErrorIs(t, err, nserr.ErrTableAlreadyExists)
	_, err = n.RegisterTable(ctx, ident.ID{"ns1", "adopted"}, secret.Location, "", nil)
	assert.NilError(t, err)
	hasVersion(t, n, ident.ID{"ns1", "adopted"})
}

// TestLocationsHeldByRootTable: in compatibility mode a <name>.lance directory is a table of its
// own; a location inside it is held, and a new root table whose <name>.lance another entry holds
// gets a directory of its own instead of sharing.
func TestLocationsHeldByRootTable(t *testing.T) {
	ctx := context.Background()
	n, b := newTestNamespace(t)
	_, err := n.CreateNamespace(ctx, ident.ID{"ns1"}, nil, "")
	assert.NilError(t, err)
	put(t, b, "legacy.lance/_versions/1.manifest", "x")
	_, err = n.RegisterTable(ctx, ident.ID{"ns1", "inner"}, "legacy.lance/_versions", "", nil)
	assert.ErrorIs(t, err, nserr.ErrTableAlreadyExists)

	// y registered at x.lance (migrating a directory under another name), then x declared.
	writtenTable(t, n, ident.ID{"ns1", "src"}, "x.lance")
	x, err := n.DeclareTable(ctx, ident.ID{"x"}, "", nil)
	assert.NilError(t, err)
	assert.Assert(t, x.Location != "x.lance", x.Location)
	_, err = n.DropTable(ctx, ident.ID{"x"})
	assert.NilError(t, err)
	hasVersion(t, n, ident.ID{"ns1", "src"})
}

// TestDropAliasKeepsVictimBytes: entries that share bytes (legacy data from before locations were
// owned, or written by another implementation) are unlinked by a drop, never emptied: the other
// entry keeps its bytes. Dropping the last holder deletes them. A legacy entry at a reserved path
// or at the root itself is unlinked, and nothing is deleted.
func TestDropAliasKeepsVictimBytes(t *testing.T) {
	ctx := context.Background()
	n, b := newTestNamespace(t)
	for _, ns := range []string{"ns1", "ns2", "ns3"} {
		_, err := n.CreateNamespace(ctx, ident.ID{ns}, nil, "")
		assert.NilError(t, err)
	}
	secret := writtenTable(t, n, ident.ID{"ns2", "secret"}, "")
	writtenTable(t, n, ident.ID{"ns2", "inner"}, "outer/inner")
	put(t, b, "_lancecat/_apikeys/k1.json", "{}")
	put(t, b, "other/file", "x")
	// Legacy aliases, committed the way an older version did: no check.
	legacy := func(oid, loc string) {
		_, err := n.commit(ctx, func(*snapshot) (*change, error) {
			return &change{inserts: []newRow{{ObjectID: oid, Type: TypeTable, Location: &loc}}}, nil
		})
		assert.NilError(t, err)
	}
	legacy("ns1$steal", secret.Location)
	legacy("ns1$around", "outer")
	legacy("ns1$inside", "outer/inner/data")
	legacy("ns1$control", "_lancecat")
	legacy("ns1$root", "")
	legacy("ns1$dot", ".")
	legacy("ns3$steal", secret.Location)

	for _, name := range []string{"steal", "around", "inside", "control", "root", "dot"} {
		_, err := n.DropTable(ctx, ident.ID{"ns1", name})
		assert.NilError(t, err, name)
		_, err = n.DescribeTable(ctx, ident.ID{"ns1", name})
		assert.ErrorIs(t, err, nserr.ErrTableNotFound, name)
	}
	// A cascade drop of a namespace holding an alias keeps the victim's bytes too.
	_, err := n.DropNamespace(ctx, ident.ID{"ns3"}, "", catalog.BehaviorCascade)
	assert.NilError(t, err)

	hasVersion(t, n, ident.ID{"ns2", "secret"})
	hasVersion(t, n, ident.ID{"ns2", "inner"})
	assert.Assert(t, contains(keys(t, b), "_lancecat/_apikeys/k1.json"))
	assert.Assert(t, contains(keys(t, b), "other/file"))

	// The last holder's drop deletes the bytes.
	_, err = n.DropTable(ctx, ident.ID{"ns2", "secret"})
	assert.NilError(t, err)
	for _, k := range keys(t, b) {
		assert.Assert(t, !hasPrefix(k, secret.Location+"/"), k)
	}
}

// holders counts the manifest's table entries at loc.
func holders(t *testing.T, n *Namespace, loc string) int {
	t.Helper()
	s, err := n.snapshot(context.Background())
	assert.NilError(t, err)
	count := 0
	for _, r := range s.rows {
		if r.Type == TypeTable && r.Location != nil && *r.Location == loc {
			count++
		}
	}
	return count
}

func contains(ks []string, k string) bool {
	for _, x := range ks {
		if x == k {
			return true
		}
	}
	return false
}

func hasPrefix(s, p string) bool { return len(s) >= len(p) && s[:len(p)] == p }

// TestConcurrentRegistersOfOneLocation: the holder check runs in the manifest commit, so of
// racing registers (and declares) of one location, from separate processes, exactly one wins.
func TestConcurrentRegistersOfOneLocation(t *testing.T) {
	ctx := context.Background()
	n, b := newTestNamespace(t)
	_, err := n.CreateNamespace(ctx, ident.ID{"ns"}, nil, "")
	assert.NilError(t, err)
	for round, door := range []string{"register", "declare"} {
		loc := fmt.Sprintf("shared%d", round)
		if door == "register" {
			put(t, b, loc+"/_versions/1.manifest", "x")
		}
		wins, errs := raceProcesses(b, func(other *Namespace, i int) error {
			id := ident.ID{"ns", fmt.Sprintf("%s%d", door, i)}
			if door == "register" {
				_, err := other.RegisterTable(ctx, id, loc, "", nil)
				return err
			}
			_, err := other.DeclareTable(ctx, id, loc, nil)
			return err
		})
		assert.Equal(t, wins, 1, door)
		for _, err := range errs {
			assert.ErrorIs(t, err, nserr.ErrTableAlreadyExists, door)
		}
		assert.Equal(t, holders(t, n, loc), 1, door)
	}
}

// TestRenameKeepsOneHolder: a rename moves the entry with its location; the old id is gone and
// the location is held by the new one alone, so nothing can alias it through the old name.
func TestRenameKeepsOneHolder(t *testing.T) {
	ctx := context.Background()
	n, _ := newTestNamespace(t)
	_, err := n.CreateNamespace(ctx, ident.ID{"ns"}, nil, "")
	assert.NilError(t, err)
	src := writtenTable(t, n, ident.ID{"ns", "a"}, "")
	_, err = n.RenameTable(ctx, ident.ID{"ns", "a"}, nil, "b")
	assert.NilError(t, err)
	_, err = n.RegisterTable(ctx, ident.ID{"ns", "a"}, src.Location, "", nil)
	assert.ErrorIs(t, err, nserr.ErrTableAlreadyExists)
	assert.Equal(t, holders(t, n, src.Location), 1)
	// Dropping the renamed table deletes its bytes: it holds them alone.
	_, err = n.DropTable(ctx, ident.ID{"ns", "b"})
	assert.NilError(t, err)
	objs, err := storage.ListAll(ctx, n.root, src.Location+"/")
	assert.NilError(t, err)
	assert.Equal(t, len(objs), 0)
}
