package namespace_test

import (
	"context"
	"encoding/json"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"gotest.tools/v3/assert"

	"github.com/lancecat/lancecat/catalog"
	nserr "github.com/lancecat/lancecat/errors"
	"github.com/lancecat/lancecat/ident"
	"github.com/lancecat/lancecat/internal/testenv"
	"github.com/lancecat/lancecat/lance/index/tableindex"
	"github.com/lancecat/lancecat/maintenance/tasks"
	"github.com/lancecat/lancecat/namespace"
	"github.com/lancecat/lancecat/query"
	"github.com/lancecat/lancecat/storage"
	"github.com/lancecat/lancecat/table"
)

// buildRows is the test table's size: above the tests' background threshold (100 rows), enough
// for PQ's 256 codewords, small enough to build in a blink under -race.
const buildRows = 300

// vectorTable creates table id of rows rows (id int64, vec fixed_size_list<float32>[8], seeded)
// in n and returns its vectors.
func vectorTable(t *testing.T, n *namespace.Namespace, id ident.ID, rows int) [][]float32 {
	t.Helper()
	schema := arrow.NewSchema([]arrow.Field{
		{Name: "id", Type: arrow.PrimitiveTypes.Int64, Nullable: true},
		{Name: "vec", Type: arrow.FixedSizeListOf(8, arrow.PrimitiveTypes.Float32), Nullable: true},
	}, nil)
	b := array.NewRecordBuilder(testenv.CheckedAllocator(t), schema)
	defer b.Release()
	rng := rand.New(rand.NewPCG(1, 2))
	vl := b.Field(1).(*array.FixedSizeListBuilder)
	fv := vl.ValueBuilder().(*array.Float32Builder)
	vecs := make([][]float32, rows)
	for i := range rows {
		b.Field(0).(*array.Int64Builder).Append(int64(i))
		vl.Append(true)
		vecs[i] = make([]float32, 8)
		for j := range 8 {
			vecs[i][j] = rng.Float32()
			fv.Append(vecs[i][j])
		}
	}
	rec := b.NewRecordBatch()
	defer rec.Release()
	_, _, err := n.CreateTable(context.Background(), id, catalog.NewTable{Schema: schema, Rows: catalog.Records(schema, rec)})
	assert.NilError(t, err)
	return vecs
}

// replicas are two Namespaces on one root (two lancecat replicas), background builds from 100
// rows, with a fast heartbeat.
func replicas(t *testing.T, clockB func() time.Time) (a, b *namespace.Namespace, root storage.Bucket) {
	t.Helper()
	fs, err := storage.NewFS(t.TempDir())
	assert.NilError(t, err)
	opts := func(holder string, now func() time.Time) namespace.Options {
		return namespace.Options{IndexBuild: table.IndexBuildOptions{
			BackgroundRows: 100, Holder: holder, Heartbeat: 20 * time.Millisecond, StaleAfter: time.Minute, Now: now,
		}}
	}
	a = namespace.New(fs, opts("replica-a", nil))
	b = namespace.New(fs, opts("replica-b", clockB))
	t.Cleanup(func() { a.WaitIndexBuilds(); b.WaitIndexBuilds() })
	return a, b, fs
}

func taskLog(t *testing.T, n *namespace.Namespace, id ident.ID, now func() time.Time) *tasks.Log {
	t.Helper()
	h, err := n.LoadTable(context.Background(), id)
	assert.NilError(t, err)
	return &tasks.Log{Store: mustDataset(t, h).Store(), Now: now}
}

func indexNames(t *testing.T, n *namespace.Namespace, id ident.ID) []string {
	t.Helper()
	h, err := n.LoadTable(context.Background(), id)
	assert.NilError(t, err)
	list, err := h.ListIndices(context.Background(), "", nil)
	assert.NilError(t, err)
	names := []string{}
	for _, d := range list {
		names = append(names, d.Name+":"+d.Type)
	}
	return names
}

func createIVFPQ(ctx context.Context, n *namespace.Namespace, id ident.ID) (uint64, error) {
	h, err := n.LoadTable(ctx, id)
	if err != nil {
		return 0, err
	}
	return h.CreateIndex(ctx, catalog.CreateIndexRequest{Column: "vec", IndexType: "IVF_PQ", Replace: true,
		Vector: catalog.VectorIndexParams{NumPartitions: 2, NumSubVectors: 2}})
}

// holdAtAssigning makes n's next background index build wait at its assigning phase: reached is
// closed when it gets there, and it goes on once the test closes release.
func holdAtAssigning(n *namespace.Namespace) (reached, release chan struct{}) {
	reached, release = make(chan struct{}), make(chan struct{})
	n.SetIndexPhaseHook(func(phase string) bool {
		if phase == tableindex.PhaseAssigning {
			close(reached)
			<-release
		}
		return false
	})
	return reached, release
}

