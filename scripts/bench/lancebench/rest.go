package main

// The data-plane half of the benchmark (issue 15): lancecat answering over REST, timed from a
// plain HTTP client, against the SDK embedded (dataplane.mjs) on the same table.
//
//	lancebench rest <lancecat-binary> <dir> [reps]
//
// It starts `lancecat serve` on a fresh local root (<dir>/root), creates the table "wide" there
// with POST /v1/table/wide/create from <dir>/wide.arrow, and stops it, so the serving process's
// peak RSS is that of the reads alone. It starts a second server on the same root and times (see
// measure: warm-up, then the median and best of at least reps runs within a time budget): count_rows, count_rows with a filter, a filtered query, full scans of two columns and
// brute-force top-10 kNN. The answer (Arrow IPC file) is decoded as it arrives: the client
// reads the file's stream body batch by batch (the footer only repeats where the batches are),
// so what is timed is the server producing and sending the rows. Before the operations it times
// one GET /healthz, the HTTP floor under every figure. It prints JSON (run.sh keeps it as
// <dir>/dataplane.json): the operations (filters, query vector) for dataplane.mjs to run the
// same, the timings, the answers to check the SDK against, and each server's peak RSS (VmHWM).

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/ipc"

	"github.com/lancecat/lancecat/internal/arrowipc"
)

// dataplaneOp is one timed operation, as both sides run it. Kind is count, query or knn.
type dataplaneOp struct {
	Name    string   `json:"name"`
	Label   string   `json:"label"`
	Kind    string   `json:"kind"`
	Filter  string   `json:"filter,omitempty"`
	Columns []string `json:"columns,omitempty"`
	K       int      `json:"k,omitempty"`
}

// dataplaneResult is what a side measured for one operation (see measure): the median and the
// best time of Runs timed runs, and the answer's shape (rows; the count for counts; the ids in
// order for kNN), which must agree across sides.
type dataplaneResult struct {
	Seconds float64 `json:"seconds"` // the median
	BestS   float64 `json:"best_s"`
	Runs    int     `json:"runs"`
	Rows    int64   `json:"rows"`
	IDs     []int64 `json:"ids,omitempty"`
}

type dataplaneOut struct {
	Table      string                     `json:"table"`
	Root       string                     `json:"root"`
	Vector     []float32                  `json:"vector"`
	Ops        []dataplaneOp              `json:"ops"`
	Lancecat   map[string]dataplaneResult `json:"lancecat"`
	CreateS    float64                    `json:"create_s"`
	CreateHWM  int64                      `json:"create_server_hwm"`
	ServeHWM   int64                      `json:"serve_server_hwm"`
	ServerRSS  int64                      `json:"serve_server_rss"`
	HealthzS   float64                    `json:"healthz_s"` // median
	HealthzBS  float64                    `json:"healthz_best_s"`
	FloorS     float64                    `json:"http_floor_s"` // median; see floor.go
	FloorBS    float64                    `json:"http_floor_best_s"`
	BudgetS    float64                    `json:"budget_s"`
	ClientNote string                     `json:"client"`
}

// The operations: keep the filters to what both dialects read alike. The names are
// "<word>-<n>" with 12 words (see tables), so the LIKE filters keep about a twelfth of the rows.
var dataplaneOps = []dataplaneOp{
	{Name: "count", Label: "count_rows", Kind: "count"},
	{Name: "count_filter", Label: "count_rows(filter)", Kind: "count", Filter: "id % 3 = 0 AND name LIKE 'vector-%'"},
	{Name: "filtered_query", Label: "filtered query [id name]", Kind: "query", Filter: "id > 100000 AND name LIKE '%index%'", Columns: []string{"id", "name"}},
	{Name: "scan_id_name", Label: "full scan [id name]", Kind: "query", Columns: []string{"id", "name"}},
	{Name: "scan_id_vector", Label: "full scan [id vector]", Kind: "query", Columns: []string{"id", "vector"}},
	{Name: "knn", Label: "top-10 kNN l2 (flat)", Kind: "knn", Columns: []string{"id", "name"}, K: 10},
}

