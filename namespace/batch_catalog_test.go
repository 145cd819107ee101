package namespace

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"gotest.tools/v3/assert"

	"github.com/lancecat/lancecat/catalog"
	nserr "github.com/lancecat/lancecat/errors"
	"github.com/lancecat/lancecat/ident"
	"github.com/lancecat/lancecat/storage"
)

func batchDeclare(id ...string) catalog.VersionEntry {
	return catalog.VersionEntry{Table: ident.ID(id), Declare: &catalog.TableDeclaration{}}
}

func batchDeclareAt(loc string, id ...string) catalog.VersionEntry {
	return catalog.VersionEntry{Table: ident.ID(id), Declare: &catalog.TableDeclaration{Location: loc, Properties: map[string]string{"k": "v"}}}
}

func batchDeregister(id ...string) catalog.VersionEntry {
	return catalog.VersionEntry{Table: ident.ID(id), Deregister: true}
}

// tablesOf is what list_tables answers for namespace prod.
func (f *batchFixture) tablesOf(t *testing.T) []string {
	t.Helper()
	p, err := f.n.ListTables(context.Background(), ident.ID{"prod"}, "", 0)
	assert.NilError(t, err)
	return p.Names
}

// staged is what batches left staged under the root (nothing once each finished or failed).
func (f *batchFixture) staged(t *testing.T) []string {
	t.Helper()
	objs, err := storage.ListAll(context.Background(), f.b, stagedDir)
	assert.NilError(t, err)
	var out []string
	for _, o := range objs {
		out = append(out, o.Key)
	}
	return out
}

