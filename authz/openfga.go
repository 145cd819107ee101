package authz

import (
	"context"
	"log/slog"
	"net/http"
	"strings"
	"time"

	openfga "github.com/openfga/go-sdk"

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

	// For the listing calls the SDK lacks (batch-check) or bounds (list-objects); see openfga_list.go.
	url        string
	httpClient *http.Client
	token      string
	listBounds ListObjectsBounds

	allows *allowCache // per-replica allows (nil: off)
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
	return &OpenFGA{api: api, store: store, timeout: o.timeout, limit: o.limit, audit: o.audit,
		url: strings.TrimRight(url, "/"), httpClient: o.httpClient, token: o.token, listBounds: o.listBounds,
		allows: newAllowCache(o.allowTTL)}, nil
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
	allowed, err := f.checkPrefetching(ctx, principal, r.relation, object, prefetch[action])
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

// check asks OpenFGA whether principal holds relation on object, unless this request asked already
// (WithDecisions) or the replica's allow cache holds a fresh allow (WithAllowCache).
func (f *OpenFGA) check(ctx context.Context, principal Principal, relation string, object Object) (bool, error) {
	k := decisionKey{principal, relation, object}
	memo := decisionsFrom(ctx)
	if allowed, ok := memo.get(k); ok {
		return allowed, nil
	}
	if f.allows.allowed(k) {
		memo.put(k, true)
		return true, nil
	}
	allowed, err := f.checkRemote(ctx, principal, relation, object)
	if err != nil {
		return false, err // a failure is never remembered: the next ask tries again
	}
	f.remember(memo, k, allowed)
	return allowed, nil
}

// prefetch names, per door, the relations on the same object the request will ask next: a listing
// door's check is followed by the listing's parent short-circuit (coverRelation), so both are asked
// in one batch check and the second answer waits in the request's memo.
var prefetch = map[Action][]string{
	NamespaceListTables: {coverRelation[TableListEntry]},
	NamespaceList:       {coverRelation[NamespaceListEntry]},
}

// checkPrefetching is check, asking also (relations on the same object) in the same round trip
// when the request keeps a memo to put their answers in and relation is not answered already.
func (f *OpenFGA) checkPrefetching(ctx context.Context, principal Principal, relation string, object Object, also []string) (bool, error) {
	memo := decisionsFrom(ctx)
	k := decisionKey{principal, relation, object}
	if _, ok := memo.get(k); ok || memo == nil || len(also) == 0 || f.allows.allowed(k) {
		return f.check(ctx, principal, relation, object)
	}
	rels := []string{relation}
	for _, r := range also {
		if _, ok := memo.get(decisionKey{principal, r, object}); !ok && r != relation {
			rels = append(rels, r)
		}
	}
	if len(rels) == 1 {
		return f.check(ctx, principal, relation, object)
	}
	items := make([]checkItem, len(rels))
	for i, r := range rels {
		items[i] = checkItem{r, object}
	}
	answers, err := f.batchCheckItems(ctx, principal, items)
	if err != nil {
		return false, err // nothing remembered: the next ask tries again
	}
	for i, r := range rels {
		f.remember(memo, decisionKey{principal, r, object}, answers[i])
	}
	return answers[0], nil
}

// remember keeps an answer OpenFGA gave: in the request's memo, and an allow in the replica cache.
func (f *OpenFGA) remember(memo *requestDecisions, k decisionKey, allowed bool) {
	memo.put(k, allowed)
	if allowed {
		f.allows.putAllow(k)
	}
}

func (f *OpenFGA) checkRemote(ctx context.Context, principal Principal, relation string, object Object) (bool, error) {
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