const dataplaneTable = "wide"

func queryVector() []float32 {
	q := make([]float32, 128)
	for k := range q {
		q[k] = float32(math.Sin(float64(k)*0.37) * 0.5)
	}
	return q
}

// serveProc is one `lancecat serve`: a child process, or (cmd nil) the server in this process.
type serveProc struct {
	cmd  *exec.Cmd
	url  string
	done chan error
}

func startServer(bin, root, logPath string) (*serveProc, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	addr := l.Addr().String()
	_ = l.Close()
	logf, err := os.OpenFile(logPath, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(bin, "serve", "--root", root, "--listen", addr, "--log-level", "warn")
	cmd.Stdout, cmd.Stderr = logf, logf
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	s := &serveProc{cmd: cmd, url: "http://" + addr, done: make(chan error, 1)}
	go func() { s.done <- cmd.Wait(); _ = logf.Close() }()
	deadline := time.Now().Add(60 * time.Second)
	for time.Now().Before(deadline) {
		select {
		case err := <-s.done:
			return nil, fmt.Errorf("lancecat serve exited before it was ready (%v): see %s", err, logPath)
		default:
		}
		if resp, err := http.Get(s.url + "/healthz"); err == nil {
			_ = resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return s, nil
			}
		}
		time.Sleep(100 * time.Millisecond)
	}
	s.stop()
	return nil, fmt.Errorf("lancecat serve not ready after 60s: see %s", logPath)
}

// status reads a field of /proc/<pid>/status in bytes (VmHWM: peak RSS, VmRSS: current).
func (s *serveProc) status(field string) (int64, error) {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", s.cmd.Process.Pid))
	if err != nil {
		return 0, err
	}
	for _, line := range strings.Split(string(data), "\n") {
		if v, ok := strings.CutPrefix(line, field+":"); ok {
			kb, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			return kb * 1024, err
		}
	}
	return 0, fmt.Errorf("no %s in /proc/%d/status", field, s.cmd.Process.Pid)
}

func (s *serveProc) stop() {
	_ = s.cmd.Process.Signal(os.Interrupt)
	select {
	case <-s.done:
	case <-time.After(30 * time.Second):
		_ = s.cmd.Process.Kill()
		<-s.done
	}
}

// post sends body to the table's operation and returns the reply, failing on a non-2xx status.
func (s *serveProc) post(op, contentType string, body io.Reader) (*http.Response, error) {
	resp, err := http.Post(s.url+"/v1/table/"+dataplaneTable+"/"+op, contentType, body)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode/100 != 2 {
		msg, _ := io.ReadAll(resp.Body)
		_ = resp.Body.Close()
		return nil, fmt.Errorf("%s: %s: %s", op, resp.Status, msg)
	}
	return resp, nil
}

func (s *serveProc) postJSON(op string, v any) (*http.Response, error) {
	body, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	return s.post(op, "application/json", bytes.NewReader(body))
}

// count is POST count_rows: the reply is a bare integer.
func (s *serveProc) count(filter string) (int64, error) {
	req := map[string]any{}
	if filter != "" {
		req["predicate"] = filter
	}
	resp, err := s.postJSON("count_rows", req)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		return 0, err
	}
	return strconv.ParseInt(strings.TrimSpace(string(data)), 10, 64)
}

// arrowFileMagic opens an Arrow IPC file; what follows it (padded to 8 bytes) is an IPC stream.
const arrowFileMagic = "ARROW1\x00\x00"

