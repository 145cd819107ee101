package handlers

// Tuples in step with the catalog, with authorization on: a create seeds its creator's ownership
// and the edge to its parent (and is undone if that fails), a destroy revokes every tuple on the
// object, a rename seeds the destination and revokes the source, and listings are filtered per
// item and paginated after filtering.
//
// The doors are wrapped rather than edited: governedDoors embeds the handlers and overrides the
// doors that create, destroy, move or list. Each wrapped door runs the plain handler into a
// buffer, and only answers once its tuples are written (or the create is undone).

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"slices"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/lancecat/lancecat/authz"
	nserr "github.com/lancecat/lancecat/errors"
	"github.com/lancecat/lancecat/gen/nsapi"
	"github.com/lancecat/lancecat/ident"
	"github.com/lancecat/lancecat/namespace"
	"github.com/lancecat/lancecat/registry"
)

// governedDoors is the handlers with tuple bookkeeping at the lifecycle doors and filtered
// listings. Registered instead of *Server when authorization is on.
type governedDoors struct{ *Server }

var _ nsapi.ServerInterface = governedDoors{}

// recorder buffers a handler's answer.
type recorder struct {
	header http.Header
	code   int
	body   bytes.Buffer
}

func (r *recorder) Header() http.Header         { return r.header }
func (r *recorder) Write(b []byte) (int, error) { return r.body.Write(b) }
func (r *recorder) WriteHeader(code int)        { r.code = code }

// buffered runs h with its answer buffered; ok is whether it succeeded (no error, status < 300).
func buffered(c echo.Context, h func() error) (rec *recorder, ok bool, err error) {
	orig := c.Response()
	rec = &recorder{header: http.Header{}}
	c.SetResponse(echo.NewResponse(rec, c.Echo()))
	err = h()
	c.SetResponse(orig)
	code := rec.code
	if code == 0 {
		code = http.StatusOK
	}
	return rec, err == nil && code < 300, err
}

// replay writes a buffered answer.
func replay(c echo.Context, rec *recorder) error {
	h := c.Response().Header()
	for k, v := range rec.header {
		h[k] = v
	}
	code := rec.code
	if code == 0 {
		code = http.StatusOK
	}
	c.Response().WriteHeader(code)
	_, err := c.Response().Write(rec.body.Bytes())
	return err
}

// governedID is the request's path id, as the handler will parse it.
func (g governedDoors) governedID(c echo.Context) (ident.ID, error) {
	return ident.ParsePath(c.Param("id"), g.delimiter)
}

// parentObject is the authorization object of id's parent namespace (the Catalog for the root).
func parentObject(id ident.ID) authz.Object { return authz.NamespaceObject(id.Parent()) }

// create runs a create door: an object that existed before is replaced (Overwrite) only by whoever
// may destroy it and accepted as it is (ExistOk) by whoever may describe it, and is never
// re-seeded; a new one is seeded with the caller as owner, and undone when seeding fails.
func (g governedDoors) create(c echo.Context, kind string, dropAction authz.Action, h func() error, undo func(context.Context, ident.ID) error) error {
	id, err := g.governedID(c)
	if err != nil {
		return h() // the handler answers the malformed id
	}
	ctx := c.Request().Context()
	p := authz.PrincipalFrom(ctx)
	obj := objectOf(kind, id)
	// Only a takeover (ExistOk, Overwrite) of an existing object needs the destroy right; a plain
	// create of a taken id is the handler's 409 (the caller passed the create check on the parent),
	// even while the winner of a concurrent create has not recorded its owner yet.
	mode := takeover(c)
	if mode != "" && exists(ctx, g.catalog, kind, id) {
		action := dropAction
		switch {
		case kind == doorNamespace && id.IsRoot():
			// The root is the catalog itself: "creating" it over itself sets estate-wide properties.
			action = authz.CatalogPropertiesSet
		case mode == "existok" && kind == doorNamespace:
			action = authz.NamespaceDescribe // ExistOk changes nothing: seeing it is enough
		case mode == "existok":
			action = authz.TableDescribe
		}
		if err := g.authorizer.Check(ctx, p, action, obj); err != nil {
			return err
		}
		return h()
	}
	changes := deferChanges(c)
	rec, ok, err := buffered(c, h)
	if err != nil {
		return err
	}
	if ok {
		// A new object starts with exactly its seeded tuples: whatever an earlier object at this
		// id left (a trashed one past its deadline keeps its tuples) must not grant anything here.
		_, serr := g.authorizer.RevokeAll(ctx, obj)
		if serr == nil {
			serr = g.authorizer.SeedCreate(ctx, p, obj, parentObject(id))
		}
		if serr != nil {
			if uerr := undo(ctx, id); uerr != nil {
				return nserr.Wrap(nserr.CodeOf(serr), serr, "the "+kind+" "+id.Join(g.delimiter)+" was created but its owner could not be recorded ("+
					serr.Error()+"), and undoing the create failed too ("+uerr.Error()+"): drop it and retry")
			}
			return serr
		}
		changes.commit(c)
	}
	return replay(c, rec)
}