// TestBatchCatalog: declare_table and deregister_table commit with a batch's versions, all or
// none. Each refusal (the plain doors' own checks, and the batch's: one change per name, no two
// declared locations overlapping) leaves every table and the listing as they were, and nothing
// staged behind.
func TestBatchCatalog(t *testing.T) {
	ctx := context.Background()
	f := newBatchFixture(t)
	aLoc := f.tables["a"].Location
	cases := []struct {
		name    string
		entries []catalog.VersionEntry
		code    nserr.Code
	}{
		{"declared name exists", []catalog.VersionEntry{batchDeclare("prod", "ok"), batchDeclare("prod", "b")}, nserr.TableAlreadyExists},
		{"reserved location", []catalog.VersionEntry{batchDeclare("prod", "ok"), batchDeclareAt("_lancecat/x", "prod", "x")}, nserr.InvalidInput},
		{"manifest location", []catalog.VersionEntry{batchDeclare("prod", "ok"), batchDeclareAt("__manifest/x", "prod", "x")}, nserr.InvalidInput},
		{"location leaves the root", []catalog.VersionEntry{batchDeclare("prod", "ok"), batchDeclareAt("../escape", "prod", "x")}, nserr.InvalidInput},
		{"location inside another table", []catalog.VersionEntry{batchDeclare("prod", "ok"), batchDeclareAt(aLoc+"/inner", "prod", "x")}, nserr.TableAlreadyExists},
		{"location around another table", []catalog.VersionEntry{batchDeclare("prod", "ok"), batchDeclareAt(strings.Split(aLoc, "/")[0]+"/..", "prod", "x")}, nserr.InvalidInput},
		{"missing namespace", []catalog.VersionEntry{batchDeclare("prod", "ok"), batchDeclare("nope", "x")}, nserr.NamespaceNotFound},
		{"id with the delimiter", []catalog.VersionEntry{batchDeclare("prod", "ok"), batchDeclare("prod", "a$b")}, nserr.InvalidInput},
		{"deregister missing", []catalog.VersionEntry{batchDeclare("prod", "ok"), batchDeregister("prod", "missing")}, nserr.TableNotFound},
		{"name twice", []catalog.VersionEntry{batchDeclare("prod", "ok"), batchDeclare("prod", "ok")}, nserr.InvalidInput},
		{"declare and deregister one name", []catalog.VersionEntry{batchDeclare("prod", "ok"), batchDeregister("prod", "ok")}, nserr.InvalidInput},
		{"overlapping declared locations", []catalog.VersionEntry{batchDeclareAt("shared/one", "prod", "x"), batchDeclareAt("shared/one/two", "prod", "y")}, nserr.InvalidInput},
		{"not in batch_create_table_versions", nil, nserr.InvalidInput},
	}
	before := f.tablesOf(t)
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			kind := catalog.TxnBatchCommitTables
			entries := append([]catalog.VersionEntry{f.stage(t, "a", 1)}, tc.entries...)
			if tc.entries == nil {
				kind, entries = catalog.TxnBatchCreateTableVersions, []catalog.VersionEntry{f.stage(t, "a", 1), batchDeclare("prod", "ok")}
			}
			_, _, err := f.n.CommitTableVersions(ctx, kind, entries)
			assert.Equal(t, nserr.CodeOf(err), tc.code, "%v", err)
			assert.DeepEqual(t, f.tablesOf(t), before)
			assert.Equal(t, f.latestOf(t, "a"), uint64(0))
			assert.DeepEqual(t, f.staged(t), []string(nil))
			// The valid declare's location was taken back: the name can be declared plainly.
			_, err = f.n.DescribeTable(ctx, ident.ID{"prod", "ok"})
			assert.Equal(t, nserr.CodeOf(err), nserr.TableNotFound)
		})
	}

	// The mixed batch: a version, two declares (one at a given location), a deregister.
	cDir := f.tables["c"].Location
	txn, vs, err := f.n.CommitTableVersions(ctx, catalog.TxnBatchCommitTables, []catalog.VersionEntry{
		f.stage(t, "a", 1), batchDeclare("prod", "x"), batchDeclareAt("custom/y", "prod", "y"), batchDeregister("prod", "c"),
	})
	assert.NilError(t, err)
	assert.Equal(t, vs[0].Version, uint64(1))
	assert.Equal(t, vs[1].Table.URI, f.n.URI(vs[1].Table.Location))
	assert.Assert(t, vs[1].Table.ManagedVersioning)
	assert.Equal(t, vs[2].Table.Location, "custom/y")
	assert.DeepEqual(t, vs[2].Table.Properties, map[string]string{"k": "v"})
	assert.Equal(t, vs[3].Table.Location, cDir)
	assert.DeepEqual(t, f.tablesOf(t), []string{"a", "b", "x", "y"})
	assert.Equal(t, f.latestOf(t, "a"), uint64(1))
	y, err := f.n.DescribeTable(ctx, ident.ID{"prod", "y"})
	assert.NilError(t, err)
	assert.DeepEqual(t, y.Properties, map[string]string{"k": "v"})
	_, err = f.b.Stat(ctx, "custom/y/"+ReservedMarker)
	assert.NilError(t, err, "a declared table is reserved as the plain declare reserves it")
	_, err = f.b.Stat(ctx, cDir+"/"+ReservedMarker)
	assert.NilError(t, err, "a deregistered table keeps its data")
	got, err := f.n.DescribeTransaction(ctx, txn.ID)
	assert.NilError(t, err)
	assert.Equal(t, got.Properties["lancecat.declared_tables"], "prod$x,prod$y")
	assert.Equal(t, got.Properties["lancecat.deregistered_tables"], "prod$c")
	assert.DeepEqual(t, f.staged(t), []string(nil))
	// Claims of __manifest do not pile up: the latest version's is kept, older ones go.
	claims, err := storage.ListAll(ctx, f.b, claimsDir+ManifestTable+"/")
	assert.NilError(t, err)
	assert.Assert(t, len(claims) <= 1, "%v", claims)

	// A deregister of a table another entry versions: the version is published into the
	// directory the catalog lets go of (the data stays, as a deregister keeps it).
	b := f.tables["b"]
	_, _, err = f.n.CommitTableVersions(ctx, catalog.TxnBatchCommitTables, []catalog.VersionEntry{batchDeregister("prod", "b"), f.stage(t, "b", 1)})
	assert.NilError(t, err)
	_, err = f.n.DescribeTable(ctx, b.ID)
	assert.Equal(t, nserr.CodeOf(err), nserr.TableNotFound)
	v, err := latestNumber(ctx, f.n.Dataset(b))
	assert.NilError(t, err)
	assert.Equal(t, v, uint64(1))
}

