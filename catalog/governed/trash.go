package governed

// Recoverable drops: the objects are detached into the trash rather than destroyed.

import (
	"context"
	"slices"
	"strconv"

	"github.com/lancecat/lancecat/authz"
	"github.com/lancecat/lancecat/catalog"
	nserr "github.com/lancecat/lancecat/errors"
	"github.com/lancecat/lancecat/governance"
	"github.com/lancecat/lancecat/ident"
	"github.com/lancecat/lancecat/registry"
)

// maxTrashDepth bounds how deep a recoverable cascade walks below the namespace it drops.
const maxTrashDepth = 64

// trashTable is a recoverable drop: the trash record first, then a deregister (bytes kept). Its
// protection is cleared (the id is free of it until an undrop), its policy kept for the undrop.
func (g *Catalog) trashTable(ctx context.Context, r Recycler, id ident.ID) (*catalog.Entry, error) {
	t, err := g.Inner.DescribeTable(ctx, id)
	if err != nil {
		return nil, err
	}
	if _, err := r.TrashTable(ctx, authz.PrincipalFrom(ctx), id, t.Location, t.Properties, ""); err != nil {
		return nil, err
	}
	t, err = g.Inner.DeregisterTable(ctx, id)
	if err != nil {
		if derr := r.DiscardTrash(ctx, id); derr != nil {
			return nil, nserr.Wrap(nserr.CodeOf(err), err, "dropping table "+id.Join(g.delimiter)+" failed ("+err.Error()+
				") and its trash record could not be removed ("+derr.Error()+")")
		}
		return nil, err
	}
	if err := g.records.ClearProtection(ctx, registry.KindTable, id); err != nil {
		return nil, leftBehind("table", id.Join(g.delimiter), err)
	}
	g.changed(ctx, governance.EventTableDropped, registry.KindTable, id, map[string]string{"location": t.URI, "recoverable": "true"})
	return t, nil
}

// trashNamespace is a recoverable cascade: the subtree is detached into the trash rather than
// destroyed. Every table (deepest first) gets its trash record and is deregistered, bytes kept;
// every namespace (deepest first) gets a kind=namespace record and is dropped empty. The dropped
// namespace's own record is filed first and dropped last, so a drop that stops part way leaves
// it behind: the undrop of id then re-attaches whatever was already detached, and a retried drop
// finishes the job. Protection of the subtree is cleared (the ids are free of it until an
// undrop); policies are kept for the undrop, as a trashed table's is. A Skip drop of a missing
// namespace answers nil properties.
func (g *Catalog) trashNamespace(ctx context.Context, r Recycler, id ident.ID, mode string) (map[string]string, error) {
	name := id.Join(g.delimiter)
	props, err := g.Inner.DescribeNamespace(ctx, id)
	if err != nil {
		if mode == catalog.ModeSkip && nserr.Is(err, nserr.ErrNamespaceNotFound) {
			return nil, nil
		}
		return nil, err
	}
	namespaces, tables, err := g.subtreeOf(ctx, id)
	if err != nil {
		return nil, err
	}
	p := authz.PrincipalFrom(ctx)
	root, err := r.TrashNamespace(ctx, p, id, props, "")
	if err != nil {
		return nil, err
	}
	detached := 0
	fail := func(err error) (map[string]string, error) {
		if detached == 0 {
			if derr := r.DiscardNamespaceTrash(ctx, id); derr != nil {
				return nil, nserr.Wrap(nserr.CodeOf(err), err, "dropping namespace "+name+" failed ("+err.Error()+
					") and its trash record could not be removed ("+derr.Error()+")")
			}
			return nil, err
		}
		return nil, nserr.Wrap(nserr.CodeOf(err), err, "dropping namespace "+name+" stopped part way ("+err.Error()+"), after "+
			strconv.Itoa(detached)+" objects below it were moved to the trash: retry the drop, or bring them back with POST /v1/namespace/"+
			id.PathSegment(g.delimiter)+"/undrop")
	}
	for _, tid := range tables {
		t, err := g.Inner.DescribeTable(ctx, tid)
		if nserr.Is(err, nserr.ErrTableNotFound) {
			continue // gone since the listing
		}
		if err != nil {
			return fail(err)
		}
		if _, err := r.TrashTable(ctx, p, tid, t.Location, t.Properties, root.Cascade); err != nil {
			return fail(err)
		}
		if _, err := g.Inner.DeregisterTable(ctx, tid); err != nil {
			if derr := r.DiscardTrash(ctx, tid); derr != nil {
				err = nserr.Wrap(nserr.CodeOf(err), err, "table "+tid.Join(g.delimiter)+": "+err.Error()+
					"; its trash record could not be removed either ("+derr.Error()+")")
			}
			return fail(err)
		}
		detached++
	}
	for _, nid := range namespaces {
		nprops, err := g.Inner.DescribeNamespace(ctx, nid)
		if nserr.Is(err, nserr.ErrNamespaceNotFound) {
			continue // gone since the listing
		}
		if err != nil {
			return fail(err)
		}
		if _, err := r.TrashNamespace(ctx, p, nid, nprops, root.Cascade); err != nil {
			return fail(err)
		}
		if _, err := g.Inner.DropNamespace(ctx, nid, catalog.ModeFail, catalog.BehaviorRestrict); err != nil {
			if derr := r.DiscardNamespaceTrash(ctx, nid); derr != nil {
				err = nserr.Wrap(nserr.CodeOf(err), err, "namespace "+nid.Join(g.delimiter)+": "+err.Error()+
					"; its trash record could not be removed either ("+derr.Error()+")")
			}
			return fail(err)
		}
		detached++
	}
	if _, err := g.Inner.DropNamespace(ctx, id, catalog.ModeFail, catalog.BehaviorRestrict); err != nil {
		return fail(err)
	}
	if err := g.records.ClearSubtreeProtection(ctx, id); err != nil {
		return nil, leftBehind("namespace", name, err)
	}
	g.changed(ctx, governance.EventNamespaceDropped, registry.KindNamespace, id, map[string]string{"cascade": "true", "recoverable": "true", "tables": strconv.Itoa(detached)})
	if props == nil {
		props = map[string]string{}
	}
	return props, nil
}

