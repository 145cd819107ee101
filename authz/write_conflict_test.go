package authz_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"

	"gotest.tools/v3/assert"

	"github.com/lancecat/lancecat/authz"
	nserr "github.com/lancecat/lancecat/errors"
	"github.com/lancecat/lancecat/internal/testenv"
)

// TestWriteRetriesTransactionConflicts: OpenFGA on a SQL datastore answers 409 Aborted
// ("transactional write failed due to conflict") when two transactions write the same tuple at
// once — three replicas starting together, each granting --estate-admins, made two of them exit
// (found by the topology test on PostgreSQL). Writes are idempotent, so a conflict is retried and
// the write succeeds; a conflict that never ends is reported as the service being unavailable.
// The conflicts are injected by a proxy in front of the real OpenFGA (a fake for fault injection
// only: every other request reaches OpenFGA).
func TestWriteRetriesTransactionConflicts(t *testing.T) {
	target, err := url.Parse(testenv.OpenFGA(t))
	assert.NilError(t, err)
	var conflicts, writes atomic.Int32
	proxy := httputil.NewSingleHostReverseProxy(target)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasSuffix(r.URL.Path, "/write") {
			writes.Add(1)
			if conflicts.Load() > 0 {
				conflicts.Add(-1)
				w.Header().Set("Content-Type", "application/json")
				w.WriteHeader(http.StatusConflict)
				_, _ = w.Write([]byte(`{"code":"Aborted","message":"transactional write failed due to conflict: one or more tuples to write were inserted by another transaction"}`))
				return
			}
		}
		proxy.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	f, _ := newFGAAt(t, srv.URL)
	ctx := context.Background()

	conflicts.Store(2)
	writes.Store(0)
	assert.NilError(t, authz.GrantEstateAdmin(ctx, f, authz.User("ada")))
	assert.Equal(t, writes.Load(), int32(3), "two conflicts, then the write")
	admins, err := f.EstateAdmins(ctx)
	assert.NilError(t, err)
	assert.DeepEqual(t, admins, []authz.Subject{"user:ada"})

	conflicts.Store(1000)
	writes.Store(0)
	err = f.Grant(ctx, authz.User("bob").Subject(), "member", authz.ProjectObject("p"))
	assert.Equal(t, nserr.CodeOf(err), nserr.ServiceUnavailable, "%v", err)
	assert.ErrorContains(t, err, "answered 409")
	assert.Equal(t, writes.Load(), int32(6), "bounded attempts")
}
