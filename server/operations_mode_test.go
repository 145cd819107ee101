package server

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"gotest.tools/v3/assert"

	"github.com/lancecat/lancecat/authz"
	"github.com/lancecat/lancecat/client/controlclient"
	"github.com/lancecat/lancecat/control"
	nserr "github.com/lancecat/lancecat/errors"
	"github.com/lancecat/lancecat/governance"
	"github.com/lancecat/lancecat/handlers"
	"github.com/lancecat/lancecat/registry"
	"github.com/lancecat/lancecat/storage"
)

// readOperations are the operations that only read, written out by hand so the classifier
// (IsReadRequest) is checked against a list, not against itself.
var readOperations = map[string]bool{
	// Lance spec.
	"DescribeNamespace": true, "NamespaceExists": true, "ListNamespaces": true, "ListTables": true,
	"ListAllTables": true, "AnalyzeTableQueryPlan": true, "ListTableBranches": true, "CountTableRows": true,
	"DescribeTable": true, "TableExists": true, "ExplainTableQueryPlan": true, "ListTableIndices": true,
	"DescribeTableIndexStats": true, "QueryTable": true, "GetTableStats": true, "ListTableTags": true,
	"GetTableTagVersion": true, "DescribeTableVersion": true, "ListTableVersions": true, "DescribeTransaction": true,
	// Control plane.
	"ListEvents": true, "DescribeMe": true, "ListProjects": true, "DescribeProject": true,
	"DescribeProjectPolicy": true, "DescribeNamespacePolicy": true, "DescribeTablePolicy": true,
	"DescribeNamespaceProtection": true, "DescribeTableProtection": true, "ListTableTasks": true,
	"ListNamespaceTasks": true,
	"ListWarehouses":     true, "DescribeWarehouse": true, "ListWarehouseNamespaces": true,
	"GetCapabilities": true, "ListAccess": true,
	// The LanceDB remote dialect's reads (issue 34).
	"GetTableLsmWriteSpec": true, "GetTableLsmStats": true, "ListJobs": true, "DescribeJob": true,
	"PrewarmTableIndex": true, "PrewarmTableData": true, "DiffTableBranch": true,
}

func allOperations(t *testing.T) []Operation {
	t.Helper()
	spec, err := SpecOperations()
	assert.NilError(t, err)
	control, err := ControlOperations()
	assert.NilError(t, err)
	return append(spec, control...)
}

// requestPath fills an operation's path parameters with harmless values.
func requestPath(o Operation) string {
	r := strings.NewReplacer("{id}", "ns%24t", "{index_name}", "idx", "{project_id}", "p", "{warehouse_id}", "w")
	return r.Replace(o.Path)
}

func TestIsReadRequestPinsEveryOperation(t *testing.T) {
	ops := allOperations(t)
	assert.Assert(t, len(ops) > 54)
	seen := map[string]bool{}
	for _, o := range ops {
		seen[o.ID] = true
		assert.Equal(t, IsReadRequest(o.Method, o.EchoPath()), readOperations[o.ID], "%s %s %s", o.ID, o.Method, o.Path)
	}
	for id := range readOperations {
		assert.Assert(t, seen[id], "%s is no longer an operation", id)
	}
	// Fail closed: what the allow-list does not name is a write.
	for _, tc := range []struct {
		method, route string
		read          bool
	}{
		{"POST", "", false},
		{"POST", "/", false},
		{"POST", "/v1/table/:id/frobnicate", false},
		{"POST", "/v1/table/:id/tags/version", true},
		{"POST", "/v1/table/:id/version", false}, // only tags/version reads
		{"POST", "/v1/table/:id", false},
		{"PUT", "/v1/table/:id/describe", true}, // the action decides for non-GETs
		{"DELETE", "/v1/projects/:project_id", false},
		{"HEAD", "/v1/table/:id/drop", true},
		{"OPTIONS", "/v1/table/:id/drop", true},
	} {
		assert.Equal(t, IsReadRequest(tc.method, tc.route), tc.read, "%s %s", tc.method, tc.route)
	}
}

// modeEnv is a control-plane server over a shared registry store, built with opts applied.
type modeEnv struct {
	url     string
	handler http.Handler
	client  *controlclient.ClientWithResponses
}

