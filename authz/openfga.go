package authz

import (
	"context"
	"log/slog"
	"time"

	openfga "github.com/openfga/go-sdk"
	"golang.org/x/sync/errgroup"

	nserr "github.com/lancecat/lancecat/errors"
)

// OpenFGA is the Authorizer backed by an OpenFGA server. Every request is pinned to one model id,
// so a newer model written by a newer replica during a rolling deploy cannot change this replica's
// answers.
//
// Checks use OpenFGA's default consistency: if the server's check cache is enabled, a revoke can
// take up to its TTL to bite. Leave the cache off (the OpenFGA default) or accept that window.
type OpenFGA struct {
	api     *openfga.APIClient
	store   Store
	timeout time.Duration
	limit   int
	audit   *slog.Logger
}

// Store names the OpenFGA store and the model a deployment uses.
type Store struct {
	ID      string
	ModelID string
}

// New connects to the OpenFGA server at url (http(s)://host:port) using store, as EnsureStore
// returned it. It does not contact the server.
func New(url string, store Store, opts ...Option) (*OpenFGA, error) {
	if store.ID == "" || store.ModelID == "" {
		return nil, nserr.InvalidInputf("OpenFGA store and model ids are required (EnsureStore returns them)")
	}
	o := buildOptions(opts)
	api, err := newAPIClient(url, o)
	if err != nil {
		return nil, err
	}
	return &OpenFGA{api: api, store: store, timeout: o.timeout, limit: o.limit, audit: o.audit}, nil
}

func (f *OpenFGA) Enabled() bool { return true }

// Store is the store and model this authorizer is pinned to.
func (f *OpenFGA) Store() Store { return f.store }

func (f *OpenFGA) Check(ctx context.Context, principal Principal, action Action, object Object) error {
	r, err := f.prepare(principal, action, object)
	if err != nil {
		f.record(ctx, decisionFailure, principal, action, r.relation, object, err)
		return err
	}
	allowed, err := f.check(ctx, principal, r.relation, object)
	switch {
	case err != nil:
		f.record(ctx, decisionFailure, principal, action, r.relation, object, err)
		return err
	case !allowed:
		f.record(ctx, decisionDeny, principal, action, r.relation, object, nil)
		return nserr.PermissionDeniedf("%s requires %s on %s", string(action), r.relation, object.String())
	}
	f.record(ctx, decisionAllow, principal, action, r.relation, object, nil)
	return nil
}

// prepare runs the checks that need no server, in the documented order: identity (401) first, then
// the door's rule, then the object's shape.
func (f *OpenFGA) prepare(principal Principal, action Action, object Object) (rule, error) {
	if err := principal.validate(); err != nil {
		return rule{}, err
	}
	r, err := ruleFor(action, object)
	if err != nil {
		return r, err
	}
	return r, object.Validate()
}

func (f *OpenFGA) check(ctx context.Context, principal Principal, relation string, object Object) (bool, error) {
	ctx, cancel := context.WithTimeout(ctx, f.timeout)
	defer cancel()
	resp, _, err := f.api.OpenFgaApi.Check(ctx, f.store.ID).Body(openfga.CheckRequest{
		TupleKey: openfga.CheckRequestTupleKey{
			User:     principal.String(),
			Relation: relation,
			Object:   object.String(),
		},
		AuthorizationModelId: &f.store.ModelID,
	}).Execute()
	if err != nil {
		return false, unavailable(ctx, "checking "+relation+" on "+object.String(), err)
	}
	return resp.GetAllowed(), nil
}

func (f *OpenFGA) Filter(ctx context.Context, principal Principal, action Action, objects []Object) ([]Object, error) {
	if len(objects) == 0 {
		// Nothing to check, but the caller is refused exactly as a non-empty listing would be.
		if err := principal.validate(); err != nil {
			return nil, err
		}
		if _, _, err := RelationFor(action); err != nil {
			return nil, err
		}
		return objects, nil
	}
	var relation string
	for _, o := range objects {
		r, err := f.prepare(principal, action, o)
		if err != nil {
			f.record(ctx, decisionFailure, principal, action, r.relation, o, err)
			return nil, err
		}
		relation = r.relation
	}
	allowed := make([]bool, len(objects))
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(f.limit)
	for i, o := range objects {
		g.Go(func() error {
			ok, err := f.check(gctx, principal, relation, o)
			allowed[i] = ok
			return err
		})
	}
	if err := g.Wait(); err != nil {
		f.audit.LogAttrs(ctx, slog.LevelWarn, "authorization filter failed", slog.String("decision", string(decisionFailure)),
			slog.String("principal", principal.String()), slog.String("action", string(action)),
			slog.Int("objects", len(objects)), slog.String("error", err.Error()))
		return nil, err
	}
	out := make([]Object, 0, len(objects))
	for i, o := range objects {
		if allowed[i] {
			out = append(out, o)
		}
	}
	f.audit.LogAttrs(ctx, slog.LevelInfo, "authorization filter", slog.String("principal", principal.String()),
		slog.String("action", string(action)), slog.String("relation", relation),
		slog.Int("objects", len(objects)), slog.Int("allowed", len(out)))
	return out, nil
}