// query is POST query: it decodes the answer's batches as they arrive and returns the row count
// and, when the answer has an int64 id column, the ids in order.
func (s *serveProc) query(req map[string]any, wantIDs bool) (int64, []int64, error) {
	resp, err := s.postJSON("query", req)
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	var magic [8]byte
	if _, err := io.ReadFull(resp.Body, magic[:]); err != nil {
		return 0, nil, fmt.Errorf("query answer: %w", err)
	}
	if string(magic[:]) != arrowFileMagic {
		return 0, nil, fmt.Errorf("query answer is not an Arrow IPC file (starts %q)", magic[:])
	}
	// The answer is untrusted input like any other: arrowipc's reader checks each message before
	// arrow-go allocates what it claims, and holds one batch at a time.
	r, err := arrowipc.NewStreamReader(resp.Body, arrowipc.StreamOptions{})
	if err != nil {
		return 0, nil, err
	}
	defer r.Release()
	var n int64
	var ids []int64
	for r.Next() {
		rec := r.RecordBatch()
		n += rec.NumRows()
		if wantIDs {
			idx := rec.Schema().FieldIndices("id")
			if len(idx) == 1 {
				if col, ok := rec.Column(idx[0]).(*array.Int64); ok {
					ids = append(ids, col.Int64Values()...)
				}
			}
		}
	}
	if err := r.Err(); err != nil {
		return 0, nil, err
	}
	// The footer: read it so the connection is reused.
	_, err = io.Copy(io.Discard, resp.Body)
	return n, ids, err
}

// createBody is <dir>/wide.arrow as an IPC stream, POST create's body.
func createBody(dir string) ([]byte, error) {
	recs, schema, err := load(filepath.Join(dir, dataplaneTable+".arrow"))
	if err != nil {
		return nil, err
	}
	var body bytes.Buffer
	w := ipc.NewWriter(&body, ipc.WithSchema(schema))
	for _, rec := range recs {
		if err := w.Write(rec); err != nil {
			return nil, err
		}
		rec.Release()
	}
	if err := w.Close(); err != nil {
		return nil, err
	}
	return body.Bytes(), nil
}

// createTable sends body to POST create.
func createTable(s *serveProc, body []byte) error {
	resp, err := s.post("create", "application/vnd.apache.arrow.stream", bytes.NewReader(body))
	if err != nil {
		return err
	}
	_, err = io.Copy(io.Discard, resp.Body)
	_ = resp.Body.Close()
	return err
}

// runREST measures lancecat's side. With sdkCmd (a command to which an operation's name is
// appended: run.sh passes `node dataplane.mjs <sdk> <dir> <reps>`), it runs the SDK's measurement
// of each operation right after its own, so both sides of a ratio are timed within seconds of
// each other: on a shared machine the load changes from minute to minute, and timing every
// lancecat operation first and every SDK operation minutes later compared different machines.
// The SDK side reads the operations from <dir>/dataplane-plan.json, written before the reads.
func runREST(bin, dir string, reps int, sdkCmd []string) error {
	root := filepath.Join(dir, "root")
	if err := os.RemoveAll(root); err != nil {
		return err
	}
	logPath := filepath.Join(dir, "lancecat-serve.log")
	out := dataplaneOut{
		Table: dataplaneTable, Root: root, Vector: queryVector(), Ops: dataplaneOps,
		Lancecat:   map[string]dataplaneResult{},
		ClientNote: "Go net/http, answers decoded as they arrive (arrow-go IPC stream reader)",
	}

	// The table, through REST, by a server that then goes away.
	body, err := createBody(dir)
	if err != nil {
		return err
	}
	s, err := startServer(bin, root, logPath)
	if err != nil {
		return err
	}
	start := time.Now()
	err = createTable(s, body)
	body = nil
	out.CreateS = time.Since(start).Seconds()
	if err == nil {
		out.CreateHWM, err = s.status("VmHWM")
	}
	s.stop()
	if err != nil {
		return err
	}

	plan, err := json.Marshal(map[string]any{"table": out.Table, "root": out.Root, "vector": out.Vector, "ops": out.Ops})
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, "dataplane-plan.json"), plan, 0o644); err != nil {
		return err
	}

	// The reads, by a fresh server.
	s, err = startServer(bin, root, logPath)
	if err != nil {
		return err
	}
	defer s.stop()
	// The floor under every figure: one HTTP round trip that reads no table.
	budget := benchBudget()
	out.BudgetS = budget.Seconds()
	hz, err := measure(reps, budget, func() error {
		resp, err := http.Get(s.url + "/healthz")
		if err != nil {
			return err
		}
		_, err = io.Copy(io.Discard, resp.Body)
		_ = resp.Body.Close()
		return err
	})
	if err != nil {
		return err
	}
	out.HealthzS, out.HealthzBS = hz.median, hz.best
	fl, err := measureFloor(reps, budget)
	if err != nil {
		return err
	}
	out.FloorS, out.FloorBS = fl.median, fl.best
	for _, op := range dataplaneOps {
		var res dataplaneResult
		f := func() error {
			r, err := runOp(s, op, out.Vector)
			res.Rows, res.IDs = r.Rows, r.IDs
			return err
		}
		t, err := measure(reps, budget, f)
		if err != nil {
			return fmt.Errorf("%s: %w", op.Name, err)
		}
		res.Seconds, res.BestS, res.Runs = t.median, t.best, t.runs
		out.Lancecat[op.Name] = res
		if len(sdkCmd) > 0 {
			cmd := exec.Command(sdkCmd[0], append(slices.Clone(sdkCmd[1:]), op.Name)...)
			cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr // stdout is this program's JSON
			if err := cmd.Run(); err != nil {
				return fmt.Errorf("%s: the SDK side: %w", op.Name, err)
			}
		}
	}
	if out.ServeHWM, err = s.status("VmHWM"); err != nil {
		return err
	}
	if out.ServerRSS, err = s.status("VmRSS"); err != nil {
		return err
	}
	return json.NewEncoder(os.Stdout).Encode(out)
}

