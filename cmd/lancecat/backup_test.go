package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"

	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"

	"github.com/lancecat/lancecat/authz"
	"github.com/lancecat/lancecat/ident"
	"github.com/lancecat/lancecat/internal/testenv"
)

// TestAdminBackupRestore (issue 32, item 9): `lancecat admin backup` writes the grants of the
// server's OpenFGA store to a file and `admin restore` writes them into a store that does not
// exist yet (created with the model: the state after losing OpenFGA's database; a fresh store
// on the test's OpenFGA server), after which every tuple and every decision is back. A damaged
// file is refused before anything is written, and --dry-run writes nothing.
func TestAdminBackupRestore(t *testing.T) {
	url := testenv.OpenFGA(t)
	from, into := storeName("lancecat-test"), storeName("lancecat-test")
	root := t.TempDir()
	admin := func(store string, args ...string) (int, string, string) {
		var out, errb bytes.Buffer
		full := append([]string{"admin"}, args...)
		full = append(full, "--root", root, "--authz", "openfga", "--openfga-url", url, "--openfga-store", store)
		code := run(full, &out, &errb)
		return code, out.String(), errb.String()
	}
	ctx := context.Background()
	open := func(store string) *authz.OpenFGA {
		st, err := authz.EnsureStore(ctx, url, store)
		assert.NilError(t, err)
		f, err := authz.New(url, st)
		assert.NilError(t, err)
		return f
	}
	tuples := func(f *authz.OpenFGA) []string {
		var out []string
		token := ""
		for {
			page, next, err := f.ReadTuples(ctx, token)
			assert.NilError(t, err)
			for _, tp := range page {
				out = append(out, tp.String())
			}
			if next == "" {
				sort.Strings(out)
				return out
			}
			token = next
		}
	}

	// What a served catalog holds: an estate admin, a project > warehouse > namespace > table,
	// grants to a user and a team, managed access on the namespace.
	src := open(from)
	ada, bob := authz.User("ada"), authz.User("bob")
	assert.NilError(t, authz.GrantEstateAdmin(ctx, src, ada))
	p, w := authz.ProjectObject("p"), authz.WarehouseObject("w")
	ns, tb := authz.NamespaceObject(ident.ID{"sales"}), authz.TableObject(ident.ID{"sales", "orders"})
	assert.NilError(t, src.SeedCreate(ctx, ada, p, authz.Object{}))
	assert.NilError(t, src.SeedCreate(ctx, ada, w, p))
	assert.NilError(t, src.SeedCreate(ctx, ada, ns, w))
	assert.NilError(t, src.SeedCreate(ctx, ada, tb, ns))
	assert.NilError(t, src.Grant(ctx, bob.Subject(), "reader", tb))
	assert.NilError(t, src.Grant(ctx, authz.TeamMembers("eng"), "writer", ns))
	assert.NilError(t, src.Grant(ctx, authz.Everyone, "managed_access", ns))
	want := tuples(src)

	file := filepath.Join(t.TempDir(), "grants.jsonl")
	code, _, errs := admin(from, "backup", "--out", file)
	assert.Equal(t, code, 0, errs)
	assert.Check(t, is.Contains(errs, "backed up "+itoa(len(want))+" tuples"))
	entries, err := os.ReadDir(filepath.Dir(file))
	assert.NilError(t, err)
	assert.Equal(t, len(entries), 1, "no temporary file left beside the backup")

	// --dry-run checks the file and touches no store.
	code, out, errs := admin(into, "restore", file, "--dry-run", "--json")
	assert.Equal(t, code, 0, errs)
	var rep map[string]any
	assert.NilError(t, json.Unmarshal([]byte(out), &rep))
	assert.Equal(t, rep["tuples"], float64(len(want)))
	assert.Equal(t, rep["restored"], false)
	_, err = authz.OpenStore(ctx, url, into)
	assert.Check(t, err != nil, "a dry run creates no store")

	// A damaged file (the trailer cut off) is refused; nothing is written, no store is made.
	raw, err := os.ReadFile(file)
	assert.NilError(t, err)
	lines := strings.SplitAfter(string(raw), "\n")
	cut := filepath.Join(t.TempDir(), "cut.jsonl")
	assert.NilError(t, os.WriteFile(cut, []byte(strings.Join(lines[:len(lines)-2], "")), 0o600))
	code, _, errs = admin(into, "restore", cut)
	assert.Equal(t, code, 1)
	assert.Check(t, is.Contains(errs, "without its trailer: the backup is incomplete"))
	_, err = authz.OpenStore(ctx, url, into)
	assert.Check(t, err != nil, "a refused file creates no store")

	// Restore into the fresh store: every tuple, every decision.
	code, out, errs = admin(into, "restore", file)
	assert.Equal(t, code, 0, errs)
	assert.Check(t, is.Contains(out, "restored "+itoa(len(want))+" tuples"))
	dst := open(into)
	assert.DeepEqual(t, tuples(dst), want)
	code, out, errs = admin(into, "estate", "list", "--json")
	assert.Equal(t, code, 0, errs)
	var admins []string
	assert.NilError(t, json.Unmarshal([]byte(out), &admins))
	assert.DeepEqual(t, admins, []string{"user:ada"})
	assert.NilError(t, dst.Check(ctx, bob, authz.TableQuery, tb))
	assert.Assert(t, dst.Check(ctx, bob, authz.TableInsert, tb) != nil)
	assert.NilError(t, dst.Check(ctx, ada, authz.TableDrop, tb))

	// Again: idempotent.
	code, _, errs = admin(into, "restore", file)
	assert.Equal(t, code, 0, errs)
	assert.DeepEqual(t, tuples(dst), want)
}

func itoa(n int) string { return strconv.Itoa(n) }
