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
	"io"
	"net/http"

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

// create runs a create door on id whose decoded mode (canonical) is mode; setMode changes the
// mode the handler will act on (the decoded request both share).
//
// A takeover of an object that exists (Overwrite replaces it, ExistOk accepts it as it is) is
// checked on that object: Overwrite needs the right to destroy it (dropAction), ExistOk only the
// right to see it, and neither re-seeds its ownership or revokes its grants. A new object is
// seeded with the caller as owner, after whatever tuples its id still held are revoked, and the
// create is undone when seeding fails.
//
// A takeover asked of a free id runs as a plain Create: an object a concurrent create puts there
// meanwhile is then never replaced or adopted on rights checked on nothing. The catalog's "already
// exists" sends such a request down the takeover path, checked on what now exists.
func (g governedDoors) create(c echo.Context, kind string, id ident.ID, mode string, dropAction authz.Action,
	setMode func(string), h func() error, undo func(context.Context, ident.ID) error,
) error {
	ctx := c.Request().Context()
	takeover := mode == namespace.ModeExistOk || mode == namespace.ModeOverwrite
	if takeover && exists(ctx, g.catalog, kind, id) {
		return g.takeover(c, kind, id, mode, dropAction, h)
	}
	if takeover {
		setMode(namespace.ModeCreate)
	}
	changes := deferChanges(c)
	rec, ok, err := buffered(c, h)
	if err != nil {
		if takeover && alreadyExists(err) && exists(ctx, g.catalog, kind, id) {
			c.Set(deferredChangesKey, nil)
			setMode(mode)
			return g.takeover(c, kind, id, mode, dropAction, h)
		}
		return err
	}
	if ok {
		// A new object starts with exactly its seeded tuples: whatever an earlier object at this
		// id left (a trashed one past its deadline keeps its tuples) must not grant anything here.
		p := authz.PrincipalFrom(ctx)
		obj := objectOf(kind, id)
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

// takeover runs a create door in mode (ExistOk or Overwrite) on the object that exists at id, once
// the caller passes the check on that object; its tuples are left as they are.
func (g governedDoors) takeover(c echo.Context, kind string, id ident.ID, mode string, dropAction authz.Action, h func() error) error {
	action := dropAction
	switch {
	case kind == doorNamespace && id.IsRoot():
		// The root is the catalog itself: "creating" it over itself sets estate-wide properties.
		action = authz.CatalogPropertiesSet
	case mode == namespace.ModeExistOk && kind == doorNamespace:
		action = authz.NamespaceDescribe // ExistOk changes nothing: seeing it is enough
	case mode == namespace.ModeExistOk:
		action = authz.TableDescribe
	}
	ctx := c.Request().Context()
	if err := g.authorizer.Check(ctx, authz.PrincipalFrom(ctx), action, objectOf(kind, id)); err != nil {
		return err
	}
	return h()
}

// alreadyExists reports whether err is the catalog's "that id is taken".
func alreadyExists(err error) bool {
	code := nserr.CodeOf(err)
	return code == nserr.TableAlreadyExists || code == nserr.NamespaceAlreadyExists
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
// An Overwrite of an existing namespace needs its drop right.
func (g governedDoors) CreateNamespace(c echo.Context, id nsapi.Id, params nsapi.CreateNamespaceParams) error {
	nid, req, err := g.createNamespaceRequest(c, params.Delimiter)
	if err != nil {
		return err
	}
	return g.create(c, doorNamespace, nid, strOf(req.Mode), authz.NamespaceDrop, func(m string) { req.Mode = &m },
		func() error { return g.Server.CreateNamespace(c, id, params) },
		func(ctx context.Context, id ident.ID) error {
			_, err := g.catalog.DropNamespace(ctx, id, "Fail", "Restrict")
			return err
		})
}

// CreateTable seeds the new table under its namespace. The Arrow body is kept, so the handler
// can run again when a takeover meets a table a concurrent create just made.
func (g governedDoors) CreateTable(c echo.Context, id nsapi.Id, params nsapi.CreateTableParams) error {
	tid, req, err := g.createTableRequest(c, &params)
	if err != nil {
		return err
	}
	body, err := readBody(c)
	if err != nil {
		return err
	}
	return g.create(c, doorTable, tid, strOf(req.Mode), authz.TableDrop, func(m string) { req.Mode = &m },
		func() error {
			c.Request().Body = io.NopCloser(bytes.NewReader(body))
			return g.Server.CreateTable(c, id, *req)
		}, g.undoTable)
}

// DeclareTable seeds the declared table under its namespace (a declare has no mode: it only
// creates).
func (g governedDoors) DeclareTable(c echo.Context, id nsapi.Id, params nsapi.DeclareTableParams) error {
	tid, _, err := g.declareTableRequest(c, params.Delimiter)
	if err != nil {
		return err
	}
	return g.create(c, doorTable, tid, namespace.ModeCreate, authz.TableDrop, func(string) {},
		func() error { return g.Server.DeclareTable(c, id, params) }, g.undoTable)
}

// RegisterTable seeds the registered table; a failed seeding deregisters it (its data stays). An
// Overwrite of an existing table replaces it, so it needs can_drop, as a create's does.
func (g governedDoors) RegisterTable(c echo.Context, id nsapi.Id, params nsapi.RegisterTableParams) error {
	tid, req, err := g.registerTableRequest(c, params.Delimiter)
	if err != nil {
		return err
	}
	return g.create(c, doorTable, tid, strOf(req.Mode), authz.TableDrop, func(m string) { req.Mode = &m },
		func() error { return g.Server.RegisterTable(c, id, params) },
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
	nid, req, err := g.dropNamespaceRequest(c, params.Delimiter)
	if err != nil {
		return err
	}
	cascade := strOf(req.Behavior) == namespace.BehaviorCascade
	if nid.IsRoot() || (g.recoverable(c) && cascade) {
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

// RenameTable checks the destination as a create in its namespace, then gives the destination
// id exactly the tuples a new object gets (whatever an earlier object at that id left is revoked,
// as a create does; the caller is seeded owner) and revokes the source.
func (g governedDoors) RenameTable(c echo.Context, id nsapi.Id, params nsapi.RenameTableParams) error {
	from, req, err := g.renameTableRequest(c, params.Delimiter)
	if err != nil {
		return err
	}
	if len(from) < 2 {
		return g.Server.RenameTable(c, id, params) // the catalog answers a table id without a namespace
	}
	_, to, err := g.renameDestination(from, req)
	if err != nil {
		return err
	}
	ctx := c.Request().Context()
	p := authz.PrincipalFrom(ctx)
	if err := g.authorizer.Check(ctx, p, authz.TableCreate, parentObject(to)); err != nil {
		return err
	}
	rec, ok, err := buffered(c, func() error { return g.Server.RenameTable(c, id, params) })
	if err != nil {
		return err
	}
	if ok {
		_, err := g.authorizer.RevokeAll(ctx, authz.TableObject(to))
		if err == nil {
			err = g.authorizer.SeedCreate(ctx, p, authz.TableObject(to), parentObject(to))
		}
		if err != nil {
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
	// A child of the root may hang from a warehouse rather than the Catalog: no parent there.
	var parent authz.Object
	if !ns.IsRoot() {
		parent = authz.NamespaceObject(ns)
	}
	names, next, err := g.filtered(ctx, authz.NamespaceListEntry, tokenOf(params.PageToken), limitOf(params.Limit),
		func(tok string, limit int) (namespace.Page, error) {
			return g.catalog.ListNamespaces(ctx, ns, tok, limit)
		},
		func(name string) authz.Listed {
			return authz.Listed{Object: authz.NamespaceObject(ns.Child(name)), Parent: parent}
		})
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
	parent := authz.NamespaceObject(ns) // every table here hangs from ns (the Catalog at the root)
	names, next, err := g.filtered(ctx, authz.TableListEntry, tokenOf(params.PageToken), limitOf(params.Limit),
		func(tok string, limit int) (namespace.Page, error) { return g.catalog.ListTables(ctx, ns, tok, limit) },
		func(name string) authz.Listed {
			return authz.Listed{Object: authz.TableObject(ns.Child(name)), Parent: parent}
		})
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
		func(oid string) authz.Listed {
			id := namespace.SplitID(oid)
			return authz.Listed{Object: authz.TableObject(id), Parent: parentObject(id)}
		})
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
// returned, so no count of hidden names leaks; it is given only once a further visible name has
// been seen, so pages are never short while more remain and the last page is never empty.
//
// Each entry names the parent it inherits from (authz.Listed), so a caller who reads that parent
// is decided by one check on it; the rest are decided in bulk (authz.FilterListing), and one
// request never asks OpenFGA the same question twice. The catalog is read at least filterReadSize
// names at a time, so a small page over a sparsely visible listing does not cost a round trip per
// name.
func (g governedDoors) filtered(ctx context.Context, action authz.Action, token string, limit int,
	list func(token string, limit int) (namespace.Page, error), object func(string) authz.Listed,
) ([]string, string, error) {
	p := authz.PrincipalFrom(ctx)
	read := limit
	if read > 0 && read < filterReadSize {
		read = filterReadSize
	}
	var names []string
	for {
		page, err := list(token, read)
		if err != nil {
			return nil, "", err
		}
		items := make([]authz.Listed, len(page.Names))
		for i, n := range page.Names {
			items[i] = object(n)
		}
		allowed, err := authz.FilterListing(ctx, g.authorizer, p, action, items)
		if err != nil {
			return nil, "", err
		}
		ok := make(map[authz.Object]bool, len(allowed))
		for _, o := range allowed {
			ok[o] = true
		}
		for i, n := range page.Names {
			if !ok[items[i].Object] {
				continue
			}
			if limit > 0 && len(names) == limit {
				return names, names[limit-1], nil // a visible name follows the page
			}
			names = append(names, n)
		}
		if page.NextToken == "" || page.NextToken == token {
			return names, "", nil
		}
		token = page.NextToken
	}
}

// filterReadSize is the fewest names filtered reads from the catalog at once.
const filterReadSize = 100