// runOp runs op over REST once and returns the answer's shape.
func runOp(s *serveProc, op dataplaneOp, vector []float32) (dataplaneResult, error) {
	var res dataplaneResult
	var err error
	switch op.Kind {
	case "count":
		res.Rows, err = s.count(op.Filter)
	case "query":
		req := map[string]any{"columns": op.Columns}
		if op.Filter != "" {
			req["filter"] = op.Filter
		}
		res.Rows, _, err = s.query(req, false)
	case "knn":
		req := map[string]any{
			"columns": op.Columns, "vector": vector, "vector_column": "vector",
			"distance_type": "l2", "k": op.K,
		}
		res.Rows, res.IDs, err = s.query(req, true)
	default:
		err = fmt.Errorf("unknown operation kind %q", op.Kind)
	}
	return res, err
}

// timing is what measure found: the median and the best of runs timed runs.
type timing struct {
	median, best float64
	runs         int
}

// Both sides of the data-plane comparison time an operation the same way (dataplane.mjs has the
// twin of measure): warm up untimed (at least warmRuns runs and warmTime: the first requests pay
// for the connection, the table's open and the server's and node's caches, which a steady client
// has paid long ago), then time at least reps runs and keep going while the op's timed runs fit in
// the budget (LANCECAT_BENCH_SECONDS, default 1 s; at most maxRuns runs), and report the median
// and the best. With the best of a handful of runs, an operation of 100 µs measured mostly the
// warm-up of the connection (GET /healthz: 489 µs best of 5, 63 µs best of 50); the median of
// hundreds is what a client sees, and what the ratio is judged on.
const (
	warmRuns = 3
	warmTime = 200 * time.Millisecond
	maxRuns  = 500
)

func benchBudget() time.Duration {
	if v, err := strconv.ParseFloat(os.Getenv("LANCECAT_BENCH_SECONDS"), 64); err == nil && v > 0 {
		return time.Duration(v * float64(time.Second))
	}
	return time.Second
}

func measure(reps int, budget time.Duration, f func() error) (timing, error) {
	runtime.GC()
	start := time.Now()
	for i := 0; i < warmRuns || time.Since(start) < warmTime; i++ {
		if err := f(); err != nil {
			return timing{}, err
		}
	}
	var ds []float64
	var spent time.Duration
	for len(ds) < maxRuns && (len(ds) < reps || spent < budget) {
		t := time.Now()
		if err := f(); err != nil {
			return timing{}, err
		}
		d := time.Since(t)
		spent += d
		ds = append(ds, d.Seconds())
	}
	slices.Sort(ds)
	return timing{median: ds[len(ds)/2], best: ds[0], runs: len(ds)}, nil
}