// codeOf is err's spec code as the door answers it (the errors table's translation).
func codeOf(err error) nserr.Code {
	if err == nil {
		return -1
	}
	return nserr.CodeOf(err)
}

// TestBackgroundIndexBuild: on a table over the threshold the create answers at once (version 0);
// while the build runs (held at its assigning phase) the other replica sees its task running
// with that phase and the rows total, lists no index yet, and a create of the same name there is
// ConcurrentModification naming the task; once it ends the index is listed (no unindexed rows),
// the task succeeded with the version, and a kNN through it finds the exact row.
func TestBackgroundIndexBuild(t *testing.T) {
	ctx := context.Background()
	a, b, _ := replicas(t, nil)
	id := ident.ID{"vecs"}
	vecs := vectorTable(t, a, id, buildRows)
	reached, release := holdAtAssigning(a)
	ver, err := createIVFPQ(ctx, a, id)
	assert.NilError(t, err)
	assert.Equal(t, ver, uint64(0), "a background build answers before it commits")
	<-reached

	recs, err := taskLog(t, b, id, nil).List(ctx)
	assert.NilError(t, err)
	assert.Equal(t, len(recs), 1)
	assert.Equal(t, recs[0].Kind, table.TaskKindCreateIndex)
	assert.Equal(t, recs[0].State, tasks.StateRunning)
	assert.Equal(t, recs[0].Holder, "replica-a")
	var prog map[string]any
	assert.NilError(t, json.Unmarshal(recs[0].Progress, &prog))
	assert.Equal(t, prog["phase"], tableindex.PhaseAssigning)
	assert.Equal(t, prog["index_name"], "vec_idx")
	assert.Equal(t, prog["index_type"], "IVF_PQ")
	assert.Equal(t, prog["rows_total"], float64(buildRows))
	assert.DeepEqual(t, indexNames(t, b, id), []string{})

	_, err = createIVFPQ(ctx, b, id)
	assert.Equal(t, codeOf(err), nserr.ConcurrentModification, "%v", err)
	assert.Assert(t, strings.Contains(err.Error(), recs[0].ID), err.Error())

	close(release)
	a.WaitIndexBuilds()
	assert.DeepEqual(t, indexNames(t, b, id), []string{"vec_idx:IVF_PQ"})
	h, err := b.LoadTable(ctx, id)
	assert.NilError(t, err)
	st, err := h.IndexStats(ctx, "", nil, "vec_idx")
	assert.NilError(t, err)
	assert.Equal(t, st.NumIndexedRows, uint64(buildRows))
	assert.Equal(t, st.NumUnindexedRows, uint64(0))
	recs, err = taskLog(t, b, id, nil).List(ctx)
	assert.NilError(t, err)
	assert.Equal(t, recs[0].State, tasks.StateSucceeded)
	var res map[string]any
	assert.NilError(t, json.Unmarshal(recs[0].Result, &res))
	assert.Equal(t, res["index_name"], "vec_idx")
	assert.Assert(t, res["version"].(float64) >= 2)

	// The index serves the kNN (explain names it) and the exact row comes first with refine.
	q := query.Request{Vector: &query.VectorQuery{Column: "vec", Vectors: [][]float32{vecs[42]}, K: 3, NProbes: 2, RefineFactor: 10}}
	plan, err := h.Explain(ctx, catalog.ReadAt{}, q, false)
	assert.NilError(t, err)
	assert.Assert(t, strings.Contains(plan, "vec_idx"), plan)
	rr, _, err := h.Query(ctx, catalog.ReadAt{}, q)
	assert.NilError(t, err)
	defer rr.Release()
	assert.Assert(t, rr.Next())
	col := rr.RecordBatch().Column(0).(*array.Int64)
	assert.Equal(t, col.Value(0), int64(42))
}

