//go:build linux

package e2e

// Issue 29, item 1: no number in a request sizes an allocation. `create_index` with
// sample_rate 2,000,000,000 made the server reserve sample_rate × 256 training vectors up front,
// and Go cannot recover from "fatal error: runtime: out of memory": every tenant lost the
// server. Here the real `lancecat serve` runs under an address-space limit (RLIMIT_AS, which is
// what turns an over-sized reservation into that fatal error on an overcommitting kernel: a
// GOMEMLIMIT is only a GC target) and answers a table of hostile parameter sets on every door
// that takes numbers (the index types, maintenance, materialized views, backfill): each answers
// 2xx or 4xx, and the server still answers /healthz.

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"golang.org/x/sys/unix"
	"gotest.tools/v3/assert"

	"github.com/lancecat/lancecat/catalog"
	"github.com/lancecat/lancecat/ident"
	"github.com/lancecat/lancecat/namespace"
	"github.com/lancecat/lancecat/storage"
)

const (
	hostileRows = 600
	hostileDim  = 8
	// hostileHeadroom is the address space the server may take beyond what it holds when ready:
	// far more than the hostile table needs (600 rows), far less than any request-sized
	// reservation (sample_rate 2e9 × 256 vectors of 8 floats is 16 TB).
	hostileHeadroom = 1 << 30
)

// hostileTable is ns.hostile: id, an 8-dim vector, a text, a small int and a list of labels.
func hostileTable(t *testing.T, root string) {
	t.Helper()
	ctx := context.Background()
	fs, err := storage.NewFS(root)
	assert.NilError(t, err)
	n := namespace.New(fs, namespace.Options{})
	_, err = n.CreateNamespace(ctx, ident.ID{"ns"}, nil, "")
	assert.NilError(t, err)
	schema := arrow.NewSchema([]arrow.Field{
		{Name: "id", Type: arrow.PrimitiveTypes.Int64, Nullable: true},
		{Name: "vec", Type: arrow.FixedSizeListOf(hostileDim, arrow.PrimitiveTypes.Float32), Nullable: true},
		{Name: "text", Type: arrow.BinaryTypes.String, Nullable: true},
		{Name: "k", Type: arrow.PrimitiveTypes.Int64, Nullable: true},
		{Name: "tags", Type: arrow.ListOf(arrow.BinaryTypes.String), Nullable: true},
	}, nil)
	b := array.NewRecordBuilder(memory.DefaultAllocator, schema)
	defer b.Release()
	words := []string{"lance", "catalog", "vector", "index", "hostile", "request", "memory", "bound"}
	vb := b.Field(1).(*array.FixedSizeListBuilder)
	fb := vb.ValueBuilder().(*array.Float32Builder)
	lb := b.Field(4).(*array.ListBuilder)
	sb := lb.ValueBuilder().(*array.StringBuilder)
	for i := range hostileRows {
		b.Field(0).(*array.Int64Builder).Append(int64(i))
		vb.Append(true)
		for j := range hostileDim {
			fb.Append(float32((i*7+j*13)%101) / 10)
		}
		b.Field(2).(*array.StringBuilder).Append(words[i%8] + " " + words[(i/8)%8] + " " + strconv.Itoa(i))
		b.Field(3).(*array.Int64Builder).Append(int64(i % 5))
		lb.Append(true)
		sb.Append(words[i%8])
		sb.Append(words[(i+3)%8])
	}
	rec := b.NewRecordBatch()
	defer rec.Release()
	_, _, err = n.CreateTable(ctx, ident.ID{"ns", "hostile"}, catalog.NewTable{Schema: schema, Rows: catalog.Records(schema, rec)})
	assert.NilError(t, err)
}

// hostileCase is one request: its door (path under the table or view) and JSON body.
type hostileCase struct {
	path string
	body string
}

// hostileNumbers are the values every numeric parameter is tried with: huge, i64::MAX, past
// i64::MAX, negative, i64::MIN, zero, and JSON numbers that are not integers (JSON has no NaN:
// the float and the string are the nearest a client can send).
var hostileNumbers = []string{
	"2000000", "2000000000", "9223372036854775807", "18446744073709551616", "-1", "-9223372036854775808", "0",
	"1e308", "1.5", `"NaN"`,
}

