package main

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"gotest.tools/v3/assert"

	"github.com/lancecat/lancecat/authz"
	nserr "github.com/lancecat/lancecat/errors"
	"github.com/lancecat/lancecat/ident"
	"github.com/lancecat/lancecat/internal/testenv"
)

// TestAdminEstateCommand: estate admins are listed, granted and revoked with `lancecat admin
// estate` against the server's OpenFGA store (issue 11, item 6: restarting with another
// --estate-admins left the old admin in place and nothing could remove it). The last estate admin
// cannot be revoked.
func TestAdminEstateCommand(t *testing.T) {
	url := testenv.OpenFGA(t)
	store := storeName("lancecat-test")
	root := t.TempDir()
	estate := func(args ...string) (int, string, string) {
		var out, errb bytes.Buffer
		full := append([]string{"admin", "estate"}, args...)
		full = append(full, "--root", root, "--authz", "openfga", "--openfga-url", url, "--openfga-store", store)
		code := run(full, &out, &errb)
		return code, out.String(), errb.String()
	}
	list := func() []string {
		t.Helper()
		code, out, errs := estate("list", "--json")
		assert.Equal(t, code, 0, errs)
		var got []string
		assert.NilError(t, json.Unmarshal([]byte(out), &got), out)
		return got
	}

	// What `serve --estate-admins user:admin` did at its first start.
	ctx := context.Background()
	st, err := authz.EnsureStore(ctx, url, store)
	assert.NilError(t, err)
	fga, err := authz.New(url, st)
	assert.NilError(t, err)
	assert.NilError(t, authz.GrantEstateAdmin(ctx, fga, authz.User("admin")))
	assert.DeepEqual(t, list(), []string{"user:admin"})

	code, _, errs := estate("grant", "user:oscar")
	assert.Equal(t, code, 0, errs)
	code, _, errs = estate("grant", "team:ops#member")
	assert.Equal(t, code, 0, errs)
	assert.DeepEqual(t, list(), []string{"team:ops#member", "user:admin", "user:oscar"})
	code, out, errs := estate("list")
	assert.Equal(t, code, 0, errs)
	assert.Equal(t, out, "team:ops#member\nuser:admin\nuser:oscar\n")

	// The old admin goes, and with it every estate door.
	code, _, errs = estate("revoke", "user:admin")
	assert.Equal(t, code, 0, errs)
	assert.DeepEqual(t, list(), []string{"team:ops#member", "user:oscar"})
	assert.ErrorContains(t, fga.Check(ctx, authz.User("admin"), authz.ProjectCreate, authz.Catalog), "")
	assert.NilError(t, fga.Check(ctx, authz.User("oscar"), authz.ProjectCreate, authz.Catalog))
	// Revoking someone who is not one is a no-op.
	code, _, errs = estate("revoke", "user:admin")
	assert.Equal(t, code, 0, errs)

	// The last one stays.
	code, _, errs = estate("revoke", "team:ops#member")
	assert.Equal(t, code, 0, errs)
	code, _, errs = estate("revoke", "user:oscar")
	assert.Equal(t, code, 1)
	assert.Assert(t, strings.Contains(errs, "last estate admin"), errs)
	assert.DeepEqual(t, list(), []string{"user:oscar"})

	// Bad input is a usage error; authorization off has no estate admins to manage.
	for _, args := range [][]string{{"grant", "oscar"}, {"grant", "user:*"}, {"grant"}, {"list", "extra"}, {"frob"}} {
		code, _, _ = estate(args...)
		assert.Equal(t, code, 2, "%v", args)
	}
	// A mistyped store is an error, not a fresh empty store.
	var out1, errb1 bytes.Buffer
	assert.Equal(t, run([]string{"admin", "estate", "list", "--root", root, "--authz", "openfga", "--openfga-url", url, "--openfga-store", store + "-typo"}, &out1, &errb1), 1)
	assert.Assert(t, strings.Contains(errb1.String(), "no store named"), errb1.String())
	var out2, errb bytes.Buffer
	assert.Equal(t, run([]string{"admin", "estate", "list", "--root", root, "--authz", "off"}, &out2, &errb), 1)
	assert.Assert(t, strings.Contains(errb.String(), "authorization is off"), errb.String())
}

// TestAdminNavigatorsCommand: `lancecat admin navigators` writes the navigator tuples a store
// lacks (one written before navigator existed) and is idempotent; --prune drops stale ones.
func TestAdminNavigatorsCommand(t *testing.T) {
	url := testenv.OpenFGA(t)
	store := storeName("lancecat-test")
	root := t.TempDir()
	navigators := func(args ...string) authz.NavigatorReport {
		t.Helper()
		var out, errb bytes.Buffer
		full := append([]string{"admin", "navigators", "--json"}, args...)
		full = append(full, "--root", root, "--authz", "openfga", "--openfga-url", url, "--openfga-store", store)
		assert.Equal(t, run(full, &out, &errb), 0, errb.String())
		var rep authz.NavigatorReport
		assert.NilError(t, json.Unmarshal(out.Bytes(), &rep), out.String())
		return rep
	}
	ctx := context.Background()
	st, err := authz.EnsureStore(ctx, url, store)
	assert.NilError(t, err)
	fga, err := authz.New(url, st)
	assert.NilError(t, err)
	ns, tbl := authz.NamespaceObject(ident.ID{"ns"}), authz.TableObject(ident.ID{"ns", "t"})
	assert.NilError(t, fga.SeedCreate(ctx, authz.User("creator"), ns, authz.Catalog))
	assert.NilError(t, fga.SeedCreate(ctx, authz.User("creator"), tbl, ns))
	bob := authz.User("bob")
	assert.NilError(t, fga.Grant(ctx, bob.Subject(), "reader", tbl))
	assert.DeepEqual(t, navigators(), authz.NavigatorReport{Tuples: 8, Wanted: 2})

	// What a store from before navigator holds: bob's grant without its navigator tuple, and a
	// navigator tuple nothing asks for.
	fgaWrite := func(body string) {
		t.Helper()
		body = strings.Replace(body, "MODEL", st.ModelID, 1)
		resp, err := http.Post(url+"/stores/"+st.ID+"/write", "application/json", strings.NewReader(body))
		assert.NilError(t, err)
		_ = resp.Body.Close()
		assert.Equal(t, resp.StatusCode, http.StatusOK)
	}
	fgaWrite(`{"deletes":{"tuple_keys":[{"user":"user:bob","relation":"navigator","object":"namespace:ns"}]},"authorization_model_id":"MODEL"}`)
	fgaWrite(`{"writes":{"tuple_keys":[{"user":"user:eve","relation":"navigator","object":"namespace:ns"}]},"authorization_model_id":"MODEL"}`)
	assert.Equal(t, nserr.CodeOf(fga.Check(ctx, bob, authz.NamespaceDescribe, ns)), nserr.PermissionDenied)
	assert.DeepEqual(t, navigators(), authz.NavigatorReport{Tuples: 8, Wanted: 2, Written: 1, Stale: 1})
	assert.NilError(t, fga.Check(ctx, bob, authz.NamespaceDescribe, ns))
	assert.DeepEqual(t, navigators("--prune"), authz.NavigatorReport{Tuples: 9, Wanted: 2, Stale: 1, Pruned: 1})
	assert.Equal(t, nserr.CodeOf(fga.Check(ctx, authz.User("eve"), authz.NamespaceDescribe, ns)), nserr.PermissionDenied)
	assert.DeepEqual(t, navigators(), authz.NavigatorReport{Tuples: 8, Wanted: 2})
}
