package namespace

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"
	"google.golang.org/protobuf/types/known/timestamppb"
	"gotest.tools/v3/assert"

	"github.com/lancecat/lancecat/catalog"
	nserr "github.com/lancecat/lancecat/errors"
	"github.com/lancecat/lancecat/ident"
	"github.com/lancecat/lancecat/internal/testenv"
	"github.com/lancecat/lancecat/lance"
	"github.com/lancecat/lancecat/lance/lancefile"
	"github.com/lancecat/lancecat/lance/pb/tablepb"
	"github.com/lancecat/lancecat/storage"
)

// batchFixture is a managed-versioning root with tables a, b and c in namespace "prod".
type batchFixture struct {
	n      *Namespace
	b      storage.Bucket
	tables map[string]*catalog.Entry
}

func newBatchFixture(t *testing.T) *batchFixture {
	t.Helper()
	n, b := newTestNamespace(t)
	return newBatchFixtureOn(t, n, b)
}

// newBatchFixtureOnMinIO is the fixture on an S3 root (skips without LANCECAT_TEST_S3_*): the
// protocol's conditional writes as MinIO implements them.
func newBatchFixtureOnMinIO(t *testing.T) *batchFixture {
	t.Helper()
	cfg, bucket := testenv.S3Bucket(t)
	uri := "s3://" + bucket + "/root"
	b, err := storage.Open(context.Background(), uri, cfg)
	assert.NilError(t, err)
	return newBatchFixtureOn(t, New(b, Options{RootURI: uri}), b)
}

func newBatchFixtureOn(t *testing.T, n *Namespace, b storage.Bucket) *batchFixture {
	t.Helper()
	ctx := context.Background()
	_, err := n.CreateNamespace(ctx, ident.ID{}, map[string]string{ManagedVersioningProperty: "true"}, catalog.ModeOverwrite)
	assert.NilError(t, err)
	_, err = n.CreateNamespace(ctx, ident.ID{"prod"}, nil, "")
	assert.NilError(t, err)
	f := &batchFixture{n: n, b: b, tables: map[string]*catalog.Entry{}}
	for _, name := range []string{"a", "b", "c"} {
		tbl, err := n.DeclareTable(ctx, ident.ID{"prod", name}, "", nil)
		assert.NilError(t, err)
		f.tables[name] = tbl
	}
	return f
}

// stageManifest writes a manifest of version for table name under a fresh staging name, as a
// client staging a commit does, and answers the entry that publishes it.
func (f *batchFixture) stageManifest(name string, version uint64) (catalog.VersionEntry, error) {
	tbl := f.tables[name]
	fields, err := lancefile.LanceFields(manifestSchema(), 0)
	if err != nil {
		return catalog.VersionEntry{}, err
	}
	mf := &lance.ManifestFile{
		Manifest: &tablepb.Manifest{
			Fields: fields, Version: version, Timestamp: timestamppb.New(time.Now()),
			DataFormat: &tablepb.Manifest_DataStorageFormat{FileFormat: "lance", Version: "2.1"},
		},
		Transaction: &tablepb.Transaction{Uuid: uuid.NewString(), ReadVersion: version - 1},
	}
	data, err := mf.Encode()
	if err != nil {
		return catalog.VersionEntry{}, err
	}
	key := "_versions/" + lance.NamingV2.ManifestName(version) + "-" + uuid.NewString()
	if _, err := f.b.Put(context.Background(), tbl.Location+"/"+key, bytes.NewReader(data), int64(len(data))); err != nil {
		return catalog.VersionEntry{}, err
	}
	return catalog.VersionEntry{Table: tbl.ID, NewTableVersion: catalog.NewTableVersion{
		Version: int64(version), ManifestPath: tbl.URI + "/" + key, NamingScheme: "V2",
	}}, nil
}

func (f *batchFixture) stage(t *testing.T, name string, version uint64) catalog.VersionEntry {
	t.Helper()
	e, err := f.stageManifest(name, version)
	assert.NilError(t, err)
	return e
}

// latest is what a reader of the catalog sees as table name's latest version (0: none).
func (f *batchFixture) latest(ctx context.Context, name string) (uint64, error) {
	v, err := f.n.handleOf(f.tables[name]).DescribeVersion(ctx, "", nil)
	if errors.Is(err, nserr.ErrTableVersionNotFound) {
		return 0, nil
	}
	return v.Version, err
}

