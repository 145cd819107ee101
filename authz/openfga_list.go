package authz

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"slices"
	"strconv"
	"time"

	openfga "github.com/openfga/go-sdk"
	"golang.org/x/sync/errgroup"

	nserr "github.com/lancecat/lancecat/errors"
)

// Filtering at listing scale. Filter decides a list of objects in a bounded number of OpenFGA
// calls rather than one Check each:
//
//  1. answers this request already has (WithDecisions) or the replica's allow cache holds;
//  2. one ListObjects of the door's relation for the caller (per request and object type), when
//     enough objects are left to be worth it: what it lists is allowed; when its answer is
//     provably complete (fewer than the server's max results, in time; see ListObjectsBounds)
//     everything else is denied;
//  3. whatever is still undecided, in server-side batch checks of batchCheckSize, batchConcurrency
//     at a time.
//
// FilterListing adds the parent short-circuit in front of all this (listing.go).

const (
	// batchCheckSize is OpenFGA's default --max-checks-per-batch-check.
	batchCheckSize = 50
	// listObjectsMin is how many undecided objects make a ListObjects worth its cost.
	listObjectsMin = 16
)

// listedObjects is one ListObjects answer: the ids listed, and whether the list is complete.
type listedObjects struct {
	ids      map[string]bool
	complete bool
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
	relation, err := f.prepareAll(ctx, principal, action, objects)
	if err != nil {
		return nil, err
	}
	return f.filterPrepared(ctx, principal, action, relation, objects)
}

// prepareAll runs prepare on every object (identity, the door's rule, the object's shape) and
// returns the door's relation.
func (f *OpenFGA) prepareAll(ctx context.Context, principal Principal, action Action, objects []Object) (string, error) {
	var relation string
	for _, o := range objects {
		r, err := f.prepare(principal, action, o)
		if err != nil {
			f.record(ctx, decisionFailure, principal, action, r.relation, o, err)
			return "", err
		}
		relation = r.relation
	}
	return relation, nil
}

// filterPrepared is Filter on objects prepareAll accepted.
func (f *OpenFGA) filterPrepared(ctx context.Context, principal Principal, action Action, relation string, objects []Object) ([]Object, error) {
	allowed, calls, err := f.decideAll(ctx, principal, relation, objects)
	if err != nil {
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
		slog.Int("objects", len(objects)), slog.Int("allowed", len(out)), slog.Int("openfga_calls", calls))
	return out, nil
}

