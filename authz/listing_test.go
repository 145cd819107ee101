package authz_test

import (
	"context"
	"fmt"
	"slices"
	"testing"

	"golang.org/x/sync/errgroup"
	"gotest.tools/v3/assert"

	"github.com/lancecat/lancecat/authz"
	nserr "github.com/lancecat/lancecat/errors"
	"github.com/lancecat/lancecat/ident"
	"github.com/lancecat/lancecat/internal/testenv"
)

// TestListingFastPathMatchesPerItem: over an estate that exercises every relation of the model a
// listing can meet — estate admin and every catalog rung, project admin and member, warehouse
// rungs, every namespace and table rung, a team grant, managed_access switched on — each caller's
// every listing (tables at the root, in a namespace, in a warehouse's namespace, in a nested one;
// namespaces in a namespace and at the root; every table of the estate at once) filtered by
// FilterListing with parents (the short-circuit), without parents (ListObjects, then batch
// checks), with ListObjects off (batch checks only) and with ListObjects always cut short (its
// allows only, the rest batch-checked) keeps exactly what one Check per item allows.
func TestListingFastPathMatchesPerItem(t *testing.T) {
	url := testenv.OpenFGA(t)
	f, store := newFGAAt(t, url)
	batchOnly, err := authz.New(url, store, quiet, authz.WithListObjectsBounds(authz.ListObjectsBounds{}))
	assert.NilError(t, err)
	cutShort, err := authz.New(url, store, quiet, authz.WithListObjectsBounds(authz.ListObjectsBounds{MaxResults: 1, Deadline: authz.DefaultListObjectsBounds.Deadline}))
	assert.NilError(t, err)
	ctx := context.Background()
	creator := authz.User("creator")
	ns := func(parts ...string) authz.Object { return authz.NamespaceObject(ident.ID(parts)) }
	tb := func(parts ...string) authz.Object { return authz.TableObject(ident.ID(parts)) }

	project, warehouse := authz.ProjectObject("p"), authz.WarehouseObject("w")
	assert.NilError(t, f.SeedCreate(ctx, creator, project, authz.Object{}))
	assert.NilError(t, f.SeedCreate(ctx, creator, warehouse, project))

	// The hierarchy, parents before children, as the catalog's creates seed it.
	type node struct{ obj, parent authz.Object }
	var nodes []node
	add := func(obj, parent authz.Object) { nodes = append(nodes, node{obj, parent}) }
	add(ns("a"), authz.Catalog)
	add(ns("w1"), warehouse)
	add(ns("w1", "x"), ns("w1"))
	for i := range 18 {
		add(ns("a", fmt.Sprintf("n%02d", i)), ns("a"))
	}
	for _, r := range []string{"r1", "r2"} {
		add(tb(r), authz.Catalog)
	}
	for i := range 20 {
		add(tb("a", fmt.Sprintf("t%02d", i)), ns("a"))
		add(tb("w1", fmt.Sprintf("t%02d", i)), ns("w1"))
	}
	add(tb("a", "n01", "t"), ns("a", "n01"))
	add(tb("w1", "x", "t"), ns("w1", "x"))
	// Seed level by level (a parent exists before its children), in parallel within a level.
	for _, level := range [][]node{nodes[:2], nodes[2:21], nodes[21:]} {
		g, gctx := errgroup.WithContext(ctx)
		g.SetLimit(8)
		for _, n := range level {
			g.Go(func() error { return f.SeedCreate(gctx, creator, n.obj, n.parent) })
		}
		assert.NilError(t, g.Wait())
	}

	// Callers, one per relation a listing can meet.
	callers := []authz.Principal{creator, authz.User("stranger")}
	grant := func(name string, subject authz.Subject, relation string, obj authz.Object) {
		assert.NilError(t, f.Grant(ctx, subject, relation, obj))
		if p := authz.Principal(subject); !slices.Contains(callers, p) && name == "" {
			callers = append(callers, p)
		}
	}
	assert.NilError(t, authz.GrantEstateAdmin(ctx, f, authz.User("estate-admin")))
	callers = append(callers, authz.User("estate-admin"))
	for _, rung := range []string{"writer", "reader", "validator", "maintainer"} {
		grant("", authz.User("catalog-"+rung).Subject(), rung, authz.Catalog)
	}
	grant("", authz.User("project-admin").Subject(), "admin", project)
	grant("", authz.User("project-member").Subject(), "member", project)
	for _, rung := range []string{"owner", "writer", "reader", "validator", "maintainer", "manage_grants", "pass_grants"} {
		grant("", authz.User("warehouse-"+rung).Subject(), rung, warehouse)
		grant("", authz.User("ns-"+rung).Subject(), rung, ns("a"))
		grant("", authz.User("nested-ns-"+rung).Subject(), rung, ns("a", "n01"))
		grant("", authz.User("table-"+rung).Subject(), rung, tb("a", "t02"))
		grant("", authz.User("deep-table-"+rung).Subject(), rung, tb("w1", "x", "t"))
	}
	grant("team", authz.User("teamie").Subject(), "member", authz.TeamObject("analysts"))
	callers = append(callers, authz.User("teamie"))
	grant("team", authz.TeamMembers("analysts"), "reader", ns("w1", "x"))
	grant("team", authz.TeamMembers("analysts"), "reader", tb("a", "t05"))
	// managed_access on a and on the warehouse: it may hide manage_grants, never a listing entry.
	grant("switch", authz.Everyone, "managed_access", ns("a"))
	grant("switch", authz.Everyone, "managed_access", warehouse)

	// Every listing the handlers can ask for, with the parents they pass.
	type listing struct {
		name   string
		action authz.Action
		items  []authz.Listed
	}
	children := func(action authz.Action, typ string, parent authz.Object, withParent bool) []authz.Listed {
		var out []authz.Listed
		for _, n := range nodes {
			if n.obj.Type == typ && n.parent == parent {
				it := authz.Listed{Object: n.obj}
				if withParent {
					it.Parent = n.parent
				}
				out = append(out, it)
			}
		}
		return out
	}
	var allTables []authz.Listed
	for _, n := range nodes {
		if n.obj.Type == authz.TypeTable {
			allTables = append(allTables, authz.Listed{Object: n.obj, Parent: n.parent})
		}
	}
	listings := []listing{
		{"tables at the root", authz.TableListEntry, children(authz.TableListEntry, authz.TypeTable, authz.Catalog, true)},
		{"tables of a", authz.TableListEntry, children(authz.TableListEntry, authz.TypeTable, ns("a"), true)},
		{"tables of a$n01", authz.TableListEntry, children(authz.TableListEntry, authz.TypeTable, ns("a", "n01"), true)},
		{"tables of w1", authz.TableListEntry, children(authz.TableListEntry, authz.TypeTable, ns("w1"), true)},
		{"tables of w1$x", authz.TableListEntry, children(authz.TableListEntry, authz.TypeTable, ns("w1", "x"), true)},
		{"namespaces of a", authz.NamespaceListEntry, children(authz.NamespaceListEntry, authz.TypeNamespace, ns("a"), true)},
		{"namespaces of w1", authz.NamespaceListEntry, children(authz.NamespaceListEntry, authz.TypeNamespace, ns("w1"), true)},
		// At the root a namespace may hang from a warehouse: the handlers pass no parent.
		{"namespaces at the root", authz.NamespaceListEntry, append(children(authz.NamespaceListEntry, authz.TypeNamespace, authz.Catalog, false),
			children(authz.NamespaceListEntry, authz.TypeNamespace, warehouse, false)...)},
		{"every table", authz.TableListEntry, allTables},
	}

	fastPathUsed := 0
	compare := func(phase string) {
		for _, p := range callers {
			for _, l := range listings {
				// The reference: one Check per item (in parallel, to keep the test short).
				allowed := make([]bool, len(l.items))
				g, gctx := errgroup.WithContext(ctx)
				g.SetLimit(8)
				for i, it := range l.items {
					g.Go(func() error {
						err := f.Check(gctx, p, l.action, it.Object)
						if nserr.CodeOf(err) == nserr.PermissionDenied {
							return nil
						}
						allowed[i] = err == nil
						return err
					})
				}
				assert.NilError(t, g.Wait())
				var want []authz.Object
				for i, it := range l.items {
					if allowed[i] {
						want = append(want, it.Object)
					}
				}
				noParents := make([]authz.Listed, len(l.items))
				for i, it := range l.items {
					noParents[i] = authz.Listed{Object: it.Object}
				}
				for _, run := range []struct {
					name  string
					a     authz.Authorizer
					items []authz.Listed
				}{
					{"parent short-circuit", f, l.items},
					{"ListObjects and batch checks", f, noParents},
					{"batch checks only", batchOnly, noParents},
					{"ListObjects cut short", cutShort, noParents},
					{"parent short-circuit, batch checks only", batchOnly, l.items},
				} {
					got, err := authz.FilterListing(authz.WithDecisions(ctx), run.a, p, l.action, run.items)
					assert.NilError(t, err, "%s: %s, %s, %s", phase, p, l.name, run.name)
					assert.Assert(t, slices.Equal(got, want), "%s: %s, %s, %s: got %v, want %v", phase, p, l.name, run.name, got, want)
				}
				// Record that the short-circuit is exercised, not just agreed with.
				for _, it := range l.items {
					if !it.Parent.IsZero() && f.Check(ctx, p, authz.NamespaceContentsRead, it.Parent) == nil {
						fastPathUsed++
						break
					}
				}
			}
		}
	}
	compare("after the grants")
	assert.Assert(t, fastPathUsed > 20, "the short-circuit decided only %d listings", fastPathUsed)

	// Revokes change what the namespace listings show through navigator (a namespace entry is
	// can_get_metadata): the per-item path and the fast paths still agree.
	for _, rung := range []string{"owner", "writer", "reader"} {
		assert.NilError(t, f.Revoke(ctx, authz.User("deep-table-"+rung).Subject(), rung, tb("w1", "x", "t")))
		assert.NilError(t, f.Revoke(ctx, authz.User("nested-ns-"+rung).Subject(), rung, ns("a", "n01")))
	}
	assert.NilError(t, f.Revoke(ctx, authz.TeamMembers("analysts"), "reader", ns("w1", "x")))
	compare("after the revokes")
}
