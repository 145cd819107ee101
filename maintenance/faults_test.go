package maintenance

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"gotest.tools/v3/assert"

	"github.com/lancecat/lancecat/ident"
	"github.com/lancecat/lancecat/namespace"

	"github.com/lancecat/lancecat/lance"
	"github.com/lancecat/lancecat/storage"
)

// faultStore is a FAKE FOR FAULT INJECTION: a storage.Bucket over a real one that, at the N-th
// mutating call (put, conditional put, delete; counted across all of them), either kills the
// process (SIGKILL: what a replica losing its machine looks like) or answers an injected error
// without doing the call. Everything else passes through to the real store.
type faultStore struct {
	storage.Bucket
	at   int64 // 0: never (count only)
	kill bool
	n    atomic.Int64
}

var errInjected = errors.New("injected storage fault")

func (f *faultStore) hit() error {
	if f.n.Add(1) != f.at {
		return nil
	}
	if f.kill {
		p, _ := os.FindProcess(os.Getpid())
		_ = p.Kill()
		select {}
	}
	return errInjected
}

func (f *faultStore) Put(ctx context.Context, key string, r io.Reader, size int64) (storage.ObjectInfo, error) {
	if err := f.hit(); err != nil {
		return storage.ObjectInfo{}, err
	}
	return f.Bucket.Put(ctx, key, r, size)
}

func (f *faultStore) PutIfAbsent(ctx context.Context, key string, r io.Reader, size int64) (storage.ObjectInfo, error) {
	if err := f.hit(); err != nil {
		return storage.ObjectInfo{}, err
	}
	return f.Bucket.PutIfAbsent(ctx, key, r, size)
}

func (f *faultStore) PutIfMatch(ctx context.Context, key string, r io.Reader, size int64, etag string) (storage.ObjectInfo, error) {
	if err := f.hit(); err != nil {
		return storage.ObjectInfo{}, err
	}
	return f.Bucket.PutIfMatch(ctx, key, r, size, etag)
}

func (f *faultStore) Delete(ctx context.Context, key string) error {
	if err := f.hit(); err != nil {
		return err
	}
	return f.Bucket.Delete(ctx, key)
}

// The crash child: when LANCECAT_CRASH_DIR is set, this test binary (re-executed by
// TestKilledAtEveryStep) runs one compact+cleanup pass over the table there through a store
// that SIGKILLs the process at its LANCECAT_CRASH_AT-th write or delete.
func TestMain(m *testing.M) {
	if dir := os.Getenv("LANCECAT_REPAIR_DIR"); dir != "" {
		at, _ := strconv.ParseInt(os.Getenv("LANCECAT_CRASH_AT"), 10, 64)
		os.Exit(repairChild(dir, os.Getenv("LANCECAT_REPAIR_REPORT"), at))
	}
	if dir := os.Getenv("LANCECAT_CRASH_DIR"); dir != "" {
		at, _ := strconv.ParseInt(os.Getenv("LANCECAT_CRASH_AT"), 10, 64)
		os.Exit(crashChild(dir, at))
	}
	os.Exit(m.Run())
}

func crashChild(dir string, at int64) int {
	fs, err := storage.NewFS(dir)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 3
	}
	ds := lance.NewDataset(&faultStore{Bucket: fs, at: at, kill: true})
	zero := time.Duration(0)
	if _, err := Run(context.Background(), ds, RunOptions{OlderThan: &zero}); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 4
	}
	return 0
}

// faultTable is a table of 3 small fragments, so both compaction (a rewrite
// committed) and cleanup (old versions and their files removed) have work.
func faultTable(t *testing.T) (string, *lance.Dataset, map[int64][2]uint64) {
	t.Helper()
	dir := t.TempDir()
	ds := openDir(t, dir)
	ctx := context.Background()
	for i := range 3 {
		mode := lance.WriteAppend
		if i == 0 {
			mode = lance.WriteCreate
		}
		_, err := ds.Write(ctx, idStream(t, int64(i*10), 10), lance.WriteOptions{Mode: mode})
		assert.NilError(t, err)
	}
	return dir, ds, rowsByID(t, ds)
}