// takeover is the takeover a create request asks for: "existok" (accept an existing object),
// "overwrite" (replace it) or "" (none). Its mode is the query's, as CreateTable takes it, else
// the JSON body's. The body is left for the handler to read.
func takeover(c echo.Context) string {
	mode := c.QueryParam("mode")
	if mode == "" {
		if !strings.Contains(c.Request().Header.Get(echo.HeaderContentType), "json") {
			return "" // an Arrow stream (CreateTable takes its mode in the query)
		}
		body, err := readBody(c)
		if err != nil {
			return "overwrite" // the handler answers the unreadable body; assume the strictest check meanwhile
		}
		c.Request().Body = io.NopCloser(bytes.NewReader(body))
		var req struct {
			Mode string `json:"mode"`
		}
		if json.Unmarshal(body, &req) != nil {
			return "" // malformed: the handler answers it
		}
		mode = req.Mode
	}
	switch m := strings.ToLower(strings.ReplaceAll(mode, "_", "")); m {
	case "existok", "overwrite":
		return m
	}
	return ""
}

// destroyed revokes the tuples of objects gone (deepest first) after a destroy committed.
func (g governedDoors) destroyed(ctx context.Context, what string, id ident.ID, objects ...authz.Object) error {
	for _, o := range objects {
		if _, err := g.authorizer.RevokeAll(ctx, o); err != nil {
			return nserr.Wrap(nserr.CodeOf(err), err, what+" "+id.Join(g.delimiter)+" was dropped but its authorization tuples could not all be removed ("+
				o.String()+"): "+err.Error())
		}
	}
	return nil
}

// destroy runs a destroy door and then revokes objects.
func (g governedDoors) destroy(c echo.Context, what string, id ident.ID, objects []authz.Object, h func() error) error {
	rec, ok, err := buffered(c, h)
	if err != nil {
		return err
	}
	if ok {
		if err := g.destroyed(c.Request().Context(), what, id, objects...); err != nil {
			return err
		}
	}
	return replay(c, rec)
}

// CreateNamespace seeds the new namespace under its parent (the Catalog for a top-level one).
func (g governedDoors) CreateNamespace(c echo.Context, id nsapi.Id, params nsapi.CreateNamespaceParams) error {
	return g.create(c, doorNamespace, authz.NamespaceDrop, func() error { return g.Server.CreateNamespace(c, id, params) },
		func(ctx context.Context, id ident.ID) error {
			_, err := g.catalog.DropNamespace(ctx, id, "Fail", "Restrict")
			return err
		})
}

// CreateTable seeds the new table under its namespace.
func (g governedDoors) CreateTable(c echo.Context, id nsapi.Id, params nsapi.CreateTableParams) error {
	return g.create(c, doorTable, authz.TableDrop, func() error { return g.Server.CreateTable(c, id, params) }, g.undoTable)
}

// DeclareTable seeds the declared table under its namespace.
func (g governedDoors) DeclareTable(c echo.Context, id nsapi.Id, params nsapi.DeclareTableParams) error {
	return g.create(c, doorTable, authz.TableDrop, func() error { return g.Server.DeclareTable(c, id, params) }, g.undoTable)
}

// RegisterTable seeds the registered table; a failed seeding deregisters it (its data stays).
func (g governedDoors) RegisterTable(c echo.Context, id nsapi.Id, params nsapi.RegisterTableParams) error {
	return g.create(c, doorTable, authz.TableDeregister, func() error { return g.Server.RegisterTable(c, id, params) },
		func(ctx context.Context, id ident.ID) error {
			_, err := g.catalog.DeregisterTable(ctx, id)
			return err
		})
}

func (g governedDoors) undoTable(ctx context.Context, id ident.ID) error {
	_, err := g.catalog.DropTable(ctx, id)
	return err
}

// DropTable revokes every tuple on the dropped table, unless the drop is recoverable: a table
// in the trash keeps its tuples, so an undrop gives it back to the same people.
func (g governedDoors) DropTable(c echo.Context, id nsapi.Id, params nsapi.DropTableParams) error {
	tid, err := g.governedID(c)
	if err != nil || (g.recoverable(c) && protectable(registry.KindTable, tid)) {
		return g.Server.DropTable(c, id, params)
	}
	return g.destroy(c, "table", tid, []authz.Object{authz.TableObject(tid)}, func() error { return g.Server.DropTable(c, id, params) })
}

