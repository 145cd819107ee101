package authz_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync"
	"testing"

	"gotest.tools/v3/assert"

	"github.com/lancecat/lancecat/authz"
	nserr "github.com/lancecat/lancecat/errors"
	"github.com/lancecat/lancecat/ident"
	"github.com/lancecat/lancecat/internal/testenv"
)

var quiet = authz.WithAuditLog(slog.New(slog.NewTextHandler(io.Discard, nil)))

// newFGA returns an authorizer on a fresh store of the test OpenFGA (skips without one).
func newFGA(t testing.TB, opts ...authz.Option) *authz.OpenFGA {
	t.Helper()
	f, _ := newFGAAt(t, testenv.OpenFGA(t), opts...)
	return f
}

func newFGAAt(t testing.TB, fgaURL string, opts ...authz.Option) (*authz.OpenFGA, authz.Store) {
	t.Helper()
	opts = append([]authz.Option{quiet}, opts...)
	store, err := authz.EnsureStore(context.Background(), fgaURL, storeName(), opts...)
	assert.NilError(t, err)
	f, err := authz.New(fgaURL, store, opts...)
	assert.NilError(t, err)
	return f, store
}

func storeName() string {
	b := make([]byte, 6)
	_, _ = rand.Read(b)
	return "lancecat-test-" + hex.EncodeToString(b)
}

// estate is project p > warehouse w > namespace a > namespace a$b > table a$b$t, created by creator.
type estate struct {
	creator                           authz.Principal
	project, warehouse, nsA, nsAB, tb authz.Object
}

func seedEstate(t testing.TB, f authz.Authorizer) estate {
	t.Helper()
	e := estate{
		creator:   authz.User("creator"),
		project:   authz.ProjectObject("p"),
		warehouse: authz.WarehouseObject("w"),
		nsA:       authz.NamespaceObject(ident.ID{"a"}),
		nsAB:      authz.NamespaceObject(ident.ID{"a", "b"}),
		tb:        authz.TableObject(ident.ID{"a", "b", "t"}),
	}
	ctx := context.Background()
	assert.NilError(t, f.SeedCreate(ctx, e.creator, e.project, authz.Object{}))
	assert.NilError(t, f.SeedCreate(ctx, e.creator, e.warehouse, e.project))
	assert.NilError(t, f.SeedCreate(ctx, e.creator, e.nsA, e.warehouse))
	assert.NilError(t, f.SeedCreate(ctx, e.creator, e.nsAB, e.nsA))
	assert.NilError(t, f.SeedCreate(ctx, e.creator, e.tb, e.nsAB))
	return e
}

func code(t testing.TB, err error) nserr.Code {
	t.Helper()
	assert.Assert(t, nserr.Coded(err), "not a coded error: %v", err)
	return nserr.CodeOf(err)
}

// recorder is a reverse proxy in front of OpenFGA that remembers the writes passing through it.
type recorder struct {
	URL string
	mu  sync.Mutex
	// writes holds the body of every POST /stores/{id}/write, with the status OpenFGA answered.
	writes []recordedWrite
}

type recordedWrite struct {
	body   string
	status int
}

func newRecorder(t testing.TB, target string) *recorder {
	u, err := url.Parse(target)
	assert.NilError(t, err)
	r := &recorder{}
	proxy := httputil.NewSingleHostReverseProxy(u)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		if !strings.HasSuffix(req.URL.Path, "/write") {
			proxy.ServeHTTP(w, req)
			return
		}
		body, _ := io.ReadAll(req.Body)
		req.Body = io.NopCloser(bytes.NewReader(body))
		sw := &statusWriter{ResponseWriter: w, status: http.StatusOK}
		proxy.ServeHTTP(sw, req)
		r.mu.Lock()
		r.writes = append(r.writes, recordedWrite{string(body), sw.status})
		r.mu.Unlock()
	}))
	t.Cleanup(srv.Close)
	r.URL = srv.URL
	return r
}

func (r *recorder) taken() []recordedWrite {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := r.writes
	r.writes = nil
	return out
}

type statusWriter struct {
	http.ResponseWriter
	status int
}

func (s *statusWriter) WriteHeader(code int) {
	s.status = code
	s.ResponseWriter.WriteHeader(code)
}
