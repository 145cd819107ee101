package governed

// The batch door's declare_table and deregister_table entries (namespace/batch_catalog.go) keep
// the lifecycle rules of the plain doors.

import (
	"context"
	"strconv"

	"github.com/lancecat/lancecat/authz"
	"github.com/lancecat/lancecat/catalog"
	"github.com/lancecat/lancecat/governance"
	"github.com/lancecat/lancecat/guards"
	"github.com/lancecat/lancecat/ident"
	"github.com/lancecat/lancecat/registry"
)

// CommitTableVersions commits the batch in the inner catalog. Before anything is written, every
// entry is authorized (authorizeEntries), then a declared id must not be in the live trash and a
// deregistered table must not be protected (unless catalog.WithForce), as the plain doors check.
// Once the batch committed, each declared table is
// seeded with the caller as owner (after whatever tuples its id still held are revoked), each
// deregistered table's records are cleared and its tuples revoked, and the events recorded. A
// follow-up that fails cannot undo a committed batch (its all-or-none): every entry's follow-ups
// are still tried, and the answer is nserr.Committed naming the transaction, each table and what
// is missing, with the transaction and the versions as the batch committed them.
func (g *Catalog) CommitTableVersions(ctx context.Context, kind string, entries []catalog.VersionEntry, opts ...catalog.Option) (catalog.Transaction, []catalog.TableVersion, error) {
	if err := g.authorizeEntries(ctx, kind, entries); err != nil {
		return catalog.Transaction{}, nil, err
	}
	force := catalog.Resolve(opts...).Force
	for _, e := range entries {
		switch {
		case e.Declare != nil:
			if err := guards.NotTrashed(ctx, g.liveTrash(), e.Table); err != nil {
				return catalog.Transaction{}, nil, err
			}
		case e.Deregister:
			if err := guards.NotProtected(ctx, g.protection(), registry.KindTable, e.Table, force); err != nil {
				return catalog.Transaction{}, nil, err
			}
		}
	}
	txn, vs, err := g.Inner.CommitTableVersions(ctx, kind, entries, opts...)
	if err != nil {
		return txn, vs, err
	}
	// The batch stands as a whole: every entry's follow-up is tried, and those that fail are the
	// answer together, naming the transaction.
	txnID := txn.ID.Join(g.delimiter)
	var fs []followUp
	for i, e := range entries {
		uri := ""
		if i < len(vs) && vs[i].Table != nil {
			uri = vs[i].Table.URI
		}
		name := e.Table.Join(g.delimiter)
		attrs := map[string]string{"location": uri, "transaction": txnID}
		switch {
		case e.Declare != nil:
			if g.governed() {
				obj := authz.TableObject(e.Table)
				_, err := g.authorizer.RevokeAll(ctx, obj)
				if err == nil {
					err = g.authorizer.SeedCreate(ctx, authz.PrincipalFrom(ctx), obj, parentObject(e.Table))
				}
				if err != nil {
					fs = append(fs, followUp{missing: "the owner of the declared table " + name + " could not be recorded", remedy: remedyOwnerless, cause: err})
				}
			}
			// Declared, owned or not: it stands, and is recorded as any change.
			g.changed(ctx, governance.EventTableDeclared, registry.KindTable, e.Table, attrs)
		case e.Deregister:
			for _, f := range g.destroyFollowUps(ctx, registry.KindTable, e.Table, g.clearTableRecords, governance.EventTableDeregistered, attrs, authz.TableObject(e.Table)) {
				f.missing = "the deregistered table " + name + ": " + f.missing
				fs = append(fs, f)
			}
		case e.Delete != nil:
			g.changed(ctx, governance.EventTableVersionsDeleted, registry.KindTable, e.Table, map[string]string{"transaction": txnID})
		case i < len(vs):
			va := map[string]string{"transaction": txnID, "version": strconv.FormatUint(vs[i].Version, 10)}
			if e.Branch != "" {
				va["branch"] = e.Branch
			}
			g.changed(ctx, governance.EventTableVersionCreated, registry.KindTable, e.Table, va)
		}
	}
	if err := committed("the batch committed", txnID, fs); err != nil {
		return txn, vs, err
	}
	return txn, vs, nil
}

// AlterTransaction alters transaction id in the inner catalog and records the change on the
// transaction's namespace.
func (g *Catalog) AlterTransaction(ctx context.Context, id ident.ID, actions []catalog.TransactionAction) (catalog.Transaction, error) {
	txn, err := g.Inner.AlterTransaction(ctx, id, actions)
	if err == nil && !id.IsRoot() {
		g.changed(ctx, governance.EventTransactionAltered, registry.KindNamespace, id.Parent(),
			map[string]string{"transaction": id.Join(g.delimiter), "status": txn.Status})
	}
	return txn, err
}