// hostileCases is the table of requests: every numeric parameter of every index type, of
// maintenance, of a view's refresh and of a backfill, with every hostile number; then the
// request of the issue itself.
func hostileCases() []hostileCase {
	var out []hostileCase
	idx := func(body string) { out = append(out, hostileCase{"/v1/table/ns$hostile/create_index", body}) }
	vectorParams := []string{"num_partitions", "num_sub_vectors", "num_bits", "max_iterations", "sample_rate",
		"target_partition_size", "m", "ef_construction"}
	for _, kind := range []string{"IVF_PQ", "IVF_FLAT", "IVF_SQ", "IVF_HNSW_SQ", "IVF_HNSW_PQ", "IVF_HNSW_FLAT", "IVF_RQ", "HNSW", "VECTOR"} {
		for _, p := range vectorParams {
			for _, v := range hostileNumbers {
				// The other parameters are valid ones (2 partitions of 2 sub-vectors), so the
				// hostile one is what the server meets.
				body := fmt.Sprintf(`{"column":"vec","index_type":%q,%q:%s`, kind, p, v)
				for _, d := range []string{"num_partitions", "num_sub_vectors"} {
					if d != p {
						body += fmt.Sprintf(`,%q:2`, d)
					}
				}
				idx(body + "}")
			}
		}
	}
	// Parameters set together at their extremes (the products that overflowed).
	for _, v := range []string{"2000000000", "9223372036854775807", "4611686018427387904"} {
		idx(fmt.Sprintf(`{"column":"vec","index_type":"IVF_PQ","num_partitions":4096,"sample_rate":%s,"max_iterations":%s}`, v, v))
		idx(fmt.Sprintf(`{"column":"vec","index_type":"IVF_FLAT","num_partitions":%s,"sample_rate":%s}`, v, v))
	}
	for _, v := range hostileNumbers {
		out = append(out, hostileCase{"/v1/table/ns$hostile/create_index", fmt.Sprintf(`{"column":"text","index_type":"FTS","max_token_length":%s}`, v)},
			hostileCase{"/v1/table/ns$hostile/create_index", fmt.Sprintf(`{"column":"text","index_type":"INVERTED","with_position":true,"max_token_length":%s}`, v)})
		for _, sc := range [][2]string{{"k", "BTREE"}, {"k", "BITMAP"}, {"tags", "LABEL_LIST"}} {
			for _, p := range []string{"num_partitions", "sample_rate", "max_token_length", "m"} {
				out = append(out, hostileCase{"/v1/table/ns$hostile/create_scalar_index", fmt.Sprintf(`{"column":%q,"index_type":%q,%q:%s}`, sc[0], sc[1], p, v)})
			}
		}
		// Maintenance: a dry run, so no pass removes what the later cases read.
		out = append(out, hostileCase{"/v1/table/ns$hostile/maintenance/run", fmt.Sprintf(`{"dry_run":true,"older_than_seconds":%s}`, v)},
			hostileCase{"/v1/materialized_view/ns$mv/refresh", fmt.Sprintf(`{"src_version":%s}`, v)},
			hostileCase{"/v1/table/ns$hostile/backfill_column", fmt.Sprintf(`{"column":"k2","checkpoint_size":%s}`, v)})
	}
	// The request, last: today's code dies on it.
	idx(`{"column":"vec","index_type":"IVF_PQ","num_partitions":2,"num_sub_vectors":2,"sample_rate":2000000000}`)
	return out
}

// TestHostileParameters: every hostile case answers 2xx or 4xx from a server under an
// address-space limit, and the server lives (/healthz) after each; its peak RSS is logged.
func TestHostileParameters(t *testing.T) {
	ctx := context.Background()
	root := filepath.Join(t.TempDir(), "root")
	hostileTable(t, root)
	p := startServe(t, root)
	pid := p.cmd.Process.Pid
	vm := status(t, pid, "VmSize")
	limit := uint64(vm + hostileHeadroom)
	assert.NilError(t, unix.Prlimit(pid, unix.RLIMIT_AS, &unix.Rlimit{Cur: limit, Max: limit}, nil))
	t.Logf("server pid %d: VmSize %d MiB when ready, RLIMIT_AS %d MiB", pid, vm>>20, limit>>20)

	post := func(path, body string) answer {
		t.Helper()
		sep := "?"
		if strings.Contains(path, "?") {
			sep = "&"
		}
		a, err := call(ctx, p.url, http.MethodPost, path+sep+"delimiter=%24", "application/json", []byte(body))
		if err != nil {
			select {
			case werr := <-p.exited:
				t.Fatalf("POST %s %s: the server died (%v): %v\n%s", path, body, werr, err, p.tail)
			case <-time.After(2 * time.Second):
			}
			t.Fatalf("POST %s %s: %v\n%s", path, body, err, p.tail)
		}
		return a
	}
	// The doors the hostile cases need: a computed column to backfill, a view to refresh.
	a := post("/v1/table/ns$hostile/add_columns", `{"new_columns":[{"name":"k2","computed":"k * 2"}]}`)
	assert.Equal(t, a.status, http.StatusOK, "%s", a.body)
	a = post("/v1/materialized_view/ns$mv/create", `{"kind":"query","with_no_data":true,`+
		`"source_query":"SELECT k, count(*) AS n FROM hostile GROUP BY k LIMIT 9223372036854775807 OFFSET 9223372036854775807"}`)
	assert.Equal(t, a.status, http.StatusCreated, "%s", a.body)
	// The maintenance door is served (a 404 would make its cases meaningless).
	a = post("/v1/table/ns$hostile/maintenance/run", `{"dry_run":true}`)
	assert.Equal(t, a.status, http.StatusOK, "%s", a.body)

	cases := hostileCases()
	counts := map[int]int{}
	start := time.Now()
	for _, c := range cases {
		a := post(c.path, c.body)
		counts[a.status]++
		if a.status >= 500 {
			t.Errorf("POST %s %s: %d %s", c.path, c.body, a.status, a.body)
		}
		if a.status >= 400 && !json.Valid(a.body) {
			t.Errorf("POST %s %s: %d with a body that is not a JSON error: %s", c.path, c.body, a.status, a.body)
		}
	}
	// The background jobs (refreshes, backfills) run on: the server outlives them too.
	time.Sleep(time.Second)
	h, err := call(ctx, p.url, http.MethodGet, "/healthz", "", nil)
	assert.NilError(t, err, "%s", p.tail)
	assert.Equal(t, h.status, http.StatusOK)
	t.Logf("%d hostile requests in %s: answers %v; server VmHWM %d MiB, VmRSS %d MiB, VmSize %d MiB (limit %d MiB)",
		len(cases), time.Since(start).Round(time.Millisecond), counts, status(t, pid, "VmHWM")>>20,
		status(t, pid, "VmRSS")>>20, status(t, pid, "VmSize")>>20, limit>>20)
}
