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
)
