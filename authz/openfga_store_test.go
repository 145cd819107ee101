package authz_test

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"gotest.tools/v3/assert"

	"github.com/lancecat/lancecat/authz"
	nserr "github.com/lancecat/lancecat/errors"
	"github.com/lancecat/lancecat/ident"
	"github.com/lancecat/lancecat/internal/testenv"
)

func TestEnsureStoreIsIdempotent(t *testing.T) {
	fgaURL := testenv.OpenFGA(t)
	ctx := context.Background()
	name := storeName()
	first, err := authz.EnsureStore(ctx, fgaURL, name, quiet)
	assert.NilError(t, err)
	second, err := authz.EnsureStore(ctx, fgaURL, name, quiet)
	assert.NilError(t, err)
	assert.DeepEqual(t, first, second)

	// Another model became the latest (an older or newer lancecat): ours is written again, once.
	body := `{"schema_version":"1.1","type_definitions":[{"type":"user"}]}`
	resp, err := http.Post(fgaURL+"/stores/"+first.ID+"/authorization-models", "application/json", strings.NewReader(body))
	assert.NilError(t, err)
	resp.Body.Close()
	assert.Equal(t, resp.StatusCode, http.StatusCreated)
	third, err := authz.EnsureStore(ctx, fgaURL, name, quiet)
	assert.NilError(t, err)
	assert.Equal(t, third.ID, first.ID)
	assert.Assert(t, third.ModelID != first.ModelID)
	fourth, err := authz.EnsureStore(ctx, fgaURL, name, quiet)
	assert.NilError(t, err)
	assert.DeepEqual(t, fourth, third)
}

// Replicas starting at once end up on one store.
func TestEnsureStoreConverges(t *testing.T) {
	fgaURL := testenv.OpenFGA(t)
	name := storeName()
	const replicas = 4
	got := make([]authz.Store, replicas)
	var wg sync.WaitGroup
	for i := range replicas {
		wg.Go(func() {
			s, err := authz.EnsureStore(context.Background(), fgaURL, name, quiet)
			assert.Check(t, err)
			got[i] = s
		})
	}
	wg.Wait()
	for _, s := range got[1:] {
		assert.Equal(t, s.ID, got[0].ID)
	}
}

func TestEnsureStoreRefusesBadNames(t *testing.T) {
	_, err := authz.EnsureStore(context.Background(), "http://127.0.0.1:1", "ab")
	assert.Equal(t, code(t, err), nserr.InvalidInput)
}

// closedPort is a local address nothing listens on.
func closedPort(t testing.TB) string {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	assert.NilError(t, err)
	addr := l.Addr().String()
	assert.NilError(t, l.Close())
	return "http://" + addr
}

// An OpenFGA that is down or hangs is 503 (code 17) on every path, and never an allow.
func TestOutageIsServiceUnavailable(t *testing.T) {
	stop := make(chan struct{})
	hang := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done():
		case <-stop:
		}
	}))
	t.Cleanup(hang.Close)
	t.Cleanup(func() { close(stop) }) // runs first: lets the hanging handlers return
	failing := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, `{"code":"internal_error","message":"boom"}`, http.StatusInternalServerError)
	}))
	t.Cleanup(failing.Close)

	store := authz.Store{ID: "01HZZZZZZZZZZZZZZZZZZZZZZZ", ModelID: "01HZZZZZZZZZZZZZZZZZZZZZZZ"}
	tbl := authz.TableObject(ident.ID{"a", "t"})
	ns := authz.NamespaceObject(ident.ID{"a"})
	alice := authz.User("alice")
	servers := map[string]string{"closed port": closedPort(t), "hanging": hang.URL, "500": failing.URL}
	for name, u := range servers {
		t.Run(name, func(t *testing.T) {
			f, err := authz.New(u, store, quiet, authz.WithTimeout(200*time.Millisecond))
			assert.NilError(t, err)
			ctx := context.Background()
			start := time.Now()
			assert.Equal(t, code(t, f.Check(ctx, alice, authz.TableDescribe, tbl)), nserr.ServiceUnavailable)
			assert.Assert(t, time.Since(start) < 2*time.Second, "took %s", time.Since(start))
			got, err := f.Filter(ctx, alice, authz.TableListEntry, []authz.Object{tbl, tbl})
			assert.Equal(t, code(t, err), nserr.ServiceUnavailable)
			assert.Assert(t, got == nil)
			assert.Equal(t, code(t, f.SeedCreate(ctx, alice, tbl, ns)), nserr.ServiceUnavailable)
			_, err = f.RevokeAll(ctx, tbl)
			assert.Equal(t, code(t, err), nserr.ServiceUnavailable)
			assert.Equal(t, code(t, f.Grant(ctx, alice.Subject(), "reader", tbl)), nserr.ServiceUnavailable)
			_, err = authz.EnsureStore(ctx, u, "lancecat", quiet, authz.WithTimeout(200*time.Millisecond))
			assert.Equal(t, code(t, err), nserr.ServiceUnavailable)
		})
	}
}