func (f *batchFixture) latestOf(t *testing.T, name string) uint64 {
	t.Helper()
	v, err := f.latest(context.Background(), name)
	assert.NilError(t, err)
	return v
}

// TestBatchAllOrNone: a batch publishes every entry or none; each refusal leaves every table as
// it was, and the transaction it made says why.
func TestBatchAllOrNone(t *testing.T) {
	ctx := context.Background()
	f := newBatchFixture(t)
	txn, vs, err := f.n.CommitTableVersions(ctx, catalog.TxnBatchCreateTableVersions, []catalog.VersionEntry{f.stage(t, "a", 1), f.stage(t, "b", 1)})
	assert.NilError(t, err)
	assert.Equal(t, len(vs), 2)
	assert.Equal(t, vs[0].Version, uint64(1))
	assert.DeepEqual(t, vs[1].TransactionID, txn.ID)
	assert.Equal(t, txn.Status, catalog.TxnSucceeded)
	assert.Equal(t, txn.ID.Parent().String(), "prod", "a transaction is named in its first table's namespace")
	assert.Equal(t, f.latestOf(t, "a"), uint64(1))
	assert.Equal(t, f.latestOf(t, "b"), uint64(1))
	got, err := f.n.DescribeTransaction(ctx, txn.ID)
	assert.NilError(t, err)
	assert.Equal(t, got.Status, catalog.TxnSucceeded)
	assert.Equal(t, got.Properties["lancecat.kind"], catalog.TxnBatchCreateTableVersions)
	assert.Equal(t, got.Properties["lancecat.versions"], "prod$a@1,prod$b@1")

	single, err := f.n.handleOf(f.tables["c"]).CreateVersion(ctx, f.stage(t, "c", 1).NewTableVersion)
	assert.NilError(t, err)
	assert.Assert(t, single.TransactionID != nil, "create_table_version makes a transaction too")

	cases := []struct {
		name    string
		entries func() []catalog.VersionEntry
		code    nserr.Code
	}{
		{"one staged manifest missing", func() []catalog.VersionEntry {
			e := f.stage(t, "b", 2)
			e.ManifestPath += "-gone"
			return []catalog.VersionEntry{f.stage(t, "a", 2), e}
		}, nserr.InvalidInput},
		{"one version taken", func() []catalog.VersionEntry { return []catalog.VersionEntry{f.stage(t, "a", 2), f.stage(t, "c", 1)} }, nserr.ConcurrentModification},
		{"one version not the next", func() []catalog.VersionEntry { return []catalog.VersionEntry{f.stage(t, "a", 2), f.stage(t, "b", 3)} }, nserr.InvalidInput},
		{"the same version twice", func() []catalog.VersionEntry { return []catalog.VersionEntry{f.stage(t, "a", 2), f.stage(t, "a", 2)} }, nserr.InvalidInput},
		{"a missing table", func() []catalog.VersionEntry {
			return []catalog.VersionEntry{f.stage(t, "a", 2), {Table: ident.ID{"prod", "nope"}, NewTableVersion: catalog.NewTableVersion{Version: 1, ManifestPath: "x"}}}
		}, nserr.TableNotFound},
		{"no entries", func() []catalog.VersionEntry { return nil }, nserr.InvalidInput},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, _, err := f.n.CommitTableVersions(ctx, catalog.TxnBatchCreateTableVersions, tc.entries())
			assert.Equal(t, nserr.CodeOf(err), tc.code, "%v", err)
			assert.Equal(t, f.latestOf(t, "a"), uint64(1), "nothing of the refused batch is visible")
			assert.Equal(t, f.latestOf(t, "b"), uint64(1))
		})
	}

	// Several versions of one table in one batch: consecutive, published in order.
	_, vs, err = f.n.CommitTableVersions(ctx, catalog.TxnBatchCommitTables, []catalog.VersionEntry{f.stage(t, "a", 3), f.stage(t, "a", 2), f.stage(t, "b", 2)})
	assert.NilError(t, err)
	assert.Equal(t, vs[0].Version, uint64(3))
	assert.Equal(t, f.latestOf(t, "a"), uint64(3))
}

// batchCrashSteps are the steps a batch of two tables' versions can stop at, and whether the
// batch is visible to readers from there (it is from its commit point on).
var batchCrashSteps = []struct {
	step    string
	visible bool
}{
	{"started", false},
	{"claimed 0", false},
	{"claimed 1", false},
	{"committed", true},
	{"published 0", true},
}

