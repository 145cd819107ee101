package guards

import (
	"context"
	"fmt"

	"github.com/lancecat/lancecat/authz"
	"github.com/lancecat/lancecat/ident"
)

// Stage is a guard's place in the documented order.
type Stage int

// The stages, in the order every door runs them. StageMode (read-only maintenance mode) is
// decided about the replica, not the request: it answers right after identity, before anything
// about the request is looked at, so a write to a read-only replica is 503 however malformed
// (the governance e2e suite pins that). Write shedding is admission, last.
const (
	StageIdentity Stage = iota
	StageMode
	StageShape
	StageParent
	StageAuthorization
	StageConflict
	StageAdmission
)

var stageNames = [...]string{"identity", "mode", "shape", "parent", "authorization", "conflict", "admission"}

func (s Stage) String() string {
	if s < 0 || int(s) >= len(stageNames) {
		return fmt.Sprintf("stage(%d)", int(s))
	}
	return stageNames[s]
}

// Request is what the guards of one request decide on. The transport fills what it knows before
// the chain runs (operation, route, raw path parameters, principal); shape guards fill the parsed
// values the later guards use.
type Request struct {
	// Op is the operation id ("CreateTable", "DescribeWarehouse"); "" for a request that is no
	// operation (probes, unrouted paths).
	Op string
	// Method and Route are the HTTP method and the matched Echo route template
	// ("/v1/table/:id/describe"), never the request path.
	Method, Route string
	// Param returns a raw (still escaped) path parameter; nil: none.
	Param func(name string) string
	// Query returns a query parameter and whether it was sent; nil: none.
	Query func(name string) (string, bool)
	// Principal is who the request acts as.
	Principal authz.Principal

	// ID is the object's id once PathID parsed it.
	ID ident.ID

	release []func()
}

func (r *Request) param(name string) string {
	if r.Param == nil {
		return ""
	}
	return r.Param(name)
}

func (r *Request) query(name string) (string, bool) {
	if r.Query == nil {
		return "", false
	}
	return r.Query(name)
}

type requestKey struct{}

// WithRequest hands r on with ctx, once the chain has passed it: the handler acts on what the
// guards decided on (the id PathID parsed), never on a parse of its own.
func WithRequest(ctx context.Context, r *Request) context.Context {
	return context.WithValue(ctx, requestKey{}, r)
}

// RequestFrom is the request the chain passed (WithRequest); nil: no chain ran.
func RequestFrom(ctx context.Context) *Request {
	r, _ := ctx.Value(requestKey{}).(*Request)
	return r
}

// Defer runs f once the request is done (a guard that holds something, e.g. a write slot).
func (r *Request) Defer(f func()) { r.release = append(r.release, f) }

// Guard is one check of a door.
type Guard struct {
	Stage Stage
	Name  string
	Check func(ctx context.Context, r *Request) error
}

// Chain is a door's guards in the documented order.
type Chain []Guard

// NewChain returns the guards as a chain, and panics when they are out of the documented order:
// a door table is code, and a misordered door is a bug to catch at start-up, not at request time.
func NewChain(gs ...Guard) Chain {
	for i := 1; i < len(gs); i++ {
		if gs[i].Stage < gs[i-1].Stage {
			panic(fmt.Sprintf("guards: %s guard %q after %s guard %q", gs[i].Stage, gs[i].Name, gs[i-1].Stage, gs[i-1].Name))
		}
	}
	return Chain(gs)
}

// Then is the chain with more guards after it, still in order.
func (c Chain) Then(gs ...Guard) Chain {
	return NewChain(append(append([]Guard(nil), c...), gs...)...)
}

// Run runs the chain on r and stops at the first refusal. done releases what the guards hold
// (call it once the handler is done, also after a refusal).
func (c Chain) Run(ctx context.Context, r *Request) (done func(), err error) {
	done = func() {
		for i := len(r.release) - 1; i >= 0; i-- {
			r.release[i]()
		}
		r.release = nil
	}
	for _, g := range c {
		if err := g.Check(ctx, r); err != nil {
			return done, err
		}
	}
	return done, nil
}

// Stages lists the chain's stages, for tests and documentation.
func (c Chain) Stages() []Stage {
	out := make([]Stage, len(c))
	for i, g := range c {
		out[i] = g.Stage
	}
	return out
}