// DeregisterTable revokes every tuple on the deregistered table.
func (g governedDoors) DeregisterTable(c echo.Context, id nsapi.Id, params nsapi.DeregisterTableParams) error {
	tid, err := g.governedID(c)
	if err != nil {
		return g.Server.DeregisterTable(c, id, params)
	}
	return g.destroy(c, "table", tid, []authz.Object{authz.TableObject(tid)}, func() error { return g.Server.DeregisterTable(c, id, params) })
}

// DropNamespace revokes every tuple on the namespace and on everything that was below it (a
// cascade), enumerated before the drop, deepest first. A recoverable cascade revokes nothing:
// the subtree keeps its tuples while it is in the trash. (A Restrict drop is never recoverable.)
func (g governedDoors) DropNamespace(c echo.Context, id nsapi.Id, params nsapi.DropNamespaceParams) error {
	nid, err := g.governedID(c)
	if err != nil || nid.IsRoot() || (g.recoverable(c) && cascades(c)) {
		return g.Server.DropNamespace(c, id, params)
	}
	objects := g.subtree(c.Request().Context(), nid)
	return g.destroy(c, "namespace", nid, objects, func() error { return g.Server.DropNamespace(c, id, params) })
}

// recoverable reports whether the drop request files its object in the trash rather than
// destroying it (the handler decides the same way; a malformed purge is its 400).
func (g governedDoors) recoverable(c echo.Context) bool {
	r, err := g.recoverableDrop(c)
	return err == nil && r != nil
}

// cascades reports whether a namespace drop request's body asks for behavior Cascade. The body is
// left for the handler to read; one that does not decode is the handler's to refuse.
func cascades(c echo.Context) bool {
	body, err := readBody(c)
	if err != nil {
		return false
	}
	c.Request().Body = io.NopCloser(bytes.NewReader(body))
	var req struct {
		Behavior *string `json:"behavior"`
	}
	if len(bytes.TrimSpace(body)) == 0 || json.Unmarshal(body, &req) != nil {
		return false
	}
	return canonicalEnum("behavior", req.Behavior, namespace.BehaviorRestrict, namespace.BehaviorCascade) == nil &&
		strOf(req.Behavior) == namespace.BehaviorCascade
}

// subtree is every table and namespace below ns, deepest first, then ns itself. Enumeration is
// best effort: what cannot be listed is left to the drop to refuse or to leave behind.
func (g governedDoors) subtree(ctx context.Context, ns ident.ID) []authz.Object {
	var out []authz.Object
	var walk func(ident.ID, int)
	walk = func(id ident.ID, depth int) {
		if depth > 64 {
			return
		}
		for name := range g.allNames(ctx, func(tok string) (namespace.Page, error) { return g.catalog.ListNamespaces(ctx, id, tok, 1000) }) {
			walk(id.Child(name), depth+1)
		}
		for name := range g.allNames(ctx, func(tok string) (namespace.Page, error) { return g.catalog.ListTables(ctx, id, tok, 1000) }) {
			out = append(out, authz.TableObject(id.Child(name)))
		}
		out = append(out, authz.NamespaceObject(id))
	}
	walk(ns, 0)
	return out
}

// allNames reads every page of a listing (stopping at the first error).
func (g governedDoors) allNames(_ context.Context, list func(token string) (namespace.Page, error)) map[string]struct{} {
	names := map[string]struct{}{}
	token := ""
	for {
		page, err := list(token)
		if err != nil {
			return names
		}
		for _, n := range page.Names {
			names[n] = struct{}{}
		}
		if page.NextToken == "" || page.NextToken == token {
			return names
		}
		token = page.NextToken
	}
}

// RenameTable checks the destination as a create in its namespace, then seeds the destination
// with the caller as owner and revokes the source.
func (g governedDoors) RenameTable(c echo.Context, id nsapi.Id, params nsapi.RenameTableParams) error {
	from, err := g.governedID(c)
	if err != nil || len(from) < 2 {
		return g.Server.RenameTable(c, id, params)
	}
	body, err := readBody(c)
	if err != nil {
		return err
	}
	c.Request().Body = io.NopCloser(bytes.NewReader(body))
	var req nsapi.RenameTableRequest
	if json.Unmarshal(body, &req) != nil || req.NewTableName == "" {
		return g.Server.RenameTable(c, id, params) // the handler answers the malformed body
	}
	dest := from.Parent()
	if req.NewNamespaceId != nil {
		dest = ident.ID(slices.Clone(*req.NewNamespaceId))
	}
	to := dest.Child(req.NewTableName)
	ctx := c.Request().Context()
	p := authz.PrincipalFrom(ctx)
	if err := g.authorizer.Check(ctx, p, authz.TableCreate, authz.NamespaceObject(dest)); err != nil {
		return err
	}
	rec, ok, err := buffered(c, func() error { return g.Server.RenameTable(c, id, params) })
	if err != nil {
		return err
	}
	if ok {
		if err := g.authorizer.SeedCreate(ctx, p, authz.TableObject(to), authz.NamespaceObject(dest)); err != nil {
			return nserr.Wrap(nserr.CodeOf(err), err, "table "+from.Join(g.delimiter)+" was renamed to "+to.Join(g.delimiter)+
				" but its owner could not be recorded there: "+err.Error())
		}
		if err := g.destroyed(ctx, "table", from, authz.TableObject(from)); err != nil {
			return err
		}
	}
	return replay(c, rec)
}

