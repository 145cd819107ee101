package server

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"gotest.tools/v3/assert"

	"github.com/lancecat/lancecat/catalog"
	"github.com/lancecat/lancecat/control"
	"github.com/lancecat/lancecat/handlers"
	"github.com/lancecat/lancecat/ident"
	"github.com/lancecat/lancecat/namespace"
	"github.com/lancecat/lancecat/storage"
)

// processCPU is the CPU time this process (the server under test) has used.
func processCPU(t *testing.T) time.Duration {
	var ru syscall.Rusage
	assert.NilError(t, syscall.Getrusage(syscall.RUSAGE_SELF, &ru))
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// TestDisconnectStopsTheWork (issue 29): when the client of a long count_rows hangs up, the
// server stops working on it promptly — the request's context is cancelled on the disconnect
// (HTTP/1.1, the body read whole) and the scan, the per-batch evaluation and the evaluation of
// one long expression inside a batch look at it. Measured as the server process's CPU after the
// disconnect: it burned both cores for 40 s more after a hung-up count_rows of 150,000 terms.
func TestDisconnectStopsTheWork(t *testing.T) {
	ctx := context.Background()
	root := t.TempDir()
	fs, err := storage.NewFS(root)
	assert.NilError(t, err)
	cat := namespace.New(fs, namespace.Options{RootURI: root})
	s, err := New(Options{
		Handlers: handlers.New(handlers.Options{Catalog: cat}),
		Control:  control.New(control.Options{}),
		Logger:   slog.New(slog.DiscardHandler),
	})
	assert.NilError(t, err)
	srv := httptest.NewServer(s.Handler())
	t.Cleanup(srv.Close)

	// 400,000 ids in batches of 8,192.
	schema := arrow.NewSchema([]arrow.Field{{Name: "id", Type: arrow.PrimitiveTypes.Int64}}, nil)
	var recs []arrow.RecordBatch
	for from := int64(0); from < 400_000; from += 8192 {
		b := array.NewRecordBuilder(memory.NewGoAllocator(), schema)
		for i := from; i < min(from+8192, 400_000); i++ {
			b.Field(0).(*array.Int64Builder).Append(i)
		}
		recs = append(recs, b.NewRecordBatch())
		b.Release()
	}
	_, err = cat.CreateNamespace(ctx, ident.ID{"a"}, nil, "")
	assert.NilError(t, err)
	_, _, err = cat.CreateTable(ctx, ident.ID{"a", "t"}, catalog.NewTable{Schema: schema, Rows: catalog.Records(schema, recs...)})
	assert.NilError(t, err)
	for _, r := range recs {
		r.Release()
	}

	// An allowed but long expression: 8,000 additions per row, seconds of work over the table.
	pred := strings.Repeat("id + ", 8000) + "id > 0"
	body, err := json.Marshal(map[string]string{"predicate": pred})
	assert.NilError(t, err)
	reqCtx, cancel := context.WithCancel(ctx)
	req, err := http.NewRequestWithContext(reqCtx, "POST", srv.URL+"/v1/table/a%24t/count_rows", bytes.NewReader(body))
	assert.NilError(t, err)
	req.Header.Set("Content-Type", "application/json")
	answered := make(chan error, 1)
	go func() {
		resp, err := srv.Client().Do(req)
		if err == nil {
			resp.Body.Close()
		}
		answered <- err
	}()

	// Hang up once the server is busy with it (its CPU is climbing).
	busyFrom := processCPU(t)
	deadline := time.Now().Add(30 * time.Second)
	for processCPU(t)-busyFrom < 300*time.Millisecond {
		assert.Assert(t, time.Now().Before(deadline), "the count never got busy")
		time.Sleep(10 * time.Millisecond)
	}
	cancel()
	hungUp := time.Now()
	select {
	case err := <-answered:
		assert.Assert(t, err != nil, "the count finished before the client hung up: make it longer")
	case <-time.After(5 * time.Second):
		t.Fatal("the client's request did not end on cancel")
	}

	// The server's CPU after the hang-up: how long until it stops climbing (a 50 ms window
	// with under 10 ms of CPU), and how much it used in the half second after that.
	var stopped time.Duration
	for last := processCPU(t); ; {
		time.Sleep(50 * time.Millisecond)
		now := processCPU(t)
		if now-last < 10*time.Millisecond {
			stopped = time.Since(hungUp) - 50*time.Millisecond
			break
		}
		last = now
		assert.Assert(t, time.Since(hungUp) < 10*time.Second, "the server was still working 10 s after the client hung up")
	}
	before := processCPU(t)
	time.Sleep(500 * time.Millisecond)
	after := processCPU(t) - before
	t.Logf("the server stopped about %v after the hang-up, then used %v of CPU in 500 ms", stopped.Round(time.Millisecond), after)
	// Generous for a loaded CI machine under -race; the work itself is ~2 cores × seconds.
	assert.Assert(t, stopped < time.Second, "the server worked for %v after the client hung up", stopped)
	assert.Assert(t, after < 100*time.Millisecond, "the server used %v of CPU in the 500 ms after it stopped", after)
}
