package namespace

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"gotest.tools/v3/assert"

	"github.com/lancecat/lancecat/catalog"
	nserr "github.com/lancecat/lancecat/errors"
	"github.com/lancecat/lancecat/ident"
	"github.com/lancecat/lancecat/internal/testenv"
	"github.com/lancecat/lancecat/storage"
)

// errKilled is what every call answers once a killBucket's process "died".
var errKilled = errors.New("test: the process was killed")

// killBucket stands for a process that dies (kill -9) just before its n-th write: that write
// and everything after it never reach the store, reads included (a dead process reads nothing).
type killBucket struct {
	storage.Bucket
	left atomic.Int64
}

func (b *killBucket) write() error {
	if b.left.Add(-1) < 0 {
		return errKilled
	}
	return nil
}

func (b *killBucket) dead() bool { return b.left.Load() < 0 }

func (b *killBucket) Get(ctx context.Context, key string) (io.ReadCloser, storage.ObjectInfo, error) {
	if b.dead() {
		return nil, storage.ObjectInfo{}, errKilled
	}
	return b.Bucket.Get(ctx, key)
}

func (b *killBucket) GetRange(ctx context.Context, key string, off, n int64) (io.ReadCloser, error) {
	if b.dead() {
		return nil, errKilled
	}
	return b.Bucket.GetRange(ctx, key, off, n)
}

func (b *killBucket) List(ctx context.Context, prefix string, opts storage.ListOptions) (storage.ListPage, error) {
	if b.dead() {
		return storage.ListPage{}, errKilled
	}
	return b.Bucket.List(ctx, prefix, opts)
}

func (b *killBucket) Stat(ctx context.Context, key string) (storage.ObjectInfo, error) {
	if b.dead() {
		return storage.ObjectInfo{}, errKilled
	}
	return b.Bucket.Stat(ctx, key)
}

func (b *killBucket) Put(ctx context.Context, key string, r io.Reader, size int64) (storage.ObjectInfo, error) {
	if err := b.write(); err != nil {
		return storage.ObjectInfo{}, err
	}
	return b.Bucket.Put(ctx, key, r, size)
}

func (b *killBucket) PutIfAbsent(ctx context.Context, key string, r io.Reader, size int64) (storage.ObjectInfo, error) {
	if err := b.write(); err != nil {
		return storage.ObjectInfo{}, err
	}
	return b.Bucket.PutIfAbsent(ctx, key, r, size)
}

func (b *killBucket) PutIfMatch(ctx context.Context, key string, r io.Reader, size int64, etag string) (storage.ObjectInfo, error) {
	if err := b.write(); err != nil {
		return storage.ObjectInfo{}, err
	}
	return b.Bucket.PutIfMatch(ctx, key, r, size, etag)
}

func (b *killBucket) Delete(ctx context.Context, key string) error {
	if err := b.write(); err != nil {
		return err
	}
	return b.Bucket.Delete(ctx, key)
}

// oneRow is a table of one int64 column holding one row, from a checked allocator: the record is
// released when t ends, and CreateTable must not keep it.
func oneRow(t testing.TB, mode string) catalog.NewTable {
	schema := arrow.NewSchema([]arrow.Field{{Name: "x", Type: arrow.PrimitiveTypes.Int64}}, nil)
	b := array.NewInt64Builder(testenv.CheckedAllocator(t))
	b.Append(7)
	col := b.NewArray()
	b.Release()
	rec := array.NewRecordBatch(schema, []arrow.Array{col}, 1)
	col.Release()
	t.Cleanup(rec.Release)
	return catalog.NewTable{Mode: mode, Schema: schema, Rows: catalog.Records(schema, rec)}
}

// consistent walks every namespace and every table of the root the way a client would after a
// restart and checks nothing half-made is visible: each listed table describes with a schema
// and a version, or (declared is true for its name) as declared, and exists agrees.
func consistent(t *testing.T, n *Namespace, declared func(name string) bool) {
	t.Helper()
	ctx := context.Background()
	var walk func(ns ident.ID)
	walk = func(ns ident.ID) {
		tables, err := n.ListTables(ctx, ns, "", 0)
		assert.NilError(t, err)
		for _, name := range tables.Names {
			id := ns.Child(name)
			tb, err := n.DescribeTable(ctx, id)
			assert.NilError(t, err, "%s is listed", id)
			st, err := n.handleOf(tb).State(ctx, catalog.DescribeOptions{})
			assert.NilError(t, err, "%s is listed but does not describe", id)
			if st == nil {
				assert.Assert(t, declared(name), "%s is listed and has no version or schema", id)
			} else {
				assert.Assert(t, st.Version >= 1 && len(st.Schema.Fields) > 0, "%s: %+v", id, st)
			}
			assert.NilError(t, n.TableExists(ctx, id), "%s is listed", id)
		}
		kids, err := n.ListNamespaces(ctx, ns, "", 0)
		assert.NilError(t, err)
		for _, k := range kids.Names {
			walk(ns.Child(k))
		}
	}
	walk(ident.ID{})
}