// errCrash is what a batch stopped by crashAt fails with.
var errCrash = errors.New("injected crash")

// crashAt runs commit with every batch stopped at step, as if its process died there, and checks
// that it failed so.
func crashAt(t *testing.T, step string, commit func() error) {
	t.Helper()
	batchFault = func(s string) error {
		if s == step {
			return errCrash
		}
		return nil
	}
	defer func() { batchFault = nil }()
	assert.ErrorIs(t, commit(), errCrash)
}

// TestBatchCrash: a commit stopped at each step (as if its process died there) leaves either
// nothing visible or, from the commit point on, the whole batch visible to every reader; an
// abandoned batch's versions are taken by the next writer once it is canceled.
func TestBatchCrash(t *testing.T) {
	ctx := context.Background()
	for _, tc := range batchCrashSteps {
		t.Run(tc.step, func(t *testing.T) {
			f := newBatchFixture(t)
			crashAt(t, tc.step, func() error {
				_, _, err := f.n.CommitTableVersions(ctx, catalog.TxnBatchCreateTableVersions, []catalog.VersionEntry{f.stage(t, "a", 1), f.stage(t, "b", 1)})
				return err
			})

			want := uint64(0)
			if tc.visible {
				want = 1
			}
			// b is read first: it is the entry the crash left unpublished.
			assert.Equal(t, f.latestOf(t, "b"), want)
			assert.Equal(t, f.latestOf(t, "a"), want)
			h, err := f.n.LoadTable(ctx, f.tables["b"].ID)
			assert.NilError(t, err)
			st, err := h.State(ctx, catalog.DescribeOptions{})
			if tc.visible {
				assert.NilError(t, err)
				assert.Equal(t, st.Version, uint64(1), "the data plane's latest read settles too")
			}

			// The next batch of the same versions: refused while the dead one holds them, taken
			// once an operator cancels it (or it is abandoned).
			again := func() error {
				_, _, err := f.n.CommitTableVersions(ctx, catalog.TxnBatchCreateTableVersions, []catalog.VersionEntry{f.stage(t, "a", want+1), f.stage(t, "b", want+1)})
				return err
			}
			if tc.visible || tc.step == "started" {
				assert.NilError(t, again())
				return
			}
			err = again()
			assert.Equal(t, nserr.CodeOf(err), nserr.ConcurrentModification, "%v", err)
			dead := f.runningTransaction(t)
			canceled := catalog.TxnCanceled
			txn, err := f.n.AlterTransaction(ctx, dead, []catalog.TransactionAction{{SetStatus: &canceled}})
			assert.NilError(t, err)
			assert.Equal(t, txn.Status, catalog.TxnCanceled)
			assert.NilError(t, again())
			assert.Equal(t, f.latestOf(t, "a"), uint64(1))
			assert.Equal(t, f.latestOf(t, "b"), uint64(1))
		})
	}
}

// runningTransaction finds the one Running transaction of the fixture's root.
func (f *batchFixture) runningTransaction(t *testing.T) ident.ID {
	t.Helper()
	page, err := f.b.List(context.Background(), transactionsDir, storage.ListOptions{})
	assert.NilError(t, err)
	for _, o := range page.Objects {
		name := o.Key[len(transactionsDir) : len(o.Key)-len(".json")]
		rec, _, err := f.n.readRecord(context.Background(), name)
		assert.NilError(t, err)
		if rec.Status == catalog.TxnRunning {
			return rec.transaction().ID
		}
	}
	t.Fatal("no running transaction")
	return nil
}

// TestBatchAbandoned: a Running transaction that made no progress for AbandonAfter is failed by
// the next writer of its versions, which then takes them.
func TestBatchAbandoned(t *testing.T) {
	ctx := context.Background()
	f := newBatchFixture(t)
	crashAt(t, "claimed 1", func() error {
		_, _, err := f.n.CommitTableVersions(ctx, catalog.TxnBatchCreateTableVersions, []catalog.VersionEntry{f.stage(t, "a", 1), f.stage(t, "b", 1)})
		return err
	})
	dead := f.runningTransaction(t)
	defer func(d time.Duration) { AbandonAfter = d }(AbandonAfter)
	AbandonAfter = 0
	_, _, err := f.n.CommitTableVersions(ctx, catalog.TxnBatchCreateTableVersions, []catalog.VersionEntry{f.stage(t, "b", 1), f.stage(t, "a", 1)})
	assert.NilError(t, err)
	txn, err := f.n.DescribeTransaction(ctx, dead)
	assert.NilError(t, err)
	assert.Equal(t, txn.Status, catalog.TxnFailed)
	assert.Assert(t, txn.Properties["lancecat.reason"] != "")
}

