package handlers

// The LanceDB remote-mode dialect (lancedb.connect("db://…", {apiKey, hostOverride})): the same
// REST surface as the spec, with a trailing slash on every table route and a few reply shapes of
// its own (README, "LanceDB clients in remote mode"). Where the two clients need different answers,
// the handler asks IsRemote.

import (
	"context"
	"net/http"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/lancecat/lancecat/gen/nsapi"
	"github.com/lancecat/lancecat/ident"
)

type remoteKey struct{}

// MarkRemote records on r's context whether r comes from a remote-mode client: its path ended in
// a slash (every remote table route does; the transport drops the slash before routing) or its
// User-Agent is a LanceDB client's. trailingSlash is whether the path the client sent had one.
func MarkRemote(r *http.Request, trailingSlash bool) *http.Request {
	if !trailingSlash && !strings.HasPrefix(r.Header.Get("User-Agent"), "LanceDB-") {
		return r
	}
	return r.WithContext(context.WithValue(r.Context(), remoteKey{}, true))
}

// IsRemote reports whether the request comes from a remote-mode client (MarkRemote).
func IsRemote(c echo.Context) bool {
	v, _ := c.Request().Context().Value(remoteKey{}).(bool)
	return v
}

// Headers of the remote dialect.
const (
	// VersionHeader is the dataset version a query or count answer reflects; remote clients
	// learn their read freshness from it.
	VersionHeader = "x-lancedb-version"
	// ServerVersionHeader is the server's protocol version as the remote client reads it
	// (rust/lancedb remote/db.rs ServerVersion, 0.31.0 and 0.39.0 alike): from 0.2.0 it sends
	// several query vectors in one request (answered with query_index), from 0.3.0 the
	// structured full-text query (without it a fuzzy or boosted match arrives as its bare terms,
	// a boolean query as "", a phrase without its slop). Never 0.4.0: that turns large adds
	// into multipart_write, which is not in the spec.
	ServerVersionHeader = "phalanx-version"
	// ServerVersion is what ServerVersionHeader says.
	ServerVersion = "0.3.0"
)

// remoteTableNames answers the remote dialect's `GET /v1/table/`, a connection's tableNames()
// (reference §3): the tables of the root namespace by name, in name order, resuming after the
// page token (the last name the caller saw), as LanceDB Cloud and an embedded database list them.
// The spec's ListAllTables on the same route lists every namespace's tables by full id: a remote
// client would show ns$t as a table of its root, and opening that name would address the table t
// of namespace ns, not a root table named "ns$t".
func (s *Server) remoteTableNames(c echo.Context, token string, limit int) error {
	page, err := s.catalog.ListTables(c.Request().Context(), ident.ID{}, token, limit)
	if err != nil {
		return err
	}
	return writeJSON(c, nsapi.ListTablesResponse{Tables: orEmpty(page.Names), PageToken: pageToken(page.NextToken)})
}

// remoteRenameDestination is the destination namespace of a remote client's rename, given the
// one its body named (nil: none). The remote client sends `new_namespace` only when the
// destination is not the root (lancedb rust/lancedb/src/remote/db.rs, rename_table: the field is
// left out for an empty new_namespace_path), and its bindings fill an omitted newNamespacePath
// with the table's own namespace before that: a remote rename without the field is a move to the
// root namespace. A spec client's absent field keeps the table's namespace.
func remoteRenameDestination(c echo.Context, named ident.ID) ident.ID {
	if named == nil && IsRemote(c) {
		return ident.ID{}
	}
	return named
}
