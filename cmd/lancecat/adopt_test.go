package main

import (
	"bytes"
	"context"
	"encoding/json"
	"path/filepath"
	"testing"

	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"

	"github.com/lancecat/lancecat/authz"
	"github.com/lancecat/lancecat/catalog"
	"github.com/lancecat/lancecat/ident"
	"github.com/lancecat/lancecat/internal/testenv"
	"github.com/lancecat/lancecat/namespace"
	"github.com/lancecat/lancecat/storage"
)

// TestAdminAdoptCommand (issue 33, item 1): `lancecat admin adopt` over a root written with
// authorization off: the dry run (the default) lists what it would write and writes nothing,
// --apply writes it, a second run has nothing left; misuse is exit 2, authorization off exit 1.
// (The governance matrix after adoption: app/adopt_test.go.)
func TestAdminAdoptCommand(t *testing.T) {
	url := testenv.OpenFGA(t)
	store := storeName("lancecat-test")
	root := filepath.Join(t.TempDir(), "catalog")
	ctx := context.Background()
	fs, err := storage.NewFS(root)
	assert.NilError(t, err)
	ns := namespace.New(fs, namespace.Options{RootURI: root})
	_, err = ns.CreateNamespace(ctx, ident.ID{"sales"}, nil, catalog.ModeCreate)
	assert.NilError(t, err)
	_, err = authz.EnsureStore(ctx, url, store) // a server started with --authz openfga made it
	assert.NilError(t, err)

	adopt := func(args ...string) (int, string, string) {
		var out, errb bytes.Buffer
		full := append([]string{"admin", "adopt"}, args...)
		full = append(full, "--root", root, "--authz", "openfga", "--openfga-url", url, "--openfga-store", store)
		code := run(full, &out, &errb)
		return code, out.String(), errb.String()
	}
	type report struct {
		Applied bool
		Objects int
		Changes []struct{ Object, Parent, Owner string }
	}
	parse := func(out string) report {
		var r report
		assert.NilError(t, json.Unmarshal([]byte(out), &r), out)
		return r
	}

	code, out, errs := adopt("--owner", "user:ada", "--json")
	assert.Equal(t, code, 0, errs)
	r := parse(out)
	assert.Check(t, !r.Applied)
	assert.Equal(t, r.Objects, 1)
	assert.Equal(t, len(r.Changes), 1)
	assert.Check(t, is.Equal(r.Changes[0].Object, "namespace:sales"))
	assert.Check(t, is.Equal(r.Changes[0].Parent, "catalog:lancecat"))
	assert.Check(t, is.Equal(r.Changes[0].Owner, "user:ada"))
	code, _, _ = adopt("--owner", "user:ada", "--json")
	assert.Equal(t, code, 0)
	assert.Equal(t, len(parse(out).Changes), 1, "the dry run wrote nothing")

	code, out, errs = adopt("--owner", "user:ada", "--apply")
	assert.Equal(t, code, 0, errs)
	assert.Check(t, is.Contains(out, "namespace:sales: wrote its edge to catalog:lancecat; owner user:ada"))
	assert.Check(t, is.Contains(errs, "read 1 objects, adopted 1"))
	code, out, errs = adopt("--owner", "user:ada", "--apply", "--json")
	assert.Equal(t, code, 0, errs)
	assert.Equal(t, len(parse(out).Changes), 0, "idempotent")

	code, _, errs = adopt("--owner", "user:*")
	assert.Equal(t, code, 2)
	assert.Check(t, is.Contains(errs, "everyone (user:*) cannot own objects"))
	var o, e bytes.Buffer
	assert.Equal(t, run([]string{"admin", "adopt", "--root", root}, &o, &e), 1)
	assert.Check(t, is.Contains(e.String(), "authorization is off"))
}