// TestBackgroundIndexBuildKilled: a build whose replica died just before committing (fault
// injection: it stops dead, no finish, no release) leaves no index listed; its task is listed
// running, then abandoned once it has gone without a heartbeat for StaleAfter; its claim keeps
// the name until then, after which another replica's create takes it over and commits.
func TestBackgroundIndexBuildKilled(t *testing.T) {
	ctx := context.Background()
	later := func() time.Time { return time.Now().Add(time.Hour) }
	a, b, _ := replicas(t, later)
	id := ident.ID{"vecs"}
	vectorTable(t, a, id, buildRows)
	a.SetIndexPhaseHook(func(phase string) bool { return phase == tableindex.PhaseCommitting })
	_, err := createIVFPQ(ctx, a, id)
	assert.NilError(t, err)
	a.WaitIndexBuilds()
	assert.DeepEqual(t, indexNames(t, a, id), []string{})

	recs, err := taskLog(t, a, id, nil).List(ctx)
	assert.NilError(t, err)
	assert.Equal(t, recs[0].State, tasks.StateRunning, "a dead build is running until it is stale")
	recs, err = taskLog(t, a, id, later).List(ctx)
	assert.NilError(t, err)
	assert.Equal(t, recs[0].State, tasks.StateAbandoned)
	dead := recs[0].ID

	// While the claim is fresh, the name is taken (replica a's clock); past StaleAfter (replica
	// b's clock) it is taken over.
	a.SetIndexPhaseHook(nil)
	_, err = createIVFPQ(ctx, a, id)
	assert.Equal(t, codeOf(err), nserr.ConcurrentModification, "%v", err)
	_, err = createIVFPQ(ctx, b, id)
	assert.NilError(t, err)
	b.WaitIndexBuilds()
	assert.DeepEqual(t, indexNames(t, a, id), []string{"vec_idx:IVF_PQ"})
	recs, err = taskLog(t, a, id, later).List(ctx)
	assert.NilError(t, err)
	assert.Equal(t, len(recs), 2)
	assert.Equal(t, recs[0].State, tasks.StateSucceeded)
	assert.Equal(t, recs[1].ID, dead)
	assert.Equal(t, recs[1].State, tasks.StateAbandoned)
}

// TestIndexBuildThreshold: below the threshold a build is synchronous (the version, no task);
// above it, bad input is still refused up front (InvalidInput, no task, nothing committed), and a
// scalar build runs in the background like a vector one.
func TestIndexBuildThreshold(t *testing.T) {
	ctx := context.Background()
	a, _, _ := replicas(t, nil)
	small, big := ident.ID{"small"}, ident.ID{"big"}
	vectorTable(t, a, small, 50)
	vectorTable(t, a, big, buildRows)

	h, err := a.LoadTable(ctx, small)
	assert.NilError(t, err)
	ver, err := h.CreateIndex(ctx, catalog.CreateIndexRequest{Column: "id", IndexType: "BTREE", Replace: true})
	assert.NilError(t, err)
	assert.Assert(t, ver >= 2)
	recs, err := taskLog(t, a, small, nil).List(ctx)
	assert.NilError(t, err)
	assert.Equal(t, len(recs), 0)

	h, err = a.LoadTable(ctx, big)
	assert.NilError(t, err)
	for _, req := range []catalog.CreateIndexRequest{
		{Column: "vec", IndexType: "IVF_PQ", Vector: catalog.VectorIndexParams{NumSubVectors: 3}},
		{Column: "id", IndexType: "IVF_FLAT"},
		{Column: "vec", IndexType: "BTREE"},
	} {
		_, err := h.CreateIndex(ctx, req)
		assert.Equal(t, codeOf(err), nserr.InvalidInput, "%+v: %v", req, err)
	}
	_, err = h.CreateIndex(ctx, catalog.CreateIndexRequest{Column: "nope", IndexType: "BTREE"})
	assert.Equal(t, codeOf(err), nserr.TableColumnNotFound, "%v", err)
	recs, err = taskLog(t, a, big, nil).List(ctx)
	assert.NilError(t, err)
	assert.Equal(t, len(recs), 0, "refused up front: no task")

	ver, err = h.CreateIndex(ctx, catalog.CreateIndexRequest{Column: "id", IndexType: "BTREE", Replace: true})
	assert.NilError(t, err)
	assert.Equal(t, ver, uint64(0))
	a.WaitIndexBuilds()
	assert.DeepEqual(t, indexNames(t, a, big), []string{"id_idx:BTREE"})
	recs, err = taskLog(t, a, big, nil).List(ctx)
	assert.NilError(t, err)
	assert.Equal(t, recs[0].State, tasks.StateSucceeded)
	var prog map[string]any
	assert.NilError(t, json.Unmarshal(recs[0].Progress, &prog))
	assert.Equal(t, prog["phase"], tableindex.PhaseCommitting)
}

// textTable creates table id of rows rows (id int64, text utf8) in n.
func textTable(t *testing.T, n *namespace.Namespace, id ident.ID, rows int) {
	t.Helper()
	schema := arrow.NewSchema([]arrow.Field{
		{Name: "id", Type: arrow.PrimitiveTypes.Int64, Nullable: true},
		{Name: "text", Type: arrow.BinaryTypes.String, Nullable: true},
	}, nil)
	b := array.NewRecordBuilder(testenv.CheckedAllocator(t), schema)
	defer b.Release()
	words := []string{"lance", "catalog", "arrow", "index", "tokens"}
	for i := range rows {
		b.Field(0).(*array.Int64Builder).Append(int64(i))
		b.Field(1).(*array.StringBuilder).Append(words[i%5] + " " + words[(i/5)%5])
	}
	rec := b.NewRecordBatch()
	defer rec.Release()
	_, _, err := n.CreateTable(context.Background(), id, catalog.NewTable{Schema: schema, Rows: catalog.Records(schema, rec)})
	assert.NilError(t, err)
}