// ListNamespaces lists the child namespaces the caller may see.
func (g governedDoors) ListNamespaces(c echo.Context, id nsapi.Id, params nsapi.ListNamespacesParams) error {
	ns, err := g.pathID(c, params.Delimiter)
	if err != nil || g.catalog == nil {
		return g.Server.ListNamespaces(c, id, params)
	}
	ctx := c.Request().Context()
	names, next, err := g.filtered(ctx, authz.NamespaceListEntry, tokenOf(params.PageToken), limitOf(params.Limit),
		func(tok string, limit int) (namespace.Page, error) {
			return g.catalog.ListNamespaces(ctx, ns, tok, limit)
		},
		func(name string) authz.Object { return authz.NamespaceObject(ns.Child(name)) })
	if err != nil {
		return err
	}
	return writeJSON(c, nsapi.ListNamespacesResponse{Namespaces: orEmpty(names), PageToken: pageToken(next)})
}

// ListTables lists the tables of a namespace the caller may see.
func (g governedDoors) ListTables(c echo.Context, id nsapi.Id, params nsapi.ListTablesParams) error {
	ns, err := g.pathID(c, params.Delimiter)
	if err != nil || g.catalog == nil {
		return g.Server.ListTables(c, id, params)
	}
	ctx := c.Request().Context()
	names, next, err := g.filtered(ctx, authz.TableListEntry, tokenOf(params.PageToken), limitOf(params.Limit),
		func(tok string, limit int) (namespace.Page, error) { return g.catalog.ListTables(ctx, ns, tok, limit) },
		func(name string) authz.Object { return authz.TableObject(ns.Child(name)) })
	if err != nil {
		return err
	}
	return writeJSON(c, nsapi.ListTablesResponse{Tables: orEmpty(names), PageToken: pageToken(next)})
}

// ListAllTables lists every table the caller may see.
func (g governedDoors) ListAllTables(c echo.Context, params nsapi.ListAllTablesParams) error {
	if err := g.checkDelimiter(params.Delimiter); err != nil || g.catalog == nil {
		return g.Server.ListAllTables(c, params)
	}
	ctx := c.Request().Context()
	oids, next, err := g.filtered(ctx, authz.TableListEntry, tokenOf(params.PageToken), limitOf(params.Limit),
		func(tok string, limit int) (namespace.Page, error) { return g.catalog.ListAllTables(ctx, tok, limit) },
		func(oid string) authz.Object { return authz.TableObject(namespace.SplitID(oid)) })
	if err != nil {
		return err
	}
	tables := make([]string, len(oids))
	for i, oid := range oids {
		tables[i] = namespace.SplitID(oid).Join(g.delimiter)
	}
	return writeJSON(c, nsapi.ListTablesResponse{Tables: tables, PageToken: pageToken(next)})
}

// filtered reads pages from list and keeps the names the caller passes action on, until limit
// names are kept (limit <= 0: all) or the listing is exhausted. The next token is the last name
// returned, so no count of hidden names leaks and pages are never short while more remain.
func (g governedDoors) filtered(ctx context.Context, action authz.Action, token string, limit int,
	list func(token string, limit int) (namespace.Page, error), object func(string) authz.Object,
) ([]string, string, error) {
	p := authz.PrincipalFrom(ctx)
	var names []string
	for {
		page, err := list(token, limit)
		if err != nil {
			return nil, "", err
		}
		objs := make([]authz.Object, len(page.Names))
		for i, n := range page.Names {
			objs[i] = object(n)
		}
		allowed, err := g.authorizer.Filter(ctx, p, action, objs)
		if err != nil {
			return nil, "", err
		}
		ok := make(map[authz.Object]bool, len(allowed))
		for _, o := range allowed {
			ok[o] = true
		}
		for i, n := range page.Names {
			if !ok[objs[i]] {
				continue
			}
			names = append(names, n)
			if limit > 0 && len(names) == limit {
				if i == len(page.Names)-1 && page.NextToken == "" {
					return names, "", nil
				}
				return names, n, nil
			}
		}
		if page.NextToken == "" || page.NextToken == token {
			return names, "", nil
		}
		token = page.NextToken
	}
}
