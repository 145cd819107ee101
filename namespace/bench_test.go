package namespace_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/lancecat/lancecat/handlers"
	"github.com/lancecat/lancecat/namespace"
	"github.com/lancecat/lancecat/server"
	"github.com/lancecat/lancecat/storage"
)

// The catalog at scale: 10,000 tables in 100 namespaces on a local root, served through the
// whole HTTP stack in process (routing, middleware, handlers, the namespace). The target is a
// median under 5 ms for describe_table and list_tables; the benchmarks report p50 and p99.
//
//	go test ./namespace -run '^$' -bench Catalog10k -benchtime 2000x
const (
	benchSpaces   = 100
	benchPerSpace = 100
)

var (
	benchOnce    sync.Once
	benchHandler http.Handler
	benchErr     error
)

func benchServer(b *testing.B) http.Handler {
	benchOnce.Do(func() {
		dir, err := makeTempDir()
		if err != nil {
			benchErr = err
			return
		}
		bucket, err := storage.NewFS(dir)
		if err != nil {
			benchErr = err
			return
		}
		start := time.Now()
		n := namespace.New(bucket, namespace.Options{RootURI: dir})
		if benchErr = namespace.BulkFill(context.Background(), n, benchSpaces, benchPerSpace); benchErr != nil {
			return
		}
		b.Logf("filled %d tables in %d namespaces in %v", benchSpaces*benchPerSpace, benchSpaces, time.Since(start))
		// A fresh Namespace, so the benchmark starts from a cold snapshot cache like a new server.
		srv, err := server.New(server.Options{Handlers: handlers.New(handlers.Options{
			Catalog: namespace.New(bucket, namespace.Options{RootURI: dir}),
		})})
		if err != nil {
			benchErr = err
			return
		}
		benchHandler = srv.Handler()
	})
	if benchErr != nil {
		b.Fatal(benchErr)
	}
	return benchHandler
}

// makeTempDir is a directory that outlives one benchmark run (b.TempDir would be removed
// between the benchmarks sharing the root); it is under the test's TMPDIR.
var makeTempDir = func() (string, error) { return tempDir() }

func runLatency(b *testing.B, req func(i int) *http.Request) {
	h := benchServer(b)
	// Warm up (the first request loads and decodes the manifest).
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req(0))
	if rec.Code != http.StatusOK {
		b.Fatalf("status %d: %s", rec.Code, rec.Body)
	}
	lat := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for i := range b.N {
		r := req(i)
		start := time.Now()
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, r)
		lat = append(lat, time.Since(start))
		if rec.Code != http.StatusOK {
			b.Fatalf("status %d: %s", rec.Code, rec.Body)
		}
	}
	b.StopTimer()
	slices.Sort(lat)
	pct := func(p float64) float64 {
		return float64(lat[min(len(lat)-1, int(p*float64(len(lat))))].Microseconds()) / 1000
	}
	b.ReportMetric(pct(0.50), "p50-ms")
	b.ReportMetric(pct(0.99), "p99-ms")
}

func describeReq(ns, t int) *http.Request {
	body := fmt.Sprintf(`{"id":["ns%d","t%d"]}`, ns, t)
	r := httptest.NewRequest(http.MethodPost, fmt.Sprintf("/v1/table/ns%d%%24t%d/describe?delimiter=%%24", ns, t), strings.NewReader(body))
	r.Header.Set("content-type", "application/json")
	return r
}

// BenchmarkCatalog10kDescribeTable describes tables with a dataset (its latest version is read).
func BenchmarkCatalog10kDescribeTable(b *testing.B) {
	runLatency(b, func(int) *http.Request { return describeReq(rand.IntN(benchSpaces), 0) })
}

// BenchmarkCatalog10kDescribeDeclared describes declared tables (no dataset written yet).
func BenchmarkCatalog10kDescribeDeclared(b *testing.B) {
	runLatency(b, func(int) *http.Request { return describeReq(rand.IntN(benchSpaces), 1+rand.IntN(benchPerSpace-1)) })
}

func BenchmarkCatalog10kListTables(b *testing.B) {
	runLatency(b, func(i int) *http.Request {
		return httptest.NewRequest(http.MethodGet, fmt.Sprintf("/v1/namespace/ns%d/table/list?delimiter=%%24", rand.IntN(benchSpaces)), nil)
	})
}

func BenchmarkCatalog10kListTablesPage(b *testing.B) {
	runLatency(b, func(i int) *http.Request {
		return httptest.NewRequest(http.MethodGet, fmt.Sprintf("/v1/namespace/ns%d/table/list?delimiter=%%24&limit=10&page_token=t5", rand.IntN(benchSpaces)), nil)
	})
}

var benchDirs []string

func tempDir() (string, error) {
	dir, err := os.MkdirTemp("", "lancecat-bench-")
	if err == nil {
		benchDirs = append(benchDirs, dir)
	}
	return dir, err
}

func TestMain(m *testing.M) {
	code := m.Run()
	for _, d := range benchDirs {
		_ = os.RemoveAll(d)
	}
	os.Exit(code)
}