// subtreeOf enumerates everything below namespace ns through the catalog, every page: the
// namespaces deepest first (ns itself not included) and the tables, declared ones too, deepest
// first. A subtree deeper than maxTrashDepth is refused before anything is touched.
func (g *Catalog) subtreeOf(ctx context.Context, ns ident.ID) (namespaces, tables []ident.ID, err error) {
	var walk func(id ident.ID, depth int) error
	walk = func(id ident.ID, depth int) error {
		if depth > maxTrashDepth {
			return nserr.Unsupportedf("namespace %s nests more than %d levels deep: a recoverable drop does not go that far; "+
				"drop the deepest namespaces first, or destroy with purge=true", ns.Join(g.delimiter), maxTrashDepth)
		}
		kids, err := allPages(func(tok string) (catalog.Page, error) { return g.Inner.ListNamespaces(ctx, id, tok, 1000) })
		if err != nil {
			return err
		}
		for _, k := range kids {
			if err := walk(id.Child(k), depth+1); err != nil {
				return err
			}
		}
		names, err := allPages(func(tok string) (catalog.Page, error) { return g.Inner.ListTables(ctx, id, tok, 1000) })
		if err != nil {
			return err
		}
		for _, n := range names {
			tables = append(tables, id.Child(n))
		}
		if depth > 0 {
			namespaces = append(namespaces, id)
		}
		return nil
	}
	if err := walk(ns, 0); err != nil {
		return nil, nil, err
	}
	// The walk is post-order (children before their parent); order tables strictly by depth too.
	slices.SortStableFunc(tables, func(a, b ident.ID) int { return len(b) - len(a) })
	return namespaces, tables, nil
}

// allPages reads every page of a listing; a failing page fails the listing.
func allPages(list func(token string) (catalog.Page, error)) ([]string, error) {
	var out []string
	token := ""
	for {
		page, err := list(token)
		if err != nil {
			return nil, err
		}
		out = append(out, page.Names...)
		if page.NextToken == "" || page.NextToken == token {
			return out, nil
		}
		token = page.NextToken
	}
}