func newModeEnv(t *testing.T, store *registry.Store, opts Options) *modeEnv {
	t.Helper()
	dir := t.TempDir()
	gov, err := governance.New(governance.Options{
		Store: store, Buckets: governance.LocalBuckets{Base: filepath.Join(dir, "warehouses"), Reserve: []string{filepath.Join(dir, "catalog")}},
	})
	assert.NilError(t, err)
	opts.Handlers = handlers.New(handlers.Options{})
	opts.Control = control.New(control.Options{}).WithGovernance(gov, nil)
	opts.Logger = slog.New(slog.DiscardHandler)
	opts.Authn = &authz.Authenticator{}
	s, err := New(opts)
	assert.NilError(t, err)
	srv := httptest.NewServer(s.Handler())
	t.Cleanup(srv.Close)
	c, err := controlclient.NewClientWithResponses(srv.URL)
	assert.NilError(t, err)
	return &modeEnv{url: srv.URL, handler: s.Handler(), client: c}
}

// TestReadOnlyMode: every spec and control write is 503 code 17 with Retry-After; every read is
// served (the spec reads answer what they answer without a catalog, 406; the control reads 200).
func TestReadOnlyMode(t *testing.T) {
	store := registry.NewStore(storage.NewMemory())
	ctx := context.Background()
	rw := newModeEnv(t, store, Options{})
	r, err := rw.client.CreateProjectWithResponse(ctx, controlclient.CreateProjectRequest{Id: "p"})
	assert.NilError(t, err)
	expect(t, r.StatusCode(), r.Body, 200, 0)

	ro := newModeEnv(t, store, Options{ReadOnly: true})
	for _, o := range allOperations(t) {
		t.Run(o.ID, func(t *testing.T) {
			body := ""
			if o.Method == http.MethodPost {
				body = "{}"
			}
			a := do(t, ro.handler, o.Method, requestPath(o), body, nil)
			if readOperations[o.ID] {
				assert.Assert(t, a.status != http.StatusServiceUnavailable, "%s: %s", o.ID, a.body)
				assert.Equal(t, a.header.Get("Retry-After"), "")
				return
			}
			assert.Equal(t, a.status, http.StatusServiceUnavailable, "%s: %s", o.ID, a.body)
			assert.Equal(t, a.problem.Code, int(nserr.ServiceUnavailable))
			assert.Equal(t, a.header.Get("Retry-After"), "60")
		})
	}

	t.Run("through the generated client", func(t *testing.T) {
		list, err := ro.client.ListProjectsWithResponse(ctx, nil)
		assert.NilError(t, err)
		expect(t, list.StatusCode(), list.Body, 200, 0)
		assert.Equal(t, len(list.JSON200.Projects), 1)
		desc, err := ro.client.DescribeProjectWithResponse(ctx, "p")
		assert.NilError(t, err)
		expect(t, desc.StatusCode(), desc.Body, 200, 0)

		create, err := ro.client.CreateProjectWithResponse(ctx, controlclient.CreateProjectRequest{Id: "q"})
		assert.NilError(t, err)
		expect(t, create.StatusCode(), create.Body, 503, nserr.ServiceUnavailable)
		assert.Equal(t, create.HTTPResponse.Header.Get("Retry-After"), "60")
		del, err := ro.client.DeleteProjectWithResponse(ctx, "p", nil)
		assert.NilError(t, err)
		expect(t, del.StatusCode(), del.Body, 503, nserr.ServiceUnavailable)
		prot, err := ro.client.SetTableProtectionWithResponse(ctx, "ns$t", nil, controlclient.SetProtectionRequest{Protected: true})
		assert.NilError(t, err)
		expect(t, prot.StatusCode(), prot.Body, 503, nserr.ServiceUnavailable)

		// Nothing was written; the project is still there for the writable replica.
		again, err := rw.client.DescribeProjectWithResponse(ctx, "p")
		assert.NilError(t, err)
		expect(t, again.StatusCode(), again.Body, 200, 0)
		gone, err := rw.client.DescribeProjectWithResponse(ctx, "q")
		assert.NilError(t, err)
		expect(t, gone.StatusCode(), gone.Body, 404, nserr.NamespaceNotFound)
	})

	t.Run("unrouted writes fail closed, operational endpoints answer", func(t *testing.T) {
		a := do(t, ro.handler, "POST", "/v1/table/ns%24t/frobnicate", "{}", nil)
		assert.Equal(t, a.status, http.StatusServiceUnavailable)
		for _, path := range []string{"/healthz", "/readyz"} {
			a := do(t, ro.handler, "GET", path, "", nil)
			assert.Equal(t, a.status, 200, path)
		}
	})
}