// TestCrashAtEveryWrite: a create, a declare, a rename and a drop are each killed before every
// write they make, one write later each time, and a fresh Namespace (the restarted process)
// then finds nothing half-made, and can create the name again. On the code that committed the
// manifest row before the dataset, a kill between the two left a table listed and described
// with no schema or version, whose name answered "already exists" forever.
func TestCrashAtEveryWrite(t *testing.T) {
	ctx := context.Background()
	ops := []struct {
		name string
		id   ident.ID
		// setup runs on the healthy namespace before the op.
		setup func(n *Namespace) error
		run   func(n *Namespace, id ident.ID) error
	}{
		{"create", ident.ID{"ns", "c"}, nil, func(n *Namespace, id ident.ID) error {
			_, _, err := n.CreateTable(ctx, id, oneRow(t, ""))
			return err
		}},
		{"create root table", ident.ID{"c"}, nil, func(n *Namespace, id ident.ID) error {
			_, _, err := n.CreateTable(ctx, id, oneRow(t, ""))
			return err
		}},
		{"overwrite", ident.ID{"ns", "c"}, func(n *Namespace) error {
			_, _, err := n.CreateTable(ctx, ident.ID{"ns", "c"}, oneRow(t, ""))
			return err
		}, func(n *Namespace, id ident.ID) error {
			_, _, err := n.CreateTable(ctx, id, oneRow(t, catalog.ModeOverwrite))
			return err
		}},
		{"declare", ident.ID{"ns", "d"}, nil, func(n *Namespace, id ident.ID) error {
			_, err := n.DeclareTable(ctx, id, "", nil)
			return err
		}},
		{"declare root table", ident.ID{"d"}, nil, func(n *Namespace, id ident.ID) error {
			_, err := n.DeclareTable(ctx, id, "", nil)
			return err
		}},
		{"rename", ident.ID{"ns", "c"}, func(n *Namespace) error {
			_, _, err := n.CreateTable(ctx, ident.ID{"ns", "c"}, oneRow(t, ""))
			return err
		}, func(n *Namespace, id ident.ID) error {
			_, err := n.RenameTable(ctx, id, nil, "c2")
			return err
		}},
		{"drop", ident.ID{"ns", "c"}, func(n *Namespace) error {
			_, _, err := n.CreateTable(ctx, ident.ID{"ns", "c"}, oneRow(t, ""))
			return err
		}, func(n *Namespace, id ident.ID) error {
			_, err := n.DropTable(ctx, id)
			return err
		}},
		{"cascade namespace drop", ident.ID{"ns", "c"}, func(n *Namespace) error {
			_, _, err := n.CreateTable(ctx, ident.ID{"ns", "c"}, oneRow(t, ""))
			return err
		}, func(n *Namespace, id ident.ID) error {
			_, err := n.DropNamespace(ctx, id.Parent(), "", catalog.BehaviorCascade)
			return err
		}},
	}
	for _, op := range ops {
		t.Run(op.name, func(t *testing.T) {
			for kill := 0; ; kill++ {
				fs, err := storage.NewFS(t.TempDir())
				assert.NilError(t, err)
				healthy := New(fs, Options{RootURI: "/root"})
				_, err = healthy.CreateNamespace(ctx, ident.ID{"ns"}, nil, "")
				assert.NilError(t, err)
				if op.setup != nil {
					assert.NilError(t, op.setup(healthy))
				}
				kb := &killBucket{Bucket: fs}
				kb.left.Store(int64(kill))
				err = op.run(New(kb, Options{RootURI: "/root"}), op.id)
				finished := !kb.dead()
				if finished {
					assert.NilError(t, err, "the op ran to the end with %d writes", kill)
				}

				restarted := New(fs, Options{RootURI: "/root"})
				consistent(t, restarted, func(name string) bool { return strings.HasPrefix(name, "d") })
				// Every name the op touched can be made again: dropped first if it is there.
				if _, err := restarted.CreateNamespace(ctx, ident.ID{"ns"}, nil, catalog.ModeExistOk); err != nil {
					t.Fatalf("kill before write %d: %v", kill, err)
				}
				for _, id := range []ident.ID{op.id, op.id.Parent().Child("c2")} {
					if restarted.TableExists(ctx, id) == nil {
						_, err := restarted.DropTable(ctx, id)
						assert.NilError(t, err, "kill before write %d: drop %s", kill, id)
					}
					_, _, err := restarted.CreateTable(ctx, id, oneRow(t, ""))
					assert.NilError(t, err, "kill before write %d: create %s again", kill, id)
				}
				if finished {
					t.Logf("%s: killed before each of its %d writes", op.name, kill)
					return
				}
			}
		})
	}
}

