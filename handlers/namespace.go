package handlers

// The namespace operations.

import (
	"context"
	"slices"
	"strconv"

	"github.com/labstack/echo/v4"

	nserr "github.com/lancecat/lancecat/errors"
	"github.com/lancecat/lancecat/gen/nsapi"
	"github.com/lancecat/lancecat/governance"
	"github.com/lancecat/lancecat/ident"
	"github.com/lancecat/lancecat/namespace"
	"github.com/lancecat/lancecat/registry"
)

// CreateNamespace is POST /v1/namespace/{id}/create.
func (s *Server) CreateNamespace(c echo.Context, _ nsapi.Id, params nsapi.CreateNamespaceParams) error {
	id, req, err := s.createNamespaceRequest(c, params.Delimiter)
	if err != nil {
		return err
	}
	if s.catalog == nil {
		return notBacked(c, "CreateNamespace")
	}
	if err := s.checkNamespaceNotTrashed(c.Request().Context(), id); err != nil {
		return err
	}
	if err := s.checkOverwrite(c, registry.KindNamespace, id, strOf(req.Mode)); err != nil {
		return err
	}
	p, err := s.catalog.CreateNamespace(c.Request().Context(), id, props(req.Properties), strOf(req.Mode))
	if err != nil {
		return err
	}
	if mode := strOf(req.Mode); mode != namespace.ModeExistOk {
		s.changed(c, governance.EventNamespaceCreated, registry.KindNamespace, id, map[string]string{"mode": mode})
	}
	return writeJSON(c, nsapi.CreateNamespaceResponse{Properties: &p})
}

// ListNamespaces is GET /v1/namespace/{id}/list.
func (s *Server) ListNamespaces(c echo.Context, _ nsapi.Id, params nsapi.ListNamespacesParams) error {
	id, err := s.pathID(c, params.Delimiter)
	if err != nil {
		return err
	}
	if s.catalog == nil {
		return notBacked(c, "ListNamespaces")
	}
	page, err := s.catalog.ListNamespaces(c.Request().Context(), id, tokenOf(params.PageToken), limitOf(params.Limit))
	if err != nil {
		return err
	}
	return writeJSON(c, nsapi.ListNamespacesResponse{Namespaces: orEmpty(page.Names), PageToken: pageToken(page.NextToken)})
}

// DescribeNamespace is POST /v1/namespace/{id}/describe.
func (s *Server) DescribeNamespace(c echo.Context, _ nsapi.Id, params nsapi.DescribeNamespaceParams) error {
	var req nsapi.DescribeNamespaceRequest
	id, err := s.decodeRequest(c, params.Delimiter, &req)
	if err != nil {
		return err
	}
	if s.catalog == nil {
		return notBacked(c, "DescribeNamespace")
	}
	p, err := s.catalog.DescribeNamespace(c.Request().Context(), id)
	if err != nil {
		return err
	}
	return writeJSON(c, nsapi.DescribeNamespaceResponse{Properties: &p})
}

// DropNamespace is POST /v1/namespace/{id}/drop.
func (s *Server) DropNamespace(c echo.Context, _ nsapi.Id, params nsapi.DropNamespaceParams) error {
	id, req, err := s.dropNamespaceRequest(c, params.Delimiter)
	if err != nil {
		return err
	}
	force, err := forceParam(c)
	if err != nil {
		return err
	}
	if s.catalog == nil {
		return notBacked(c, "DropNamespace")
	}
	r, err := s.recoverableDrop(c)
	if err != nil {
		return err
	}
	ctx := c.Request().Context()
	cascade := strOf(req.Behavior) == namespace.BehaviorCascade
	if err := s.checkNamespaceDrop(ctx, id, cascade, force); err != nil {
		return err
	}
	// Only a cascade is trashed: a Restrict drop removes an empty namespace, nothing to recover.
	if r != nil && cascade && protectable(registry.KindNamespace, id) {
		return s.trashNamespace(c, r, id, strOf(req.Mode))
	}
	p, err := s.catalog.DropNamespace(ctx, id, strOf(req.Mode), strOf(req.Behavior))
	if err != nil {
		return err
	}
	if err := s.namespaceGone(ctx, id); err != nil {
		return err
	}
	s.changed(c, governance.EventNamespaceDropped, registry.KindNamespace, id, map[string]string{"cascade": strconv.FormatBool(cascade), "recoverable": "false"})
	resp := nsapi.DropNamespaceResponse{}
	if p != nil {
		resp.Properties = &p
	}
	return writeJSON(c, resp)
}

// maxTrashDepth bounds how deep a recoverable cascade walks below the namespace it drops.
const maxTrashDepth = 64