// TestBatchCatalogCrash: a batch with declare and deregister entries that dies at each step is
// invisible before its commit point and whole after it: the next settling read (or the next
// writer of __manifest) finishes it; an abandoned one gives way to the next writer.
func TestBatchCatalogCrash(t *testing.T) {
	ctx := context.Background()
	cases := []struct {
		step    string
		visible bool
		// settle is how the crash is found: a table read, or a plain writer of __manifest.
		byWriter bool
	}{
		{step: "started"},
		{step: "claimed 0"},
		{step: "claimed 1"},
		{step: "committed", visible: true},
		{step: "committed", visible: true, byWriter: true},
		{step: "published catalog", visible: true},
	}
	for _, tc := range cases {
		t.Run(fmt.Sprintf("%s/writer=%v", tc.step, tc.byWriter), func(t *testing.T) {
			f := newBatchFixture(t)
			crashAt(t, tc.step, func() error {
				_, _, err := f.n.CommitTableVersions(ctx, catalog.TxnBatchCommitTables, []catalog.VersionEntry{f.stage(t, "a", 1), batchDeclare("prod", "x"), batchDeregister("prod", "c")})
				return err
			})

			if tc.byWriter {
				// A plain declare is a writer of __manifest: it publishes the committed batch's
				// version first, then its own on top.
				_, err := f.n.DeclareTable(ctx, ident.ID{"prod", "z"}, "", nil)
				assert.NilError(t, err)
				assert.DeepEqual(t, f.tablesOf(t), []string{"a", "b", "x", "z"})
				assert.Equal(t, f.latestOf(t, "a"), uint64(1))
				return
			}
			if !tc.visible {
				assert.Equal(t, f.latestOf(t, "a"), uint64(0))
				assert.DeepEqual(t, f.tablesOf(t), []string{"a", "b", "c"})
				// A writer of __manifest waits for a running batch; once it is abandoned (its
				// process died) the writer fails it and goes on.
				defer func(d time.Duration) { AbandonAfter = d }(AbandonAfter)
				AbandonAfter = 0
				_, err := f.n.DeclareTable(ctx, ident.ID{"prod", "x"}, "", nil)
				assert.NilError(t, err)
				assert.DeepEqual(t, f.tablesOf(t), []string{"a", "b", "c", "x"})
				_, _, err = f.n.CommitTableVersions(ctx, catalog.TxnBatchCommitTables, []catalog.VersionEntry{f.stage(t, "a", 1), batchDeclare("prod", "w")})
				assert.NilError(t, err)
				assert.Equal(t, f.latestOf(t, "a"), uint64(1))
				return
			}
			// The table read settles the batch, catalog rows first: the listing after it is whole.
			assert.Equal(t, f.latestOf(t, "a"), uint64(1))
			assert.DeepEqual(t, f.tablesOf(t), []string{"a", "b", "x"})
			assert.DeepEqual(t, f.staged(t), []string(nil))
		})
	}
}

