package app

import (
	"context"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"gotest.tools/v3/assert"

	"github.com/lancecat/lancecat/authz"
	"github.com/lancecat/lancecat/catalog"
	"github.com/lancecat/lancecat/catalog/catalogtest"
	"github.com/lancecat/lancecat/client"
	"github.com/lancecat/lancecat/client/nsclient"
	nserr "github.com/lancecat/lancecat/errors"
	"github.com/lancecat/lancecat/ident"
)

// batchAuthzEnv is a server on cfg (openFGAConfig) where alice (estate admin; ac is her client, admin
// its catalog) has made tables (each namespace first), and carol may write ns$a.
func batchAuthzEnv(t *testing.T, cfg Config, tables ...ident.ID) (*specEnv, *client.Client, catalog.Catalog) {
	t.Helper()
	e := newSpecEnv(t, cfg)
	ctx := context.Background()
	key, _, err := e.keys.Create(ctx, authz.User("alice"), "test")
	assert.NilError(t, err)
	ac, err := client.New(e.url, client.WithAPIKey(key))
	assert.NilError(t, err)
	admin := catalogtest.HTTP(ac)
	made := map[string]bool{}
	for _, id := range tables {
		if ns := id[0]; !made[ns] {
			_, err := admin.CreateNamespace(ctx, ident.ID{ns}, nil, catalog.ModeCreate)
			assert.NilError(t, err)
			made[ns] = true
		}
		_, _, err := admin.CreateTable(ctx, id, catalog.NewTable{Schema: batchSchema()})
		assert.NilError(t, err)
	}
	assert.NilError(t, e.gov.authorizer.Grant(ctx, authz.User("carol").Subject(), "writer", authz.TableObject([]string{"ns", "a"})))
	return e, ac, admin
}

// TestBatchAuthorization: the batch doors have no {id}: each entry is checked (can_write_data on
// its table) before anything is written. A batch with one table the caller may not write is
// refused whole (403) and commits nothing; a table that does not exist answers the same 403 to
// that caller (no existence oracle); the writer's own batch commits. A transaction is described
// by who reads its namespace, and by no one else.
func TestBatchAuthorization(t *testing.T) {
	e, ac, admin := batchAuthzEnv(t, openFGAConfig(t, "lancecat-batch"), ident.ID{"ns", "a"}, ident.ID{"ns", "b"})
	ctx := context.Background()
	carol := e.as(t, authz.User("carol"))
	bob := e.as(t, authz.User("bob"))

	stage := func(name string) nsclient.CreateTableVersionEntry {
		t.Helper()
		en, ok, err := catalogtest.StageNext(ctx, admin, ident.ID{"ns", name})
		assert.NilError(t, err)
		assert.Assert(t, ok)
		return nsclient.CreateTableVersionEntry{Id: en.Table, Version: en.Version, ManifestPath: en.ManifestPath}
	}
	latest := func(name string) int64 {
		t.Helper()
		d, err := ac.Spec.DescribeTableVersionWithResponse(ctx, "ns$"+name, nil, nsclient.DescribeTableVersionRequest{})
		assert.NilError(t, err)
		expect(t, d.StatusCode(), d.Body, 200, 0)
		return d.JSON200.Version.Version
	}

	ea, eb := stage("a"), stage("b")
	missing := nsclient.CreateTableVersionEntry{Id: []string{"ns", "zzz"}, Version: 2, ManifestPath: "x"}
	for _, entries := range [][]nsclient.CreateTableVersionEntry{{ea, eb}, {eb, ea}, {ea, missing}} {
		r, err := carol.BatchCreateTableVersionsWithResponse(ctx, nil, nsclient.BatchCreateTableVersionsRequest{Entries: entries})
		assert.NilError(t, err)
		expect(t, r.StatusCode(), r.Body, 403, nserr.PermissionDenied)
		ops := make([]nsclient.CommitTableOperation, len(entries))
		for i, en := range entries {
			ops[i] = nsclient.CommitTableOperation{CreateTableVersion: &nsclient.CreateTableVersionRequest{Id: &en.Id, Version: en.Version, ManifestPath: en.ManifestPath}}
		}
		c, err := carol.BatchCommitTablesWithResponse(ctx, nil, nsclient.BatchCommitTablesRequest{Operations: ops})
		assert.NilError(t, err)
		expect(t, c.StatusCode(), c.Body, 403, nserr.PermissionDenied)
		assert.Equal(t, latest("a"), int64(1), "nothing of a refused batch is committed")
		assert.Equal(t, latest("b"), int64(1))
	}

	r, err := carol.BatchCreateTableVersionsWithResponse(ctx, nil, nsclient.BatchCreateTableVersionsRequest{Entries: []nsclient.CreateTableVersionEntry{ea}})
	assert.NilError(t, err)
	expect(t, r.StatusCode(), r.Body, 200, 0)
	assert.Equal(t, latest("a"), int64(2))
	txn := *r.JSON200.TransactionId

	d, err := ac.Spec.DescribeTransactionWithResponse(ctx, txn, nil, nsclient.DescribeTransactionRequest{})
	assert.NilError(t, err)
	expect(t, d.StatusCode(), d.Body, 200, 0)
	assert.Equal(t, d.JSON200.Status, catalog.TxnSucceeded)
	d, err = bob.DescribeTransactionWithResponse(ctx, txn, nil, nsclient.DescribeTransactionRequest{})
	assert.NilError(t, err)
	expect(t, d.StatusCode(), d.Body, 403, nserr.PermissionDenied)
	owner, value := "owner", "bob"
	al, err := bob.AlterTransactionWithResponse(ctx, txn, nil, nsclient.AlterTransactionRequest{Actions: []nsclient.AlterTransactionAction{
		{SetPropertyAction: &nsclient.AlterTransactionSetProperty{Key: &owner, Value: &value}},
	}})
	assert.NilError(t, err)
	expect(t, al.StatusCode(), al.Body, 403, nserr.PermissionDenied)
}

func batchSchema() *arrow.Schema {
	return arrow.NewSchema([]arrow.Field{{Name: "k", Type: arrow.PrimitiveTypes.Int64, Nullable: true}}, nil)
}