// TestBackgroundFTSParamsRefusedUpFront: on a table over the background threshold, an FTS create
// with tokenizer parameters lancecat cannot honour is InvalidInput at once, exactly as below the
// threshold, and starts no task (h-idx's gap: it used to be a failed task); a good one still
// builds in the background.
func TestBackgroundFTSParamsRefusedUpFront(t *testing.T) {
	ctx := context.Background()
	a, _, _ := replicas(t, nil)
	small, big := ident.ID{"small"}, ident.ID{"big"}
	textTable(t, a, small, 20)
	textTable(t, a, big, buildRows)
	str := func(s string) *string { return &s }
	num := func(n int) *int { return &n }
	bad := []catalog.FTSIndexParams{
		{BaseTokenizer: str("icu")},
		{BaseTokenizer: str("ngram"), MinNgramLength: num(4), MaxNgramLength: num(3)},
		{Language: str("Klingon")},
		{MaxTokenLength: num(-1)},
		{MaxTokenLength: num(0)},
	}
	for _, id := range []ident.ID{small, big} {
		h, err := a.LoadTable(ctx, id)
		assert.NilError(t, err)
		for _, p := range bad {
			_, err := h.CreateIndex(ctx, catalog.CreateIndexRequest{Column: "text", IndexType: "FTS", FTS: p})
			assert.Equal(t, codeOf(err), nserr.InvalidInput, "%s %+v: %v", id, p, err)
		}
		recs, err := taskLog(t, a, id, nil).List(ctx)
		assert.NilError(t, err)
		assert.Equal(t, len(recs), 0, "%s: refused up front, no task", id)
		assert.DeepEqual(t, indexNames(t, a, id), []string{})
	}

	h, err := a.LoadTable(ctx, big)
	assert.NilError(t, err)
	ver, err := h.CreateIndex(ctx, catalog.CreateIndexRequest{Column: "text", IndexType: "FTS",
		FTS: catalog.FTSIndexParams{BaseTokenizer: str("whitespace"), MaxTokenLength: num(20)}})
	assert.NilError(t, err)
	assert.Equal(t, ver, uint64(0), "a good one builds in the background")
	a.WaitIndexBuilds()
	assert.DeepEqual(t, indexNames(t, a, big), []string{"text_idx:FTS"})
	recs, err := taskLog(t, a, big, nil).List(ctx)
	assert.NilError(t, err)
	assert.Equal(t, recs[0].State, tasks.StateSucceeded)
}

// TestCancelIndexBuilds: a build under way when its replica shuts down (held at its assigning
// phase, then CancelIndexBuilds) ends: its task is failed saying the replica shut down (not left
// running to go stale), its claim is released (another replica's create of the same name starts
// at once, no ConcurrentModification), and nothing half-made is listed. A create after the
// cancel on the shut-down replica is refused (ServiceUnavailable) and starts no task.
func TestCancelIndexBuilds(t *testing.T) {
	ctx := context.Background()
	a, b, _ := replicas(t, nil)
	id := ident.ID{"vecs"}
	vectorTable(t, a, id, buildRows)
	reached, release := holdAtAssigning(a)
	ver, err := createIVFPQ(ctx, a, id)
	assert.NilError(t, err)
	assert.Equal(t, ver, uint64(0))
	<-reached
	a.CancelIndexBuilds()
	close(release)
	a.WaitIndexBuilds()

	assert.DeepEqual(t, indexNames(t, b, id), []string{})
	recs, err := taskLog(t, b, id, nil).List(ctx)
	assert.NilError(t, err)
	assert.Equal(t, len(recs), 1)
	assert.Equal(t, recs[0].State, tasks.StateFailed)
	assert.Assert(t, strings.Contains(recs[0].Error, "shutting down"), recs[0].Error)

	a.SetIndexPhaseHook(nil)
	_, err = createIVFPQ(ctx, a, id)
	assert.Equal(t, codeOf(err), nserr.ServiceUnavailable, "%v", err)
	recs, err = taskLog(t, b, id, nil).List(ctx)
	assert.NilError(t, err)
	assert.Equal(t, len(recs), 1, "no task for the refused create")

	ver, err = createIVFPQ(ctx, b, id)
	assert.NilError(t, err, "the cancelled build released its claim")
	assert.Equal(t, ver, uint64(0))
	b.WaitIndexBuilds()
	assert.DeepEqual(t, indexNames(t, b, id), []string{"vec_idx:IVF_PQ"})
}
