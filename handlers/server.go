// Package handlers adapts HTTP to the catalog: one thin method per Lance Namespace operation that
// decodes the request (the REST conventions the official clients rely on), calls the catalog and
// encodes the answer. It never touches storage or Lance files.
package handlers

import (
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/lancecat/lancecat/authz"
	nserr "github.com/lancecat/lancecat/errors"
	"github.com/lancecat/lancecat/gen/nsapi"
	"github.com/lancecat/lancecat/ident"
)

// Server implements every operation of the generated server interface.
type Server struct {
	idRules
	catalog    Catalog
	authorizer authz.Authorizer
	views      Views // materialized views and computed columns (nil: their doors answer 406)
	vendor     CredentialVendor
}

var _ nsapi.ServerInterface = (*Server)(nil)

// Options configure the handlers.
type Options struct {
	// Delimiter joins id parts in paths; requests naming another one are refused.
	Delimiter string
	// Catalog backs the namespace and table metadata operations; nil answers them 406. The
	// lifecycle rules (takeover and rename authorization, protection, the trash, tuples, records,
	// events, filtered listings) are the catalog's: pass the governed decorator
	// (catalog/governed) to have them.
	Catalog Catalog
	// Authorizer gates the spec doors (Gate); nil or disabled: no authorization, every door as
	// before.
	Authorizer authz.Authorizer
	// Views back the materialized view doors and computed columns (package mview behind
	// catalog/governed's Views, over Catalog); nil answers them 406.
	Views Views
	// Vendor decides the storage options (credentials) handed out with table locations; nil:
	// each table's own options, unchanged.
	Vendor CredentialVendor
}

// New returns the handlers for all spec operations.
func New(opts Options) *Server {
	if opts.Delimiter == "" {
		opts.Delimiter = ident.DefaultDelimiter
	}
	return &Server{idRules: idRules{delimiter: opts.Delimiter}, catalog: opts.Catalog, authorizer: opts.Authorizer,
		views: opts.Views, vendor: opts.Vendor}
}

// Register routes every spec operation on router.
func (s *Server) Register(router nsapi.EchoRouter) {
	nsapi.RegisterHandlers(router, s)
}

// notBacked is the answer of an operation no backend serves yet: the spec's Unsupported (406,
// code 0), naming the operation so a client's error says what is missing.
func notBacked(c echo.Context, operation string) error {
	return nserr.Unsupportedf("operation %s (%s %s) is not supported by this server yet",
		operation, c.Request().Method, specPath(c.Path()))
}

// unbacked answers a door no backend serves yet once its request is decoded: err, the decode's
// error, comes first, so a malformed request is still told what is wrong with it.
//
//lint:ignore U1000 the door side of unbackedOperations: every operation is backed now; the next one that is not answers through it
func unbacked(c echo.Context, operation string, err error) error {
	if err != nil {
		return err
	}
	if why, ok := unbackedOperations[operation]; ok {
		return nserr.Unsupportedf("operation %s (%s %s) is not supported by this server: %s",
			operation, c.Request().Method, specPath(c.Path()), why)
	}
	return notBacked(c, operation)
}

// backed is err, the door's decode error; without one, 406 when no catalog backs the handlers
// (Options.Catalog nil), else nil.
func (s *Server) backed(c echo.Context, operation string, err error) error {
	if err == nil && s.catalog == nil {
		return notBacked(c, operation)
	}
	return err
}

// specPath writes an Echo route template the way the spec does ("/:id/" → "/{id}/").
func specPath(route string) string {
	parts := strings.Split(route, "/")
	for i, p := range parts {
		if strings.HasPrefix(p, ":") {
			parts[i] = "{" + p[1:] + "}"
		}
	}
	return strings.Join(parts, "/")
}