// rowsByID is liveRows without the row address (compaction moves rows; their values stay).
func rowsByID(t *testing.T, ds *lance.Dataset) map[int64][2]uint64 {
	t.Helper()
	out := map[int64][2]uint64{}
	for id, v := range liveRows(t, ds) {
		out[id] = [2]uint64{v[0], 0}
	}
	return out
}

// passOps counts the writes and deletes of one unfaulted pass over a fresh faultTable.
func passOps(t *testing.T) int64 {
	t.Helper()
	dir, _, _ := faultTable(t)
	fs, err := storage.NewFS(dir)
	assert.NilError(t, err)
	counter := &faultStore{Bucket: fs}
	zero := time.Duration(0)
	_, err = Run(context.Background(), lance.NewDataset(counter), RunOptions{OlderThan: &zero})
	assert.NilError(t, err)
	return counter.n.Load()
}

// finish is the next sweep's pass: it must complete the job whatever the crash left.
func finish(t *testing.T, ds *lance.Dataset, want map[int64][2]uint64) {
	t.Helper()
	zero := time.Duration(0)
	rep, err := Run(context.Background(), ds, RunOptions{OlderThan: &zero})
	assert.NilError(t, err, "%+v", rep)
	assert.DeepEqual(t, rowsByID(t, ds), want)
	v := head(t, ds)
	assert.Equal(t, len(v.Manifest().GetFragments()), 1, "compacted")
	vs, err := ds.ListVersions(context.Background(), lance.ListVersionsOptions{})
	assert.NilError(t, err)
	assert.Equal(t, len(vs), 1, "cleaned: only the latest version is left")
}

// TestKilledAtEveryStep (issue 17 acceptance, faults): a child process running compact →
// cleanup is SIGKILLed at its 1st, 2nd, … write or delete — every step of compaction (new data
// files, the transaction file, the manifest) and of cleanup (each file, each manifest) — until
// one run completes. After every kill the table reads the same rows, and the next pass
// finishes the job: one fragment, one version, the same rows.
func TestKilledAtEveryStep(t *testing.T) {
	if testing.Short() {
		t.Skip("re-execs the test binary once per kill point")
	}
	self, err := os.Executable()
	assert.NilError(t, err)
	killed := 0
	n := passOps(t)
	t.Logf("a pass makes %d writes and deletes; killed at each of them", n)
	for at := int64(1); at <= n; at++ {
		dir, ds, want := faultTable(t)
		cmd := exec.Command(self, "-test.run=^$")
		cmd.Env = append(os.Environ(), "LANCECAT_CRASH_DIR="+dir, "LANCECAT_CRASH_AT="+strconv.FormatInt(at, 10))
		out, err := cmd.CombinedOutput()
		var exit *exec.ExitError
		assert.Assert(t, errors.As(err, &exit), "%d: %v: %s", at, err, out)
		assert.Assert(t, !exit.Exited(), "child failed instead of being killed at %d: %s", at, out)
		killed++
		assert.DeepEqual(t, rowsByID(t, ds), want)
		finish(t, ds, want)
	}
	assert.Assert(t, killed > 3)
}

// TestStorageFaultAtEveryStep: the same pass with the N-th write or delete failing (an injected
// storage error instead of a kill), in process: the pass answers the error, the table reads the
// same rows, and the next pass finishes the job.
func TestStorageFaultAtEveryStep(t *testing.T) {
	failed := 0
	n := passOps(t)
	for at := int64(1); at <= n; at++ {
		dir, ds, want := faultTable(t)
		fs, err := storage.NewFS(dir)
		assert.NilError(t, err)
		faulty := lance.NewDataset(&faultStore{Bucket: fs, at: at})
		zero := time.Duration(0)
		_, err = Run(context.Background(), faulty, RunOptions{OlderThan: &zero})
		if err != nil { // nil: the failed write was best effort (the version hint)
			assert.Assert(t, errors.Is(err, errInjected), "%d: %v", at, err)
			failed++
		}
		assert.DeepEqual(t, rowsByID(t, ds), want)
		finish(t, ds, want)
	}
	t.Logf("a pass makes %d writes and deletes; %d failures surfaced as errors", n, failed)
	assert.Assert(t, failed > 3)
}