// blockingBucket holds every project create (PutIfAbsent under _projects/) until released, so a
// test can keep writes in flight.
type blockingBucket struct {
	*storage.Memory
	entered chan string
	release chan struct{}
}

func (b *blockingBucket) PutIfAbsent(ctx context.Context, key string, r io.Reader, size int64) (storage.ObjectInfo, error) {
	if strings.HasPrefix(key, registry.ProjectsPrefix) {
		b.entered <- key
		select {
		case <-b.release:
		case <-ctx.Done():
			return storage.ObjectInfo{}, ctx.Err()
		}
	}
	return b.Memory.PutIfAbsent(ctx, key, r, size)
}

// TestWriteShedding: with the write slots taken by blocked creates, one more write is refused at
// once (429 code 21, Retry-After), while reads are served; released slots admit writes again.
func TestWriteShedding(t *testing.T) {
	const limit = 3
	b := &blockingBucket{Memory: storage.NewMemory(), entered: make(chan string, 16), release: make(chan struct{})}
	e := newModeEnv(t, registry.NewStore(b), Options{MaxConcurrentWrites: limit})
	ctx := context.Background()

	var wg sync.WaitGroup
	statuses := make(chan int, limit)
	for i := range limit {
		wg.Go(func() {
			r, err := e.client.CreateProjectWithResponse(ctx, controlclient.CreateProjectRequest{Id: "held-" + string(rune('a'+i))})
			assert.Check(t, err)
			statuses <- r.StatusCode()
		})
	}
	for range limit {
		select {
		case <-b.entered:
		case <-time.After(10 * time.Second):
			t.Fatal("the writes never reached the store")
		}
	}

	// Every slot is taken: writes are shed immediately, whatever they are.
	start := time.Now()
	sctx, cancel := context.WithTimeout(ctx, 5*time.Second) // a write let through would hang
	defer cancel()
	r, err := e.client.CreateProjectWithResponse(sctx, controlclient.CreateProjectRequest{Id: "shed"})
	assert.NilError(t, err)
	expect(t, r.StatusCode(), r.Body, 429, nserr.Throttling, "concurrent writes")
	assert.Equal(t, r.HTTPResponse.Header.Get("Retry-After"), "1")
	assert.Assert(t, time.Since(start) < 2*time.Second, "a shed write is refused, not queued")
	a := do(t, e.handler, "POST", "/v1/table/ns%24t/insert", "{}", nil)
	assert.Equal(t, a.status, 429)
	assert.Equal(t, a.problem.Code, int(nserr.Throttling))

	// Reads are never shed, however many.
	var reads sync.WaitGroup
	for range 3 * limit {
		reads.Go(func() {
			l, err := e.client.ListProjectsWithResponse(ctx, nil)
			assert.Check(t, err)
			assert.Check(t, l.StatusCode() == 200, string(l.Body))
			a := do(t, e.handler, "POST", "/v1/namespace/ns/describe", "{}", nil)
			assert.Check(t, a.status == 406, a.body)
		})
	}
	reads.Wait()

	close(b.release)
	wg.Wait()
	close(statuses)
	for s := range statuses {
		assert.Equal(t, s, 200)
	}
	// The slots are free again (also after failed writes).
	for range 2 * limit {
		bad, err := e.client.CreateProjectWithResponse(ctx, controlclient.CreateProjectRequest{Id: "Bad!"})
		assert.NilError(t, err)
		expect(t, bad.StatusCode(), bad.Body, 400, nserr.InvalidInput)
	}
	ok, err := e.client.CreateProjectWithResponse(ctx, controlclient.CreateProjectRequest{Id: "after"})
	assert.NilError(t, err)
	expect(t, ok.StatusCode(), ok.Body, 200, 0)
}
