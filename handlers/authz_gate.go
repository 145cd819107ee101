package handlers

// The spec doors' guards are the chain of package guards (guards.SpecChain, run by the server's
// door middleware for every routed request); the door table is guards.SpecDoors. What stays here
// is what the handlers lend that chain (GuardDeps) and the small adapters authz_tuples.go uses.

import (
	"context"

	"github.com/lancecat/lancecat/authz"
	"github.com/lancecat/lancecat/guards"
	"github.com/lancecat/lancecat/ident"
)

// Kinds of object a spec door acts on (guards.Kind, as authz_tuples.go spells them).
const (
	doorTable     = string(guards.KindTable)
	doorNamespace = string(guards.KindNamespace)
)

// governed reports whether decisions are real.
func (s *Server) governed() bool { return guards.Authorizes(s.authorizer) }

// GuardDeps are what the spec doors' guards consult: this server's delimiter, its authorizer and
// its catalog (for the oracle rule).
func (s *Server) GuardDeps() guards.Deps {
	d := guards.Deps{Delimiter: s.delimiter, Authorizer: s.authorizer}
	if s.catalog != nil {
		d.Catalog = s.catalog
	}
	return d
}

// objectOf is the authorization object of a spec door's id.
func objectOf(kind string, id ident.ID) authz.Object {
	if kind == doorTable {
		return authz.TableObject(id)
	}
	return authz.NamespaceObject(id)
}

// exists reports whether the table or namespace id exists (false on any error).
func exists(ctx context.Context, catalog Catalog, kind string, id ident.ID) bool {
	if kind == doorTable {
		return catalog.TableExists(ctx, id) == nil
	}
	return catalog.NamespaceExists(ctx, id) == nil
}