// trashNamespace is a recoverable cascade: the subtree is detached into the trash rather than
// destroyed. Every table (deepest first) gets its trash record and is deregistered, bytes kept;
// every namespace (deepest first) gets a kind=namespace record and is dropped empty. The dropped
// namespace's own record is filed first and dropped last, so a drop that stops part way leaves
// it behind: the undrop of id then re-attaches whatever was already detached, and a retried drop
// finishes the job. Protection of the subtree is cleared (the ids are free of it until an
// undrop); policies are kept for the undrop, as a trashed table's is.
func (s *Server) trashNamespace(c echo.Context, r Recycler, id ident.ID, mode string) error {
	ctx := c.Request().Context()
	name := id.Join(s.delimiter)
	props, err := s.catalog.DescribeNamespace(ctx, id)
	if err != nil {
		if mode == namespace.ModeSkip && nserr.Is(err, nserr.ErrNamespaceNotFound) {
			return writeJSON(c, nsapi.DropNamespaceResponse{})
		}
		return err
	}
	namespaces, tables, err := s.subtreeOf(ctx, id)
	if err != nil {
		return err
	}
	p := ctlPrincipal(c)
	if _, err := r.TrashNamespace(ctx, p, id, props); err != nil {
		return err
	}
	detached := 0
	fail := func(err error) error {
		if detached == 0 {
			if derr := r.DiscardNamespaceTrash(ctx, id); derr != nil {
				return nserr.Wrap(nserr.CodeOf(err), err, "dropping namespace "+name+" failed ("+err.Error()+
					") and its trash record could not be removed ("+derr.Error()+")")
			}
			return err
		}
		return nserr.Wrap(nserr.CodeOf(err), err, "dropping namespace "+name+" stopped part way ("+err.Error()+"), after "+
			strconv.Itoa(detached)+" objects below it were moved to the trash: retry the drop, or bring them back with POST /v1/namespace/"+
			id.PathSegment(s.delimiter)+"/undrop")
	}
	for _, tid := range tables {
		t, err := s.catalog.DescribeTable(ctx, tid)
		if nserr.Is(err, nserr.ErrTableNotFound) {
			continue // gone since the listing
		}
		if err != nil {
			return fail(err)
		}
		if _, err := r.TrashTable(ctx, p, tid, t.Location, t.Properties); err != nil {
			return fail(err)
		}
		if _, err := s.catalog.DeregisterTable(ctx, tid); err != nil {
			if derr := r.DiscardTrash(ctx, tid); derr != nil {
				err = nserr.Wrap(nserr.CodeOf(err), err, "table "+tid.Join(s.delimiter)+": "+err.Error()+
					"; its trash record could not be removed either ("+derr.Error()+")")
			}
			return fail(err)
		}
		detached++
	}
	for _, nid := range namespaces {
		nprops, err := s.catalog.DescribeNamespace(ctx, nid)
		if nserr.Is(err, nserr.ErrNamespaceNotFound) {
			continue // gone since the listing
		}
		if err != nil {
			return fail(err)
		}
		if _, err := r.TrashNamespace(ctx, p, nid, nprops); err != nil {
			return fail(err)
		}
		if _, err := s.catalog.DropNamespace(ctx, nid, namespace.ModeFail, namespace.BehaviorRestrict); err != nil {
			if derr := r.DiscardNamespaceTrash(ctx, nid); derr != nil {
				err = nserr.Wrap(nserr.CodeOf(err), err, "namespace "+nid.Join(s.delimiter)+": "+err.Error()+
					"; its trash record could not be removed either ("+derr.Error()+")")
			}
			return fail(err)
		}
		detached++
	}
	if _, err := s.catalog.DropNamespace(ctx, id, namespace.ModeFail, namespace.BehaviorRestrict); err != nil {
		return fail(err)
	}
	if err := s.lifecycle.ClearSubtreeProtection(ctx, id); err != nil {
		return leftBehind("namespace", name, err)
	}
	s.changed(c, governance.EventNamespaceDropped, registry.KindNamespace, id, map[string]string{"cascade": "true", "recoverable": "true", "tables": strconv.Itoa(detached)})
	return writeJSON(c, nsapi.DropNamespaceResponse{Properties: &props})
}

// subtreeOf enumerates everything below namespace ns through the catalog, every page: the
// namespaces deepest first (ns itself not included) and the tables, declared ones too, deepest
// first. A subtree deeper than maxTrashDepth is refused before anything is touched.
func (s *Server) subtreeOf(ctx context.Context, ns ident.ID) (namespaces, tables []ident.ID, err error) {
	var walk func(id ident.ID, depth int) error
	walk = func(id ident.ID, depth int) error {
		if depth > maxTrashDepth {
			return nserr.Unsupportedf("namespace %s nests more than %d levels deep: a recoverable drop does not go that far; "+
				"drop the deepest namespaces first, or destroy with purge=true", ns.Join(s.delimiter), maxTrashDepth)
		}
		kids, err := allPages(func(tok string) (namespace.Page, error) { return s.catalog.ListNamespaces(ctx, id, tok, 1000) })
		if err != nil {
			return err
		}
		for _, k := range kids {
			if err := walk(id.Child(k), depth+1); err != nil {
				return err
			}
		}
		names, err := allPages(func(tok string) (namespace.Page, error) { return s.catalog.ListTables(ctx, id, tok, 1000) })
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
func allPages(list func(token string) (namespace.Page, error)) ([]string, error) {
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

// NamespaceExists is POST /v1/namespace/{id}/exists.
func (s *Server) NamespaceExists(c echo.Context, _ nsapi.Id, params nsapi.NamespaceExistsParams) error {
	var req nsapi.NamespaceExistsRequest
	id, err := s.decodeRequest(c, params.Delimiter, &req)
	if err != nil {
		return err
	}
	if s.catalog == nil {
		return notBacked(c, "NamespaceExists")
	}
	return writeExists(c, s.catalog.NamespaceExists(c.Request().Context(), id))
}

// orEmpty makes an empty listing encode as [] (the clients require the field).
func orEmpty(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}