// TestRacingCreateDropRename: creates, drops, renames and overwrites of one name race each other
// (and a cascade drop of their namespace), from several Namespace values over one root (several
// processes). Whatever each answered, once everything is dropped no table bytes remain: an
// acknowledged drop leaves none, a create that lost takes back what it wrote, and an overwrite
// never answers "already exists". On the code that committed the row first, a drop racing a
// create left the create's files behind, and one of two overwrites answered 409 code 5; later,
// about one run in ten left a declared table's directory unreferenced (a declare took its
// committed row back when a racing overwrite deleted its marker: TestPublishedTableIsNeverTakenBack).
func TestRacingCreateDropRename(t *testing.T) {
	ctx := context.Background()
	fs, err := storage.NewFS(t.TempDir())
	assert.NilError(t, err)
	procs := make([]*Namespace, 4)
	for i := range procs {
		procs[i] = New(fs, Options{RootURI: "/root", CompactAfter: 8 + i})
	}
	var mu sync.Mutex
	var unexpected []error
	report := func(what string, err error, allowed ...error) {
		if err == nil {
			return
		}
		for _, a := range allowed {
			if errors.Is(err, a) {
				return
			}
		}
		mu.Lock()
		unexpected = append(unexpected, fmt.Errorf("%s: %w", what, err))
		mu.Unlock()
	}
	for round := range 6 {
		_, err := procs[0].CreateNamespace(ctx, ident.ID{"cc"}, nil, catalog.ModeExistOk)
		assert.NilError(t, err)
		var wg sync.WaitGroup
		for w := range 8 {
			n := procs[w%len(procs)]
			wg.Add(1)
			go func() {
				defer wg.Done()
				for _, id := range []ident.ID{{"cc", "m"}, {"m"}} {
					_, _, err := n.CreateTable(ctx, id, oneRow(t, ""))
					report("create", err, nserr.ErrTableAlreadyExists, nserr.ErrNamespaceNotFound, nserr.ErrConcurrentModification)
					_, _, err = n.CreateTable(ctx, id, oneRow(t, catalog.ModeOverwrite))
					report("overwrite", err, nserr.ErrNamespaceNotFound, nserr.ErrConcurrentModification)
					_, err = n.RenameTable(ctx, id, nil, "m2")
					report("rename", err, nserr.ErrTableNotFound, nserr.ErrTableAlreadyExists, nserr.ErrNamespaceNotFound)
					_, err = n.DeclareTable(ctx, id, "", nil)
					report("declare", err, nserr.ErrTableAlreadyExists, nserr.ErrNamespaceNotFound, nserr.ErrConcurrentModification)
					for _, drop := range []ident.ID{id, id.Parent().Child("m2")} {
						_, err = n.DropTable(ctx, drop)
						report("drop", err, nserr.ErrTableNotFound, nserr.ErrNamespaceNotFound)
					}
				}
				if w == 0 && round%2 == 1 {
					_, err := n.DropNamespace(ctx, ident.ID{"cc"}, catalog.ModeSkip, catalog.BehaviorCascade)
					report("cascade drop", err)
				}
			}()
		}
		wg.Wait()
	}
	assert.Assert(t, len(unexpected) == 0, "%v", unexpected)

	// Drop whatever is left, the way a client would, then nothing but the manifest may remain.
	n := New(fs, Options{RootURI: "/root"})
	consistent(t, n, func(string) bool { return true })
	for _, id := range []ident.ID{{"m"}, {"m2"}} {
		if n.TableExists(ctx, id) == nil {
			_, err := n.DropTable(ctx, id)
			assert.NilError(t, err)
		}
	}
	_, err = n.DropNamespace(ctx, ident.ID{"cc"}, catalog.ModeSkip, catalog.BehaviorCascade)
	assert.NilError(t, err)
	objs, err := storage.ListAll(ctx, fs, "")
	assert.NilError(t, err)
	var left []string
	claims := 0
	for _, o := range objs {
		if strings.HasPrefix(o.Key, claimsDir+ManifestTable+"/") {
			claims++ // the claim of the latest __manifest version is kept (claimManifestDirect)
			continue
		}
		if !strings.HasPrefix(o.Key, ManifestTable+"/") {
			left = append(left, o.Key)
		}
	}
	slices.Sort(left)
	assert.Assert(t, len(left) == 0, "bytes no entry references after every drop was acknowledged: %v", left)
	assert.Assert(t, claims <= 2, "claims of __manifest pile up: %d", claims)
}