// TestBatchCatalogConcurrent: 8 writers commit batches that each version a and declare the table
// named after that version, while plain declares and drops churn other names and a reader
// races them: whichever of the two it reads first, the second never shows the batch missing
// (a's version v read, then "v<v>" not listed; or "v<k>" listed, then a behind k).
func TestBatchCatalogConcurrent(t *testing.T) {
	ctx := context.Background()
	f := newBatchFixture(t)
	const writers, each = 8, 2
	var stop atomic.Bool
	readerErr := make(chan error, 1)
	go func() {
		defer close(readerErr)
		for i := 0; !stop.Load(); i++ {
			var listed []string
			var v uint64
			var err error
			if i%2 == 0 {
				if v, err = f.latest(ctx, "a"); err == nil {
					var p catalog.Page
					p, err = f.n.ListTables(ctx, ident.ID{"prod"}, "", 0)
					listed = p.Names
					if err == nil && v > 0 && !slices.Contains(listed, fmt.Sprintf("v%d", v)) {
						err = fmt.Errorf("partial batch visible: a at %d, v%d not listed in %v", v, v, listed)
					}
				}
			} else {
				var p catalog.Page
				if p, err = f.n.ListTables(ctx, ident.ID{"prod"}, "", 0); err == nil {
					if v, err = f.latest(ctx, "a"); err == nil {
						for _, name := range p.Names {
							var k uint64
							if _, serr := fmt.Sscanf(name, "v%d", &k); serr == nil && k > v {
								err = fmt.Errorf("partial batch visible: %s listed, then a at %d", name, v)
							}
						}
					}
				}
			}
			if err != nil {
				readerErr <- err
				return
			}
			time.Sleep(200 * time.Microsecond)
		}
	}()
	var wg sync.WaitGroup
	errs := make(chan error, writers+2)
	for range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for done := 0; done < each; {
				l, err := f.latest(ctx, "a")
				if err != nil {
					errs <- err
					return
				}
				e, err := f.stageManifest("a", l+1)
				if err != nil {
					errs <- err
					return
				}
				_, _, err = f.n.CommitTableVersions(ctx, catalog.TxnBatchCommitTables, []catalog.VersionEntry{e, batchDeclare("prod", fmt.Sprintf("v%d", l+1))})
				switch {
				case err == nil:
					done++
				case nserr.CodeOf(err) == nserr.ConcurrentModification, nserr.CodeOf(err) == nserr.TableAlreadyExists:
					time.Sleep(time.Duration(rand.IntN(4)) * time.Millisecond)
				default:
					errs <- err
					return
				}
			}
		}()
	}
	var churn sync.WaitGroup
	for w := range 2 {
		churn.Add(1)
		go func() {
			defer churn.Done()
			for i := 0; !stop.Load() && i < 200; i++ {
				id := ident.ID{"prod", fmt.Sprintf("plain%d", w)}
				if _, err := f.n.DeclareTable(ctx, id, "", nil); err != nil {
					errs <- fmt.Errorf("plain declare: %w", err)
					return
				}
				if _, err := f.n.DropTable(ctx, id); err != nil {
					errs <- fmt.Errorf("plain drop: %w", err)
					return
				}
			}
		}()
	}
	wg.Wait()
	stop.Store(true)
	churn.Wait()
	close(errs)
	for err := range errs {
		assert.NilError(t, err)
	}
	assert.NilError(t, <-readerErr)
	assert.Equal(t, f.latestOf(t, "a"), uint64(writers*each))
	for v := 1; v <= writers*each; v++ {
		assert.Assert(t, slices.Contains(f.tablesOf(t), fmt.Sprintf("v%d", v)))
	}
}

// TestBatchCatalogOneWinner: 8 racers declare one name, half in batches (each with a table of its
// own beside it), half with the plain door: exactly one wins, and a losing batch leaves its
// other table undeclared.
func TestBatchCatalogOneWinner(t *testing.T) {
	ctx := context.Background()
	f := newBatchFixture(t)
	for round := range 3 {
		name := fmt.Sprintf("race%d", round)
		var wins atomic.Int64
		var wg sync.WaitGroup
		won := make([]bool, 8)
		errs := make(chan error, 8)
		for w := range 8 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				var err error
				if w%2 == 0 {
					_, _, err = f.n.CommitTableVersions(ctx, catalog.TxnBatchCommitTables, []catalog.VersionEntry{batchDeclare("prod", name), batchDeclare("prod", fmt.Sprintf("%s-own%d", name, w))})
				} else {
					_, err = f.n.DeclareTable(ctx, ident.ID{"prod", name}, "", nil)
				}
				switch {
				case err == nil:
					wins.Add(1)
					won[w] = true
				case nserr.CodeOf(err) == nserr.TableAlreadyExists, nserr.CodeOf(err) == nserr.ConcurrentModification:
				default:
					errs <- err
				}
			}()
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			assert.NilError(t, err)
		}
		assert.Equal(t, wins.Load(), int64(1))
		listed := f.tablesOf(t)
		assert.Assert(t, slices.Contains(listed, name))
		for w := 0; w < 8; w += 2 {
			assert.Equal(t, slices.Contains(listed, fmt.Sprintf("%s-own%d", name, w)), won[w], "batch %d", w)
		}
	}
}

// BenchmarkDeclareDrop is one plain declare and one drop of a table on a local root: two
// __manifest writes, each of which now claims the version it publishes (one put-if-absent and
// one delete more per write).
func BenchmarkDeclareDrop(b *testing.B) {
	ctx := context.Background()
	fs, err := storage.NewFS(b.TempDir())
	assert.NilError(b, err)
	n := New(fs, Options{RootURI: "/root"})
	_, err = n.CreateNamespace(ctx, ident.ID{"prod"}, nil, "")
	assert.NilError(b, err)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		id := ident.ID{"prod", fmt.Sprintf("t%d", i)}
		if _, err := n.DeclareTable(ctx, id, "", nil); err != nil {
			b.Fatal(err)
		}
		if _, err := n.DropTable(ctx, id); err != nil {
			b.Fatal(err)
		}
	}
}