// decideAll decides relation on every object (all validated), in as few calls as it can; calls is
// how many OpenFGA requests it made. All or nothing: any failure fails the whole answer.
func (f *OpenFGA) decideAll(ctx context.Context, principal Principal, relation string, objects []Object) (allowed []bool, calls int, err error) {
	memo := decisionsFrom(ctx)
	allowed = make([]bool, len(objects))
	var undecided []int
	for i, o := range objects {
		k := decisionKey{principal, relation, o}
		if a, ok := memo.get(k); ok {
			allowed[i] = a
			continue
		}
		if f.allows.allowed(k) {
			allowed[i] = true
			memo.put(k, true)
			continue
		}
		undecided = append(undecided, i)
	}
	if len(undecided) == 0 {
		return allowed, 0, nil
	}

	// ListObjects, per object type, once per request.
	types := map[string]bool{}
	for _, i := range undecided {
		types[objects[i].Type] = true
	}
	for typ := range types {
		listed, ok := memo.getListed(listedKey(principal, relation, typ))
		if !ok {
			if f.listBounds.MaxResults <= 0 || len(undecided) < listObjectsMin {
				continue
			}
			listed, err = f.listObjects(ctx, principal, relation, typ)
			calls++
			if err != nil {
				return nil, calls, err
			}
		}
		rest := undecided[:0:0]
		for _, i := range undecided {
			o := objects[i]
			switch {
			case o.Type != typ:
				rest = append(rest, i)
			case listed.ids[o.ID]:
				// The request's listed memo answers it again; only the replica cache is fed.
				allowed[i] = true
				f.allows.putAllow(decisionKey{principal, relation, o})
			case listed.complete:
			default:
				rest = append(rest, i)
			}
		}
		undecided = rest
	}
	if len(undecided) == 0 {
		return allowed, calls, nil
	}

	// Batch checks for the rest.
	chunks := slices.Collect(slices.Chunk(undecided, batchCheckSize))
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(f.limit)
	for _, chunk := range chunks {
		g.Go(func() error {
			objs := make([]Object, len(chunk))
			for j, i := range chunk {
				objs[j] = objects[i]
			}
			answers, err := f.batchCheck(gctx, principal, relation, objs)
			if err != nil {
				return err
			}
			for j, i := range chunk {
				allowed[i] = answers[j]
			}
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		return nil, calls + len(chunks), err
	}
	for _, i := range undecided {
		f.remember(memo, decisionKey{principal, relation, objects[i]}, allowed[i])
	}
	return allowed, calls + len(chunks), nil
}

func listedKey(principal Principal, relation, typ string) decisionKey {
	return decisionKey{principal: principal, relation: relation, object: Object{Type: typ}}
}

// listObjects lists the objects of type typ principal holds relation on, and keeps the answer in
// the request's memo.
func (f *OpenFGA) listObjects(ctx context.Context, principal Principal, relation, typ string) (listedObjects, error) {
	l, err := f.listObjectsRemote(ctx, principal, relation, typ)
	if err == nil {
		decisionsFrom(ctx).putListed(listedKey(principal, relation, typ), l)
	}
	return l, err
}

func (f *OpenFGA) listObjectsRemote(ctx context.Context, principal Principal, relation, typ string) (listedObjects, error) {
	ctx, cancel := context.WithTimeout(ctx, f.timeout)
	defer cancel()
	start := time.Now()
	resp, _, err := f.api.OpenFgaApi.ListObjects(ctx, f.store.ID).Body(openfga.ListObjectsRequest{
		AuthorizationModelId: &f.store.ModelID,
		Type:                 typ,
		Relation:             relation,
		User:                 principal.String(),
	}).Execute()
	if err != nil {
		return listedObjects{}, unavailable(ctx, "listing the "+typ+"s "+principal.String()+" holds "+relation+" on", err)
	}
	elapsed := time.Since(start)
	l := listedObjects{ids: make(map[string]bool, len(resp.GetObjects()))}
	for _, o := range resp.GetObjects() {
		if t, id, ok := cutObject(o); ok && t == typ {
			l.ids[id] = true
		}
	}
	// OpenFGA cuts a ListObjects short, silently, at its max results or its deadline: only an
	// answer that hit neither says anything about what it does not list.
	l.complete = len(resp.GetObjects()) < f.listBounds.MaxResults && elapsed < f.listBounds.Deadline
	return l, nil
}

func cutObject(s string) (typ, id string, ok bool) {
	for i := 0; i < len(s); i++ {
		if s[i] == ':' {
			return s[:i], s[i+1:], true
		}
	}
	return "", "", false
}

// batchCheck asks OpenFGA's batch-check endpoint (v1.8+) relation on each of objects (at most
// batchCheckSize). The SDK in use only emulates it with parallel Checks, so it is called directly.
// Any check the server could not answer fails the whole batch: never an allow, never silently short.
func (f *OpenFGA) batchCheck(ctx context.Context, principal Principal, relation string, objects []Object) ([]bool, error) {
	items := make([]checkItem, len(objects))
	for i, o := range objects {
		items[i] = checkItem{relation, o}
	}
	return f.batchCheckItems(ctx, principal, items)
}

// checkItem is one question of a batch check: relation on object.
type checkItem struct {
	relation string
	object   Object
}

// batchCheckItems is batchCheck for questions of any relations (at most batchCheckSize).
func (f *OpenFGA) batchCheckItems(ctx context.Context, principal Principal, checks []checkItem) ([]bool, error) {
	ctx, cancel := context.WithTimeout(ctx, f.timeout)
	defer cancel()
	doing := fmt.Sprintf("checking %d questions", len(checks))
	if len(checks) > 0 {
		doing = fmt.Sprintf("checking %s on %s and %d more", checks[0].relation, checks[0].object.String(), len(checks)-1)
	}
	type tupleKey struct {
		User     string `json:"user"`
		Relation string `json:"relation"`
		Object   string `json:"object"`
	}
	type item struct {
		TupleKey      tupleKey `json:"tuple_key"`
		CorrelationID string   `json:"correlation_id"`
	}
	req := struct {
		Checks               []item `json:"checks"`
		AuthorizationModelID string `json:"authorization_model_id"`
	}{AuthorizationModelID: f.store.ModelID}
	for i, c := range checks {
		req.Checks = append(req.Checks, item{tupleKey{principal.String(), c.relation, c.object.String()}, strconv.Itoa(i)})
	}
	body, err := json.Marshal(req)
	if err != nil {
		return nil, nserr.Internalf("%s: %w", doing, err)
	}
	hreq, err := http.NewRequestWithContext(ctx, http.MethodPost, f.url+"/stores/"+f.store.ID+"/batch-check", bytes.NewReader(body))
	if err != nil {
		return nil, nserr.Internalf("%s: %w", doing, err)
	}
	hreq.Header.Set("Content-Type", "application/json")
	if f.token != "" {
		hreq.Header.Set("Authorization", "Bearer "+f.token)
	}
	hresp, err := f.httpClient.Do(hreq)
	if err != nil {
		return nil, unavailable(ctx, doing, err)
	}
	defer func() { _ = hresp.Body.Close() }()
	raw, err := io.ReadAll(io.LimitReader(hresp.Body, 16<<20))
	if err != nil {
		return nil, unavailable(ctx, doing, err)
	}
	switch {
	case hresp.StatusCode == http.StatusBadRequest:
		return nil, nserr.Internalf("authorization service refused the request while %s: %s", doing, truncate(raw))
	case hresp.StatusCode != http.StatusOK:
		return nil, nserr.ServiceUnavailablef("authorization service answered %d while %s: %s", hresp.StatusCode, doing, truncate(raw))
	}
	var resp struct {
		Result map[string]struct {
			Allowed *bool           `json:"allowed"`
			Error   json.RawMessage `json:"error"`
		} `json:"result"`
	}
	if err := json.Unmarshal(raw, &resp); err != nil {
		return nil, nserr.ServiceUnavailablef("authorization service answer unreadable while %s: %w", doing, err)
	}
	out := make([]bool, len(checks))
	for i, c := range checks {
		r, ok := resp.Result[strconv.Itoa(i)]
		if !ok || len(r.Error) > 0 && string(r.Error) != "null" {
			return nil, nserr.ServiceUnavailablef("authorization service could not decide %s on %s while %s: %s", c.relation, c.object.String(), doing, truncate(r.Error))
		}
		out[i] = r.Allowed != nil && *r.Allowed
	}
	return out, nil
}

func truncate(b []byte) string {
	if len(b) > 512 {
		return string(b[:512]) + "…"
	}
	return string(b)
}