// TestRacingOverwritesNeverAnswerExists: two creates in mode overwrite of a name that does not
// exist (it was just dropped) both succeed; one of them used to answer 409 code 5.
func TestRacingOverwritesNeverAnswerExists(t *testing.T) {
	ctx := context.Background()
	fs, err := storage.NewFS(t.TempDir())
	assert.NilError(t, err)
	_, err = New(fs, Options{}).CreateNamespace(ctx, ident.ID{"cc"}, nil, "")
	assert.NilError(t, err)
	for round := range 10 {
		for _, mode := range []string{catalog.ModeOverwrite, catalog.ModeExistOk} {
			var wg sync.WaitGroup
			errs := make([]error, 4)
			for i := range errs {
				wg.Add(1)
				go func() {
					defer wg.Done()
					_, _, errs[i] = New(fs, Options{}).CreateTable(ctx, ident.ID{"cc", "m"}, oneRow(t, mode))
				}()
			}
			wg.Wait()
			for i, err := range errs {
				assert.NilError(t, err, "round %d, %s #%d", round, mode, i)
			}
			_, err := New(fs, Options{}).DropTable(ctx, ident.ID{"cc", "m"})
			assert.NilError(t, err)
		}
	}
}

// TestGhostRowIsNoTable: a row backed by neither a dataset nor the declared marker (what a crash
// of the code that committed rows first left) is not a table: describe and exists answer not
// found, and the name can be created again.
func TestGhostRowIsNoTable(t *testing.T) {
	ctx := context.Background()
	n, _ := newTestNamespace(t)
	_, err := n.CreateNamespace(ctx, ident.ID{"ns"}, nil, "")
	assert.NilError(t, err)
	loc := "0000beef_ns$g"
	_, err = n.commit(ctx, func(*snapshot) (*change, error) {
		return &change{inserts: []newRow{{ObjectID: "ns$g", Type: TypeTable, Location: &loc}}}, nil
	})
	assert.NilError(t, err)
	id := ident.ID{"ns", "g"}

	assert.Check(t, nserr.Is(n.TableExists(ctx, id), nserr.ErrTableNotFound))
	tb, err := n.DescribeTable(ctx, id)
	assert.NilError(t, err)
	_, err = n.handleOf(tb).State(ctx, catalog.DescribeOptions{})
	assert.Check(t, nserr.Is(err, nserr.ErrTableNotFound), "%v", err)

	for _, mode := range []string{"", catalog.ModeExistOk} {
		_, ver, err := n.CreateTable(ctx, id, oneRow(t, mode))
		assert.NilError(t, err, "create (%q) over a ghost row", mode)
		assert.Equal(t, ver, uint64(1))
		_, err = n.DropTable(ctx, id)
		assert.NilError(t, err)
		_, err = n.commit(ctx, func(*snapshot) (*change, error) {
			return &change{inserts: []newRow{{ObjectID: "ns$g", Type: TypeTable, Location: &loc}}}, nil
		})
		assert.NilError(t, err)
	}
	_, err = n.DeclareTable(ctx, id, "", nil)
	assert.NilError(t, err, "declare over a ghost row")
	assert.NilError(t, n.TableExists(ctx, id))
}