// TestBatchConcurrent: 8 writers commit batches over overlapping tables ({a,b} and {a,b,c})
// while a reader reads a's and b's latest versions in turn. a and b only ever change together,
// so whichever the reader reads second is never behind the first: a partial batch would show
// as the second behind. Every writer eventually commits its batches (conflicts are retried).
func TestBatchConcurrent(t *testing.T) {
	t.Run("local", func(t *testing.T) { testBatchConcurrent(t, newBatchFixture(t), 2) })
	// One batch per writer: every round trip is a request to MinIO.
	t.Run("minio", func(t *testing.T) { testBatchConcurrent(t, newBatchFixtureOnMinIO(t), 1) })
}

func testBatchConcurrent(t *testing.T, f *batchFixture, each int) {
	const writers = 8
	names := func(w int) []string {
		if w%2 == 1 {
			return []string{"b", "c", "a"}
		}
		return []string{"a", "b"}
	}
	committed := f.raceBatches(t, writers, each, names, nil, func(ctx context.Context, i int) error {
		first, second := "a", "b"
		if i%2 == 1 {
			first, second = "b", "a"
		}
		v1, err := f.latest(ctx, first)
		if err != nil {
			return err
		}
		v2, err := f.latest(ctx, second)
		if err != nil {
			return err
		}
		if v2 < v1 {
			return fmt.Errorf("partial batch visible: %s at %d, then %s at %d", first, v1, second, v2)
		}
		return nil
	})
	assert.Equal(t, committed, int64(writers*each))
	assert.Equal(t, f.latestOf(t, "a"), uint64(writers*each))
	assert.Equal(t, f.latestOf(t, "b"), uint64(writers*each))
	assert.Equal(t, f.latestOf(t, "c"), uint64(writers/2*each))
}