// repairChild runs one repair over the catalog root dir through a store that SIGKILLs the
// process at its at-th write or delete (lease, deletes, release), acting on the cleared report
// in file report.
func repairChild(dir, report string, at int64) int {
	fs, err := storage.NewFS(dir)
	if err != nil {
		return 3
	}
	data, err := os.ReadFile(report)
	if err != nil {
		return 3
	}
	var cleared OrphanReport
	if json.Unmarshal(data, &cleared) != nil {
		return 3
	}
	s := &Service{Catalog: namespace.New(&faultStore{Bucket: fs, at: at, kill: true}, namespace.Options{RootURI: dir}), Holder: "child"}
	if _, err := s.Reconcile(context.Background(), cleared, false, OrphanOptions{}); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 4
	}
	return 0
}

// TestRepairKilledAtEveryStep: a repair removing three stray files is SIGKILLed at each of its
// writes and deletes (taking the lease, each delete, releasing it). After every kill the table
// reads the same rows and no referenced file is gone; the next repair (once the dead replica's
// lease has expired) removes what is left.
func TestRepairKilledAtEveryStep(t *testing.T) {
	if testing.Short() {
		t.Skip("re-execs the test binary once per kill point")
	}
	self, err := os.Executable()
	assert.NilError(t, err)
	ctx := context.Background()
	strays := []string{"data/stray-a.lance", "_indices/stray/part.lance", "_transactions/0-stray.txn"}
	old := time.Now().Add(-30 * 24 * time.Hour)
	later := func() time.Time { return time.Now().Add(time.Hour) } // the dead child's lease has expired
	const ops = 5                                                  // lease, 3 deletes, release
	for at := int64(1); at <= ops; at++ {
		dir, ns := sweepRoot(t, 1, 2)
		tbl, err := ns.LoadTable(ctx, ident.ID{"t0000"})
		assert.NilError(t, err)
		ds, _ := tbl.Dataset()
		want := rowsByID(t, ds)
		for _, k := range strays {
			plant(t, dir, ds.Store(), k, old)
		}
		s := &Service{Catalog: ns, Holder: "parent", Now: later}
		rep, err := s.ScanOrphans(ctx, OrphanOptions{})
		assert.NilError(t, err)
		assert.Equal(t, len(rep.Findings), len(strays))
		body, err := json.Marshal(rep)
		assert.NilError(t, err)
		report := dir + "/../report.json"
		assert.NilError(t, os.WriteFile(report, body, 0o600))

		cmd := exec.Command(self, "-test.run=^$")
		cmd.Env = append(os.Environ(), "LANCECAT_REPAIR_DIR="+dir, "LANCECAT_REPAIR_REPORT="+report, "LANCECAT_CRASH_AT="+strconv.FormatInt(at, 10))
		out, err := cmd.CombinedOutput()
		var exit *exec.ExitError
		assert.Assert(t, errors.As(err, &exit), "%d: %v: %s", at, err, out)
		assert.Assert(t, !exit.Exited(), "child failed instead of being killed at %d: %s", at, out)
		assert.DeepEqual(t, rowsByID(t, ds), want)

		fixed, err := s.Reconcile(ctx, rep, false, OrphanOptions{})
		assert.NilError(t, err)
		assert.Equal(t, len(fixed.Refused), 0, "%+v", fixed.Refused)
		assert.DeepEqual(t, rowsByID(t, ds), want)
		left, err := s.ScanOrphans(ctx, OrphanOptions{})
		assert.NilError(t, err)
		assert.Equal(t, len(left.Findings), 0, "the next repair finished the job after a kill at %d", at)
	}
}
