// Package governance is the control-plane lifecycle above the Lance spec: projects (tenants) and
// warehouses (the buckets a project's namespaces live in), their protection and quarantine, and the
// control events every lifecycle change emits. It keeps its state in registry records on the
// control root and its permissions in the authorizer, and knows nothing about HTTP.
//
// Every door runs the same guards in the same order, so a refusal leaves nothing half-made:
//
//	identity 401 → shape 400 → parent exists 404 → authorization 403 → conflict 409 → write → tuples → events
//
// Destructive doors on control objects (delete, deactivate, activate, protection) answer a caller
// who may not act exactly like a missing object: same code, same message. Create doors do the
// opposite on purpose and name the fix (an unknown project is 404 naming POST /v1/projects, for
// every caller).
package governance

import (
	"context"
	"errors"
	"log/slog"
	"time"

	"github.com/lancecat/lancecat/authz"
	nserr "github.com/lancecat/lancecat/errors"
	"github.com/lancecat/lancecat/ident"
	"github.com/lancecat/lancecat/registry"
)

// Service runs the control-plane lifecycle.
type Service struct {
	store   *registry.Store
	authz   authz.Authorizer
	buckets Buckets
	events  *Events
	now     func() time.Time
	log     *slog.Logger
	objects Objects
	delim   string
}

// Options build a Service.
type Options struct {
	Store      *registry.Store  // the control root's records (required)
	Authorizer authz.Authorizer // default authz.Disabled{}
	Buckets    Buckets          // where warehouses live (required for warehouse creates and purges)
	Events     *Events          // default NewEvents(DefaultEventBuffer)
	Now        func() time.Time // default time.Now
	Logger     *slog.Logger     // default: discard
	// Objects answers whether a table or namespace exists (the catalog behind the spec routes);
	// nil: the protection and policy doors do not check that their object exists.
	Objects Objects
	// Delimiter joins id parts in messages and routes named in them; default "$".
	Delimiter string
}

// Objects is what the protection and policy doors need of the catalog: whether the object they
// are about exists. Both methods answer nil, or a typed not-found error (TableNotFound,
// NamespaceNotFound), or another typed failure. *namespace.Namespace satisfies it.
type Objects interface {
	TableExists(ctx context.Context, id ident.ID) error
	NamespaceExists(ctx context.Context, id ident.ID) error
}

// New returns the service.
func New(opts Options) (*Service, error) {
	if opts.Store == nil {
		return nil, errors.New("governance: no registry store")
	}
	if opts.Authorizer == nil {
		opts.Authorizer = authz.Disabled{}
	}
	if opts.Events == nil {
		opts.Events = NewEvents(DefaultEventBuffer)
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	if opts.Delimiter == "" {
		opts.Delimiter = ident.DefaultDelimiter
	}
	return &Service{
		store: opts.Store, authz: opts.Authorizer, buckets: opts.Buckets,
		events: opts.Events, now: opts.Now, log: opts.Logger,
		objects: opts.Objects, delim: opts.Delimiter,
	}, nil
}

// Events is the service's event buffer.
func (s *Service) Events() *Events { return s.events }

// Authorizer is the service's authorizer, for the control doors' guard chain (guards.ControlChain).
func (s *Service) Authorizer() authz.Authorizer { return s.authz }

// AuthorizationEnabled reports whether decisions are real.
func (s *Service) AuthorizationEnabled() bool { return s.authz.Enabled() }

// caller is the first guard of every door: with authorization on, a request without a verified
// principal is 401 before anything about the request is looked at. With it off, everyone is the
// anonymous estate admin.
func (s *Service) caller(p authz.Principal) (authz.Principal, error) {
	if !s.authz.Enabled() {
		if p == "" {
			return authz.Anonymous, nil
		}
		return p, nil
	}
	if p.IsAnonymous() {
		return "", nserr.Unauthenticatedf("authorization is on: present an API key (x-api-key) or a bearer token")
	}
	return p, nil
}

// actor is how records and events name who acted.
func actor(p authz.Principal) string {
	if p.IsAnonymous() {
		return string(authz.Anonymous)
	}
	return p.String()
}

// hidden answers a denial on a destructive control door exactly like a missing object: any
// PermissionDenied becomes notFound itself. Other failures (401, 503) pass unchanged.
func hidden(err error, notFound error) error {
	if errors.Is(err, nserr.ErrPermissionDenied) {
		return notFound
	}
	return err
}

// emit records one lifecycle change.
func (s *Service) emit(ctx context.Context, typ string, p authz.Principal, object string, attrs map[string]string) {
	ev := s.events.Emit(Event{Type: typ, At: s.now().UTC(), Actor: actor(p), Object: object, Attributes: attrs})
	s.log.LogAttrs(ctx, slog.LevelInfo, "control event", slog.String("type", ev.Type), slog.String("cursor", ev.Cursor),
		slog.String("actor", ev.Actor), slog.String("object", ev.Object))
}

// registryError types a registry failure nobody expected (a malformed record is already 503).
func registryError(err error) error {
	if nserr.Coded(err) {
		return err
	}
	if errors.Is(err, registry.ErrChanged) {
		return nserr.Wrap(nserr.ConcurrentModification, err, "the record kept changing under concurrent writers; retry")
	}
	return nserr.Wrap(nserr.ServiceUnavailable, err, "the control root did not answer")
}

// Page bounds a listing.
type Page struct {
	Limit int    // <= 0: DefaultPageSize
	Token string // the last id of the previous page
}

// DefaultPageSize and MaxPageSize bound listings.
const (
	DefaultPageSize = 100
	MaxPageSize     = 1000
)

func (p Page) limit() int {
	switch {
	case p.Limit <= 0:
		return DefaultPageSize
	case p.Limit > MaxPageSize:
		return MaxPageSize
	}
	return p.Limit
}
