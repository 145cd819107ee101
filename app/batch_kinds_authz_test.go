package app

import (
	"context"
	"encoding/json"
	"io/fs"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"gotest.tools/v3/assert"

	"github.com/lancecat/lancecat/authz"
	"github.com/lancecat/lancecat/catalog/catalogtest"
	"github.com/lancecat/lancecat/client/nsclient"
	nserr "github.com/lancecat/lancecat/errors"
	"github.com/lancecat/lancecat/ident"
)

// TestBatchKindsAuthorization: inside batch_commit_tables, a declare_table entry is checked with
// the declare door's rule (create in its namespace) and a deregister_table entry with the
// deregister door's (own the table), against real OpenFGA. carol may write table ns$a but not
// create in ns nor drop ns$b: a batch mixing her allowed version commit with a forbidden declare,
// or with a forbidden deregister, is 403 code 15 and commits neither entry, and leaves no file
// behind in the root; once granted, the same batch commits every entry. A declare into a
// namespace the caller cannot see answers exactly what the plain declare door answers, the same
// whether that namespace exists or not (no existence oracle); a deregister of a table the caller
// cannot see likewise answers what the plain deregister door answers, existing or not.
func TestBatchKindsAuthorization(t *testing.T) {
	cfg := openFGAConfig(t, "lancecat-batchkinds")
	e, ac, admin := batchAuthzEnv(t, cfg, ident.ID{"ns", "a"}, ident.ID{"ns", "b"}, ident.ID{"secret", "s"})
	ctx := context.Background()
	carol := e.as(t, authz.User("carol"))
	bob := e.as(t, authz.User("bob"))

	ea, ok, err := catalogtest.StageNext(ctx, admin, ident.ID{"ns", "a"})
	assert.NilError(t, err)
	assert.Assert(t, ok)
	commitA := nsclient.CommitTableOperation{CreateTableVersion: &nsclient.CreateTableVersionRequest{
		Id: ptr([]string(ea.Table)), Version: int64(ea.Version), ManifestPath: ea.ManifestPath,
	}}
	declare := func(id ...string) nsclient.CommitTableOperation {
		return nsclient.CommitTableOperation{DeclareTable: &nsclient.DeclareTableRequest{Id: &id}}
	}
	deregister := func(id ...string) nsclient.CommitTableOperation {
		return nsclient.CommitTableOperation{DeregisterTable: &nsclient.DeregisterTableRequest{Id: &id}}
	}
	latestA := func() int64 {
		t.Helper()
		d, err := ac.Spec.DescribeTableVersionWithResponse(ctx, "ns$a", nil, nsclient.DescribeTableVersionRequest{})
		assert.NilError(t, err)
		expect(t, d.StatusCode(), d.Body, 200, 0)
		return d.JSON200.Version.Version
	}
	exists := func(id string) bool {
		t.Helper()
		r, err := ac.Spec.TableExistsWithResponse(ctx, id, nil, nsclient.TableExistsRequest{})
		assert.NilError(t, err)
		return r.StatusCode() == 200
	}
	// files is every file under the root (data and control): a refused batch adds or removes
	// none, so it staged nothing and claimed nothing.
	files := func() []string {
		t.Helper()
		var out []string
		assert.NilError(t, filepath.WalkDir(cfg.Root, func(path string, d fs.DirEntry, err error) error {
			if err == nil && !d.IsDir() {
				out = append(out, path)
			}
			return err
		}))
		slices.Sort(out)
		return out
	}
	batch := func(c *nsclient.ClientWithResponses, ops ...nsclient.CommitTableOperation) (int, []byte) {
		t.Helper()
		r, err := c.BatchCommitTablesWithResponse(ctx, nil, nsclient.BatchCommitTablesRequest{Operations: ops})
		assert.NilError(t, err)
		return r.StatusCode(), r.Body
	}

	before := files()
	for _, tc := range []struct {
		name string
		ops  []nsclient.CommitTableOperation
	}{
		{"a version commit and a declare in a namespace carol may not create in", []nsclient.CommitTableOperation{commitA, declare("ns", "new")}},
		{"the declare first", []nsclient.CommitTableOperation{declare("ns", "new"), commitA}},
		{"a version commit and a deregister of a table carol may not drop", []nsclient.CommitTableOperation{commitA, deregister("ns", "b")}},
		{"the deregister first", []nsclient.CommitTableOperation{deregister("ns", "b"), commitA}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			status, body := batch(carol, tc.ops...)
			expect(t, status, body, 403, nserr.PermissionDenied)
			assert.Equal(t, latestA(), int64(1), "the allowed entry of a refused batch committed")
			assert.Assert(t, !exists("ns$new"), "the forbidden declare committed")
			assert.Assert(t, exists("ns$b"), "the forbidden deregister committed")
			assert.DeepEqual(t, files(), before)
		})
	}

	// A declare into a namespace the caller cannot see: the batch answers what the plain declare
	// door answers, and the same for a namespace that exists (secret) and one that does not.
	t.Run("declare into an unseen namespace", func(t *testing.T) {
		type answer struct {
			Status int
			Code   int
			Detail string
		}
		read := func(status int, body []byte, ns string) answer {
			var p nserr.Problem
			assert.NilError(t, json.Unmarshal(body, &p), string(body))
			// The names the caller sent are theirs to see; the rest of the answer must not differ.
			return answer{status, p.Code, strings.ReplaceAll(p.Detail, ns, "<ns>")}
		}
		for _, who := range []struct {
			name string
			c    *nsclient.ClientWithResponses
		}{{"bob, who holds nothing", bob}, {"carol, who sees ns only", carol}} {
			var answers []answer
			for _, ns := range []string{"secret", "nosuch"} {
				status, body := batch(who.c, declare(ns, "t"))
				got := read(status, body, ns)
				d, err := who.c.DeclareTableWithResponse(ctx, ns+"$t", nil, nsclient.DeclareTableRequest{})
				assert.NilError(t, err)
				plain := read(d.StatusCode(), d.Body, ns)
				assert.DeepEqual(t, got, plain)
				assert.Equal(t, got.Status, 403, "%s into %s: %s", who.name, ns, body)
				answers = append(answers, got)
			}
			assert.DeepEqual(t, answers[0], answers[1])
			assert.Assert(t, !exists("secret$t"))

			// A deregister of a table the caller cannot see: the same, against the plain
			// deregister door, for a table that exists (secret$s) and one that does not.
			answers = nil
			for _, id := range []string{"secret$s", "secret$none"} {
				status, body := batch(who.c, deregister(strings.Split(id, "$")...))
				got := read(status, body, id)
				d, err := who.c.DeregisterTableWithResponse(ctx, id, nil, nsclient.DeregisterTableRequest{})
				assert.NilError(t, err)
				assert.DeepEqual(t, got, read(d.StatusCode(), d.Body, id))
				assert.Equal(t, got.Status, 403, "%s deregistering %s: %s", who.name, id, body)
				answers = append(answers, got)
			}
			assert.DeepEqual(t, answers[0], answers[1])
			assert.Assert(t, exists("secret$s"))
		}
		assert.DeepEqual(t, files(), before)
	})

	// Granted create in ns and ownership of ns$b, the same batch commits every entry, and the
	// declared table is carol's.
	t.Run("allowed", func(t *testing.T) {
		assert.NilError(t, e.gov.authorizer.Grant(ctx, authz.User("carol").Subject(), "writer", authz.NamespaceObject([]string{"ns"})))
		assert.NilError(t, e.gov.authorizer.Grant(ctx, authz.User("carol").Subject(), "owner", authz.TableObject([]string{"ns", "b"})))
		status, body := batch(carol, commitA, declare("ns", "new"), deregister("ns", "b"))
		expect(t, status, body, 200, 0)
		assert.Equal(t, latestA(), int64(2))
		assert.Assert(t, exists("ns$new"))
		assert.Assert(t, !exists("ns$b"))
		err := e.gov.authorizer.Check(ctx, authz.User("carol"), authz.TableDrop, authz.TableObject([]string{"ns", "new"}))
		assert.NilError(t, err, "the declared table's owner is the batch's caller")
	})
}
