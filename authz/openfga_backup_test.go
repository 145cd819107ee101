package authz_test

import (
	"bytes"
	"context"
	"fmt"
	"sort"
	"strings"
	"testing"

	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"

	"github.com/lancecat/lancecat/authz"
	nserr "github.com/lancecat/lancecat/errors"
	"github.com/lancecat/lancecat/ident"
)

// allTuples reads every tuple of f's store, sorted.
func allTuples(t *testing.T, f *authz.OpenFGA) []string {
	t.Helper()
	var out []string
	token := ""
	for {
		page, next, err := f.ReadTuples(context.Background(), token)
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

// TestBackupRestore (issue 32, item 9): the grants — the one state not in the object store — are
// backed up from one store and restored into a fresh one: every tuple (structural parents,
// owners, navigators, user, team and role grants) arrives, every decision is the same, and a second
// restore changes nothing. More tuples than one write or one read page hold, so paging and
// batching are exercised.
func TestBackupRestore(t *testing.T) {
	ctx := context.Background()
	src := newFGA(t)
	e := seedEstate(t, src)
	bob, carol, dave := authz.User("bob"), authz.User("carol"), authz.User("dave")
	assert.NilError(t, src.Grant(ctx, bob.Subject(), "reader", e.tb))
	assert.NilError(t, src.Grant(ctx, carol.Subject(), "member", authz.TeamObject("analysts")))
	assert.NilError(t, src.Grant(ctx, authz.TeamMembers("analysts"), "writer", e.nsAB))
	assert.NilError(t, src.Grant(ctx, dave.Subject(), "assignee", authz.RoleObject("ops")))
	assert.NilError(t, src.Grant(ctx, authz.RoleAssignees("ops"), "maintainer", e.warehouse))
	for i := range 130 { // > one write (100) and > one read page (100)
		tb := authz.TableObject(ident.ID{"a", "b", fmt.Sprintf("t%03d", i)})
		assert.NilError(t, src.SeedCreate(ctx, e.creator, tb, e.nsAB))
		if i%3 == 0 {
			assert.NilError(t, src.Grant(ctx, bob.Subject(), "reader", tb))
		}
	}
	want := allTuples(t, src)
	assert.Assert(t, len(want) > 300, "%d tuples", len(want))

	var backup bytes.Buffer
	n, err := src.Backup(ctx, &backup)
	assert.NilError(t, err)
	assert.Equal(t, n, len(want))
	lines := strings.Split(strings.TrimSuffix(backup.String(), "\n"), "\n")
	assert.Equal(t, len(lines), n+2, "header, one line per tuple, trailer")
	assert.Check(t, is.Contains(lines[0], `"lancecat_backup":"openfga-tuples","format":1`))
	assert.Check(t, is.Equal(lines[len(lines)-1], fmt.Sprintf(`{"end":true,"tuples":%d}`, n)))

	h, checked, err := authz.ReadBackup(bytes.NewReader(backup.Bytes()))
	assert.NilError(t, err)
	assert.Equal(t, checked, n)
	assert.Equal(t, h.StoreID, src.Store().ID)

	dst := newFGA(t) // a fresh store: what is left after losing OpenFGA's database
	assert.DeepEqual(t, allTuples(t, dst), []string(nil))
	restored, err := dst.Restore(ctx, bytes.NewReader(backup.Bytes()))
	assert.NilError(t, err)
	assert.Equal(t, restored, n)
	assert.DeepEqual(t, allTuples(t, dst), want)

	// Every decision the same on both stores.
	stranger := authz.User("stranger")
	for _, p := range []authz.Principal{e.creator, bob, carol, dave, stranger} {
		for _, o := range []authz.Object{e.project, e.warehouse, e.nsA, e.nsAB, e.tb, authz.TableObject(ident.ID{"a", "b", "t003"}), authz.TableObject(ident.ID{"a", "b", "t004"})} {
			for _, a := range []authz.Action{authz.TableQuery, authz.TableInsert, authz.TableDrop} {
				if o.Type != authz.TypeTable {
					continue
				}
				assert.Check(t, is.Equal(allowed(src.Check(ctx, p, a, o)), allowed(dst.Check(ctx, p, a, o))), "%s %s %s", p, a, o)
			}
		}
	}
	assert.Check(t, allowed(dst.Check(ctx, bob, authz.TableQuery, e.tb)))
	assert.Check(t, allowed(dst.Check(ctx, carol, authz.TableInsert, e.tb)), "team grant, through the team's membership")
	assert.Check(t, !allowed(dst.Check(ctx, stranger, authz.TableQuery, e.tb)))

	// Idempotent: again, nothing changes.
	_, err = dst.Restore(ctx, bytes.NewReader(backup.Bytes()))
	assert.NilError(t, err)
	assert.DeepEqual(t, allTuples(t, dst), want)
}

func allowed(err error) bool { return err == nil }

// TestReadBackupRefuses: a file that is not a complete, well-formed grants backup of this model is
// refused, naming the line, before anything is written.
func TestReadBackupRefuses(t *testing.T) {
	header := `{"lancecat_backup":"openfga-tuples","format":1,"store_id":"s","model_id":"m","created":"2026-12-03T00:00:00Z"}`
	tuple := `{"user":"user:bob","relation":"reader","object":"table:a$b"}`
	for _, tc := range []struct{ name, file, want string }{
		{"empty", ``, "the file is empty"},
		{"not a backup", `{"hello":"world"}`, "line 1: not a lancecat grants backup"},
		{"newer format", strings.Replace(header, `"format":1`, `"format":2`, 1), "line 1: backup format 2; this lancecat reads format 1"},
		{"cut short", header + "\n" + tuple + "\n", "ends after 1 tuples without its trailer: the backup is incomplete"},
		{"count differs", header + "\n" + tuple + "\n" + `{"end":true,"tuples":2}`, "line 3: the trailer counts 2 tuples, the file holds 1"},
		{"data after the trailer", header + "\n" + `{"end":true,"tuples":0}` + "\n" + tuple, "line 3: data after the trailer"},
		{"unknown field", header + "\n" + `{"user":"user:bob","relation":"reader","object":"table:a$b","condition":"x"}`, `line 2: json: unknown field "condition"`},
		{"unknown type", header + "\n" + `{"user":"user:bob","relation":"reader","object":"bucket:x"}`, `line 2: bucket:x#reader@user:bob: object "bucket:x" is no object of the model`},
		{"unknown relation", header + "\n" + `{"user":"user:bob","relation":"superuser","object":"table:a$b"}`, `line 2: table:a$b#superuser@user:bob: a table has no relation "superuser"`},
		{"subject form the model refuses", header + "\n" + `{"user":"user:*","relation":"owner","object":"table:a$b"}`, `"owner" on a table cannot name "user:*"`},
		{"userset of no relation", header + "\n" + `{"user":"team:x#boss","relation":"reader","object":"table:a$b"}`, `user "team:x#boss" names no relation of a team`},
		{"not JSON", header + "\n" + `user:bob reader table:a`, "line 2: invalid character"},
		{"line too long", header + "\n" + `{"user":"user:` + strings.Repeat("x", 70<<10) + `"}`, "a line is longer than"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, _, err := authz.ReadBackup(strings.NewReader(tc.file))
			assert.ErrorContains(t, err, tc.want)
			assert.Check(t, is.Equal(nserr.CodeOf(err), nserr.InvalidInput))
		})
	}
	_, n, err := authz.ReadBackup(strings.NewReader(header + "\n" + tuple + "\n" + `{"end":true,"tuples":1}` + "\n"))
	assert.NilError(t, err)
	assert.Equal(t, n, 1)
}

// FuzzReadBackup: whatever the file, ReadBackup answers without panicking, and a file it accepts
// holds a header, exactly the tuples it counts, and the trailer.
func FuzzReadBackup(f *testing.F) {
	header := `{"lancecat_backup":"openfga-tuples","format":1,"store_id":"s","model_id":"m","created":"2026-12-03T00:00:00Z"}`
	f.Add(header + "\n" + `{"user":"user:bob","relation":"reader","object":"table:a$b"}` + "\n" + `{"end":true,"tuples":1}` + "\n")
	f.Add(header + "\n" + `{"user":"team:x#member","relation":"writer","object":"namespace:a"}` + "\n" + `{"end":true,"tuples":1}`)
	f.Add(header + "\n" + `{"end":true,"tuples":0}`)
	f.Add(`{"end":true}`)
	f.Fuzz(func(t *testing.T, file string) {
		_, n, err := authz.ReadBackup(strings.NewReader(file))
		if err != nil {
			assert.Check(t, nserr.Coded(err) || strings.Contains(err.Error(), "backup:"), "%v", err)
			return
		}
		lines := 0
		for _, l := range strings.Split(file, "\n") {
			if strings.TrimSpace(l) != "" {
				lines++
			}
		}
		assert.Check(t, lines >= n+2, "%d lines for %d tuples", lines, n)
	})
}
