package governed

// The materialized views and computed columns (package mview) with the authorization beyond
// their door: a view's rows are its source's, so creating or refreshing one reads the source
// with the caller's authority and requires the source's read door (table query), checked with
// the spec doors' oracle rule (guards.Oracle). The door itself (create or refresh on the view's
// id) is the guard chain's. The writes the service makes go through the catalog it was given
// (the governed catalog), so their tuples and events are kept there.

import (
	"context"

	"github.com/lancecat/lancecat/authz"
	"github.com/lancecat/lancecat/catalog"
	"github.com/lancecat/lancecat/guards"
	"github.com/lancecat/lancecat/ident"
)

// ViewService is the views service the decorator wraps (*mview.Service over this catalog).
type ViewService interface {
	// Create creates view id for sql (unless withNoData, with a first refresh job) and answers
	// the view table's version and the job's id.
	Create(ctx context.Context, id ident.ID, sql string, withNoData bool) (uint64, string, error)
	// Refresh starts a refresh job of view id from the source's version srcVersion (nil: latest).
	Refresh(ctx context.Context, id ident.ID, srcVersion *int64) (string, error)
	// DeclareComputed and Backfill declare and fill computed columns of table t, committing
	// through t (catalog.Table.CommitPrepared).
	DeclareComputed(ctx context.Context, t catalog.Table, cols []catalog.ComputedColumn) (uint64, error)
	Backfill(ctx context.Context, t catalog.Table, req catalog.BackfillRequest) (string, error)
	// Source is the source table of view id; QuerySource the one sql would read as view's.
	Source(ctx context.Context, id ident.ID) (ident.ID, error)
	QuerySource(view ident.ID, sql string) (ident.ID, error)
}

// Views is a ViewService whose creates and refreshes require the caller to read the source.
type Views struct {
	ViewService
	g *Catalog
}

// Views wraps inner, the views service over g, with the source read check.
func (g *Catalog) Views(inner ViewService) *Views { return &Views{ViewService: inner, g: g} }

// Create checks that the caller may read the source sql names, then creates the view. A query
// that does not parse is refused before anything is checked.
func (v *Views) Create(ctx context.Context, id ident.ID, sql string, withNoData bool) (uint64, string, error) {
	src, err := v.QuerySource(id, sql)
	if err != nil {
		return 0, "", err
	}
	if err := v.g.authorizeSourceRead(ctx, src); err != nil {
		return 0, "", err
	}
	return v.ViewService.Create(ctx, id, sql, withNoData)
}

// Refresh checks that the caller may read view id's source, then starts the refresh.
func (v *Views) Refresh(ctx context.Context, id ident.ID, srcVersion *int64) (string, error) {
	src, err := v.Source(ctx, id)
	if err != nil {
		return "", err
	}
	if err := v.g.authorizeSourceRead(ctx, src); err != nil {
		return "", err
	}
	return v.ViewService.Refresh(ctx, id, srcVersion)
}

// authorizeSourceRead checks that the caller may query table src (authorization off: nothing
// to check).
func (g *Catalog) authorizeSourceRead(ctx context.Context, src ident.ID) error {
	if !g.governed() {
		return nil
	}
	o := guards.Oracle{Authorizer: g.authorizer, Catalog: g}
	return o.Authorize(ctx, guards.SpecDoor{Action: authz.TableQuery, Kind: guards.KindTable}, authz.PrincipalFrom(ctx), src)
}