// raceBatches races writers goroutines, writer w committing each batches of the next version of
// every table names(w) gives it (and the entries extra, if any, adds to each), against a reader
// calling check(ctx, i) for i = 0, 1, ... until the writers are done. A conflict is retried, as
// a client does: after a little jitter. Every error of a writer or of check fails t; it returns
// how many batches were committed.
func (f *batchFixture) raceBatches(t *testing.T, writers, each int, names func(w int) []string,
	extra func() []catalog.VersionEntry, check func(ctx context.Context, i int) error) int64 {
	t.Helper()
	ctx := context.Background()
	var stop atomic.Bool
	var committed atomic.Int64
	readerErr := make(chan error, 1)
	go func() {
		defer close(readerErr)
		for i := 0; !stop.Load(); i++ {
			if err := check(ctx, i); err != nil {
				readerErr <- err
				return
			}
			time.Sleep(200 * time.Microsecond) // leave the writers the CPU (2 cores, -race)
		}
	}()
	var wg sync.WaitGroup
	errs := make(chan error, writers)
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for done := 0; done < each; {
				var entries []catalog.VersionEntry
				for _, name := range names(w) {
					l, err := f.latest(ctx, name)
					if err != nil {
						errs <- err
						return
					}
					e, err := f.stageManifest(name, l+1)
					if err != nil {
						errs <- err
						return
					}
					entries = append(entries, e)
				}
				if extra != nil {
					entries = append(entries, extra()...)
				}
				_, _, err := f.n.CommitTableVersions(ctx, catalog.TxnBatchCommitTables, entries)
				switch {
				case err == nil:
					done++
					committed.Add(1)
				case nserr.CodeOf(err) == nserr.ConcurrentModification:
					// A client backs off a little before it retries (jitter spreads the losers).
					time.Sleep(time.Duration(rand.IntN(4)) * time.Millisecond)
				default:
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	stop.Store(true)
	close(errs)
	for err := range errs {
		assert.NilError(t, err)
	}
	assert.NilError(t, <-readerErr)
	return committed.Load()
}

// TestAlterTransaction: alter applies every action or none; server properties and decided
// statuses cannot change.
func TestAlterTransaction(t *testing.T) {
	ctx := context.Background()
	f := newBatchFixture(t)
	txn, _, err := f.n.CommitTableVersions(ctx, catalog.TxnBatchCreateTableVersions, []catalog.VersionEntry{f.stage(t, "a", 1)})
	assert.NilError(t, err)
	s := func(v string) *string { return &v }
	got, err := f.n.AlterTransaction(ctx, txn.ID, []catalog.TransactionAction{
		{Set: &catalog.PropertySet{Key: "owner", Value: "alice"}},
		{Set: &catalog.PropertySet{Key: "ticket", Value: "1"}},
		{Unset: &catalog.PropertyUnset{Key: "ticket"}},
		{SetStatus: s("succeeded")},
	})
	assert.NilError(t, err)
	assert.Equal(t, got.Properties["owner"], "alice")
	_, has := got.Properties["ticket"]
	assert.Assert(t, !has)

	refused := [][]catalog.TransactionAction{
		{{Set: &catalog.PropertySet{Key: "owner", Value: "bob"}}, {SetStatus: s("Canceled")}},
		{{Set: &catalog.PropertySet{Key: "owner", Value: "bob"}}, {Set: &catalog.PropertySet{Key: "lancecat.kind", Value: "x"}}},
		{{Set: &catalog.PropertySet{Key: "owner", Value: "bob"}}, {Set: &catalog.PropertySet{Key: "owner", Value: "carol", Mode: "fail"}}},
		{{Set: &catalog.PropertySet{Key: "owner", Value: "bob"}}, {Unset: &catalog.PropertyUnset{Key: "nope", Mode: "FAIL"}}},
		{{Set: &catalog.PropertySet{Key: "owner", Value: "bob"}}, {SetStatus: s("sideways")}},
		{{Set: &catalog.PropertySet{Key: "owner", Value: "bob"}}, {}},
		{},
	}
	for i, actions := range refused {
		_, err := f.n.AlterTransaction(ctx, txn.ID, actions)
		assert.Equal(t, nserr.CodeOf(err), nserr.InvalidInput, "case %d: %v", i, err)
		now, err := f.n.DescribeTransaction(ctx, txn.ID)
		assert.NilError(t, err)
		assert.Equal(t, now.Properties["owner"], "alice", "case %d: no action applied", i)
		assert.Equal(t, now.Status, catalog.TxnSucceeded)
	}

	for _, id := range []ident.ID{
		{"prod", "txn-" + uuid.NewString()},
		{"other", txn.ID.Name()},
		{"prod", "not-a-transaction"},
	} {
		_, err := f.n.DescribeTransaction(ctx, id)
		assert.Equal(t, nserr.CodeOf(err), nserr.TransactionNotFound, "%v", id)
		_, err = f.n.AlterTransaction(ctx, id, []catalog.TransactionAction{{Set: &catalog.PropertySet{Key: "k", Value: "v"}}})
		assert.Equal(t, nserr.CodeOf(err), nserr.TransactionNotFound, "%v", id)
	}
}

// TestBatchTableMadeAgain: a table dropped and made again at the same location keeps no trace of
// the old table's committed claims: its versions are read and created anew (what a Lance client
// in managed mode does with a dropped and re-created table).
func TestBatchTableMadeAgain(t *testing.T) {
	ctx := context.Background()
	f := newBatchFixture(t)
	_, _, err := f.n.CommitTableVersions(ctx, catalog.TxnBatchCreateTableVersions, []catalog.VersionEntry{f.stage(t, "a", 1), f.stage(t, "b", 1)})
	assert.NilError(t, err)
	// The table's files go (as a drop's purge does); its location is used again.
	page, err := f.b.List(ctx, f.tables["a"].Location+"/", storage.ListOptions{})
	assert.NilError(t, err)
	for _, o := range page.Objects {
		assert.NilError(t, f.b.Delete(ctx, o.Key))
	}
	assert.Equal(t, f.latestOf(t, "a"), uint64(0), "a stale claim publishes nothing")
	_, err = f.n.handleOf(f.tables["a"]).CreateVersion(ctx, f.stage(t, "a", 1).NewTableVersion)
	assert.NilError(t, err, "a stale claim is taken over")
	assert.Equal(t, f.latestOf(t, "a"), uint64(1))
}
