package governed

// The batch doors' per-entry authorization. Their path has no {id}: the tables are named in the
// body, so the guard chain cannot check them; each entry is authorized here, every one before
// anything is checked or committed, with the spec doors' oracle rule (guards.Oracle), so that a
// batch with one table the caller may not write is refused whole and says nothing about whether
// that table exists.

import (
	"context"

	"github.com/lancecat/lancecat/authz"
	"github.com/lancecat/lancecat/catalog"
	nserr "github.com/lancecat/lancecat/errors"
	"github.com/lancecat/lancecat/guards"
)

// entryActions are the actions a version entry of a transaction of each kind is checked with.
var entryActions = map[string]authz.Action{
	catalog.TxnCreateTableVersion:       authz.TableCreateVersion,
	catalog.TxnBatchCreateTableVersions: authz.TableBatchCreateVersion,
	catalog.TxnBatchCommitTables:        authz.TableBatchCommit,
}

// authorizeEntries checks every entry of a transaction of kind on its table: a version entry
// with its kind's action, a deletion, declaration or deregistration with the action of its own
// door (delete versions; declare, on the parent namespace; deregister). Authorization off:
// nothing to check.
func (g *Catalog) authorizeEntries(ctx context.Context, kind string, entries []catalog.VersionEntry) error {
	if !g.governed() {
		return nil
	}
	action, ok := entryActions[kind]
	if !ok {
		return nserr.InvalidInputf("transaction kind %q is not one of %s, %s, %s", kind,
			catalog.TxnCreateTableVersion, catalog.TxnBatchCreateTableVersions, catalog.TxnBatchCommitTables)
	}
	o := guards.Oracle{Authorizer: g.authorizer, Catalog: g}
	p := authz.PrincipalFrom(ctx)
	for _, e := range entries {
		a := action
		switch {
		case e.Delete != nil:
			a = authz.TableDeleteVersions
		case e.Declare != nil:
			a = authz.TableDeclare // the declare door's rule: create in the parent namespace
		case e.Deregister:
			a = authz.TableDeregister
		}
		if err := o.Authorize(ctx, guards.SpecDoor{Action: a, Kind: guards.KindTable}, p, e.Table); err != nil {
			return err
		}
	}
	return nil
}