// TestRefusedIDsWriteNothing: ids no store can hold as a table directory (control characters,
// a part that overflows the directory name with its hash prefix) or that render like another
// are refused as invalid input before anything is written; they used to commit a row whose
// directory could not be created (listed, describe 500, drop 500, re-create 409).
func TestRefusedIDsWriteNothing(t *testing.T) {
	ctx := context.Background()
	n, b := newTestNamespace(t)
	_, err := n.CreateNamespace(ctx, ident.ID{"ns1"}, nil, "")
	assert.NilError(t, err)
	before, err := storage.ListAll(ctx, b, "")
	assert.NilError(t, err)
	for _, name := range []string{"q\nq", "q\rq", "q\tq", "q\x01q", "q\x7fq", strings.Repeat("x", 255),
		strings.Repeat("x", 243), "caf\u200Be", "\uFEFFt", "cafe\u0301"} {
		id := ident.ID{"ns1", name}
		_, _, err := n.CreateTable(ctx, id, oneRow(t, ""))
		assert.Check(t, nserr.Is(err, nserr.ErrInvalidInput), "create %+q: %v", name, err)
		_, err = n.DeclareTable(ctx, id, "", nil)
		assert.Check(t, nserr.Is(err, nserr.ErrInvalidInput), "declare %+q: %v", name, err)
		if len(name) != 243 { // 243 bytes is a valid namespace name; with "ns1$" it is too long
			_, err = n.CreateNamespace(ctx, ident.ID{name}, nil, "")
			assert.Check(t, nserr.Is(err, nserr.ErrInvalidInput), "namespace %+q: %v", name, err)
		}
	}
	after, err := storage.ListAll(ctx, b, "")
	assert.NilError(t, err)
	assert.Equal(t, len(after), len(before), "nothing was written")
	page, err := n.ListTables(ctx, ident.ID{"ns1"}, "", 0)
	assert.NilError(t, err)
	assert.Equal(t, len(page.Names), 0)
	// The longest id that is accepted makes a real table.
	_, _, err = n.CreateTable(ctx, ident.ID{"ns1", strings.Repeat("x", ident.MaxIDBytes-len("ns1$"))}, oneRow(t, ""))
	assert.NilError(t, err)
}

// TestCreateOverDeregisteredDirectory: creating a root table whose <name>.lance directory still
// holds a deregistered table's bytes (or a renamed table's) puts the new table elsewhere. The
// code that picked <name>.lance regardless lost the race for version 1 to the old bytes and, on
// its way out, deleted the whole directory: the deregistered table's data.
func TestCreateOverDeregisteredDirectory(t *testing.T) {
	ctx := context.Background()
	n, b := newTestNamespace(t)
	old, _, err := n.CreateTable(ctx, ident.ID{"t"}, oneRow(t, ""))
	assert.NilError(t, err)
	assert.Equal(t, old.Location, "t.lance")
	_, err = n.DeregisterTable(ctx, ident.ID{"t"})
	assert.NilError(t, err)
	before, err := storage.ListAll(ctx, b, "t.lance/")
	assert.NilError(t, err)

	fresh, ver, err := n.CreateTable(ctx, ident.ID{"t"}, oneRow(t, ""))
	assert.NilError(t, err)
	assert.Equal(t, ver, uint64(1))
	assert.Assert(t, fresh.Location != "t.lance", "the new table must not share the deregistered directory")
	after, err := storage.ListAll(ctx, b, "t.lance/")
	assert.NilError(t, err)
	assert.Equal(t, len(after), len(before), "the deregistered table's bytes are kept")

	// The same for a directory a rename moved away from under its old name.
	_, err = n.RenameTable(ctx, ident.ID{"t"}, nil, "u")
	assert.NilError(t, err)
	_, _, err = n.CreateTable(ctx, ident.ID{"w"}, oneRow(t, ""))
	assert.NilError(t, err)
	_, err = n.RenameTable(ctx, ident.ID{"w"}, nil, "w2")
	assert.NilError(t, err)
	again, _, err := n.CreateTable(ctx, ident.ID{"w"}, oneRow(t, ""))
	assert.NilError(t, err)
	assert.Assert(t, again.Location != "w.lance")
	w2, err := n.DescribeTable(ctx, ident.ID{"w2"})
	assert.NilError(t, err)
	st, err := n.handleOf(w2).State(ctx, catalog.DescribeOptions{})
	assert.NilError(t, err)
	assert.Assert(t, st != nil && st.Version == 1, "the renamed table keeps its data")
}
