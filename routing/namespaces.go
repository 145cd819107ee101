package routing

import "github.com/lancecat/lancecat/namespace"

// Namespaces are the namespaces this router serves from: the catalog root's and every warehouse
// root it opened (a shutting-down replica cancels their background index builds).
func (r *Router) Namespaces() []*namespace.Namespace {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := []*namespace.Namespace{r.opts.Default}
	for _, n := range r.roots {
		out = append(out, n)
	}
	return out
}
