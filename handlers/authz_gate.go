package handlers

// The spec doors' guards are the chain of package guards (guards.SpecChain, run by the server's
// door middleware for every routed request); the door table is guards.SpecDoors. What stays here
// is what the handlers lend that chain (GuardDeps).

import "github.com/lancecat/lancecat/guards"

// GuardDeps are what the spec doors' guards consult: this server's delimiter, its authorizer and
// its catalog (for the oracle rule).
func (s *Server) GuardDeps() guards.Deps {
	d := guards.Deps{Delimiter: s.delimiter, Authorizer: s.authorizer}
	if s.catalog != nil {
		d.Catalog = s.catalog
	}
	return d
}
