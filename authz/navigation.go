package authz

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"math/rand/v2"
	"net/http"
	"slices"
	"time"

	openfga "github.com/openfga/go-sdk"

	nserr "github.com/lancecat/lancecat/errors"
)

// Navigation: whoever holds a rung on a table or namespace sees the metadata of every container
// above it (namespace#can_get_metadata and warehouse#can_get_metadata: reads or navigator).
//
// The model used to say so with `can_get_metadata from child`, which OpenFGA answers by walking
// every child of the container; for a caller who reads nothing inside a namespace of a thousand
// tables that walk outlasted the request timeout (a 503 where a 403 was due). The `navigator`
// tuples say the same thing ahead of time. Their invariant, which every write below keeps and
// TestNavigatorMatchesChildWalk proves against the old model on a real OpenFGA:
//
//	navigator(S, A) is stored  ⇔  S (a user, team#member or role#assignee, exactly as a tuple names
//	it) holds a navigating rung tuple (owner, writer or reader) on some table or namespace strictly
//	below A, for A a namespace or a warehouse.
//
// That is exactly what the walk computed: a child's can_get_metadata is its reads (owner, writer,
// reader, or `reads from parent`, which the container's own `reads` already covers), or, for a
// child namespace, its own walk. A navigator tuple names the grant's subject, not its members, so a
// team's membership changes bite through OpenFGA as before.
//
//   - Grant and SeedCreate write the navigator tuples with the rung, in the same write.
//   - Revoke and RevokeAll recompute them, for the subjects whose rung went, from those subjects'
//     remaining tuples (OpenFGA Read by user, which scales with the subject's grants, not with
//     the catalog). A navigator tuple goes only when nothing else below still grants.
//   - ReconcileNavigators backfills a store written before navigator existed (every replica runs it
//     at startup; `lancecat admin navigators` runs it by hand, with --prune to drop stale ones).
//
// A grant racing a revoke of the same subject under the same container can lose the navigator
// tuple the grant needed (the recompute read the subject's tuples before the grant landed). That
// fails closed (the container's metadata is refused, nothing is shown that should not be) and
// ReconcileNavigators repairs it.

const navigatorRelation = "navigator"

// navigatingRungs are the direct rungs whose holder sees the containers above
// (TestNavigatingRungsAreReads derives them from the model).
var navigatingRungs = []string{"owner", "writer", "reader"}

// navigates reports whether tuple t is a navigating rung on a table or namespace.
func navigates(t Tuple) bool {
	typ, _, ok := cutObject(t.Object)
	return ok && (typ == TypeTable || typ == TypeNamespace) && slices.Contains(navigatingRungs, t.Relation)
}

// carriesNavigator: the container types whose can_get_metadata reads navigator.
func carriesNavigator(typ string) bool { return theModel.relations[typ][navigatorRelation] }

// parentMemo remembers parent edges read during one operation; complete: edges holds every edge of
// the store (ReconcileNavigators read them all), so a missing entry means no edge.
type parentMemo struct {
	edges    map[Object][]Object
	complete bool
}

func newParentMemo() *parentMemo { return &parentMemo{edges: map[Object][]Object{}} }

// parents returns the objects o's parent edges name (normally one).
func (f *OpenFGA) parents(ctx context.Context, o Object, memo *parentMemo) ([]Object, error) {
	if ps, ok := memo.edges[o]; ok || memo.complete {
		return ps, nil
	}
	// Below the top level the parent is the id's parent: every create seeds exactly that edge
	// (parentObject in the governed catalog; AdoptOrphan attaches an orphan where its id puts it).
	// A top-level table hangs from the Catalog. Only a top-level namespace (the Catalog or a
	// warehouse) and an id too long to decode (hashed) need the stored edge.
	if segs, ok := DecodeID(o.ID); ok && (o.Type == TypeTable || o.Type == TypeNamespace) {
		switch {
		case len(segs) > 1:
			ps := []Object{NamespaceObject(segs[:len(segs)-1])}
			memo.edges[o] = ps
			return ps, nil
		case o.Type == TypeTable:
			ps := []Object{Catalog}
			memo.edges[o] = ps
			return ps, nil
		}
	}
	edges, err := f.read(ctx, openfga.ReadRequestTupleKey{
		Relation: openfga.PtrString("parent"), Object: openfga.PtrString(o.String()),
	})
	if err != nil {
		return nil, err
	}
	var ps []Object
	for _, e := range edges {
		if typ, id, ok := cutObject(e.User); ok {
			ps = append(ps, Object{typ, id})
		}
	}
	memo.edges[o] = ps
	return ps, nil
}

// maxDepth bounds a climb (a parent cycle would otherwise never end).
const maxDepth = 64

// containers returns the namespaces and warehouse above o that carry navigator, nearest first,
// following the parent edges stored in OpenFGA (a namespace's parent is a namespace, a warehouse
// or the Catalog; nothing above a warehouse or the Catalog carries navigator).
func (f *OpenFGA) containers(ctx context.Context, o Object, memo *parentMemo) ([]Object, error) {
	var out []Object
	seen := map[Object]bool{o: true}
	frontier := []Object{o}
	for depth := 0; len(frontier) > 0; depth++ {
		if depth > maxDepth {
			return nil, nserr.Internalf("the parent edges above %s are deeper than %d (a cycle?)", o.String(), maxDepth)
		}
		var next []Object
		for _, c := range frontier {
			if c.Type != TypeTable && c.Type != TypeNamespace {
				continue // warehouses and the Catalog: their parents carry no navigator
			}
			ps, err := f.parents(ctx, c, memo)
			if err != nil {
				return nil, err
			}
			for _, p := range ps {
				if seen[p] {
					continue
				}
				seen[p] = true
				if carriesNavigator(p.Type) {
					out = append(out, p)
				}
				next = append(next, p)
			}
		}
		frontier = next
	}
	return out, nil
}

// containersFrom is containers of an object whose parent is known (a create): parent itself when it
// carries navigator, then what lies above it.
func (f *OpenFGA) containersFrom(ctx context.Context, parent Object, memo *parentMemo) ([]Object, error) {
	if parent.IsZero() || !carriesNavigator(parent.Type) {
		return nil, nil
	}
	above, err := f.containers(ctx, parent, memo)
	if err != nil {
		return nil, err
	}
	return append([]Object{parent}, above...), nil
}

func navigatorTuples(subject string, containers []Object) []Tuple {
	out := make([]Tuple, len(containers))
	for i, c := range containers {
		out[i] = Tuple{User: subject, Relation: navigatorRelation, Object: c.String()}
	}
	return out
}

// renavigate recomputes subject's navigator tuples on scope (containers above a rung that went):
// each stays only while subject still holds a navigating rung on something below it.
func (f *OpenFGA) renavigate(ctx context.Context, subject string, scope []Object, memo *parentMemo) error {
	if len(scope) == 0 {
		return nil
	}
	needed := map[Object]bool{}
	for _, typ := range []string{TypeTable, TypeNamespace} {
		key := openfga.ReadRequestTupleKey{User: openfga.PtrString(subject), Object: openfga.PtrString(typ + ":")}
		token := ""
		for len(needed) < len(scope) {
			page, next, err := f.readPage(ctx, key, token)
			if err != nil {
				return err
			}
			for _, t := range page {
				if !navigates(t) {
					continue
				}
				_, id, _ := cutObject(t.Object)
				above, err := f.containers(ctx, Object{typ, id}, memo)
				if err != nil {
					return err
				}
				for _, a := range above {
					if slices.Contains(scope, a) {
						needed[a] = true
					}
				}
			}
			if next == "" {
				break
			}
			token = next
		}
	}
	var keep, drop []Tuple
	for _, a := range scope {
		t := Tuple{User: subject, Relation: navigatorRelation, Object: a.String()}
		if needed[a] {
			keep = append(keep, t)
		} else {
			drop = append(drop, t)
		}
	}
	return f.writeIdempotent(ctx, keep, drop, "recomputing what "+subject+" navigates")
}

// NavigatorReport is what ReconcileNavigators found and did.
type NavigatorReport struct {
	Tuples  int // tuples read
	Wanted  int // navigator tuples the invariant asks for
	Written int // missing ones written
	Stale   int // stored ones the invariant does not ask for
	Pruned  int // stale ones deleted (prune only)
}

// ReconcileNavigators makes the store's navigator tuples what its rung and parent tuples ask for:
// it writes the missing ones (a store written before navigator existed, a write a crash cut short)
// and, with prune, deletes the stale ones. It reads every tuple of the store once, then rereads the
// tuples of each subject whose navigator tuples it changed (renavigate), so a grant or revoke
// racing it is not undone; it is idempotent and safe while the server runs.
func (f *OpenFGA) ReconcileNavigators(ctx context.Context, prune bool) (NavigatorReport, error) {
	var rep NavigatorReport
	parentOf := map[Object][]Object{}
	var rungs []Tuple
	stored := map[Tuple]bool{}
	token := ""
	for {
		page, next, err := f.readPage(ctx, openfga.ReadRequestTupleKey{}, token)
		if err != nil {
			return rep, err
		}
		rep.Tuples += len(page)
		for _, t := range page {
			switch {
			case t.Relation == "parent":
				ot, oid, ok1 := cutObject(t.Object)
				pt, pid, ok2 := cutObject(t.User)
				if ok1 && ok2 {
					o := Object{ot, oid}
					parentOf[o] = append(parentOf[o], Object{pt, pid})
				}
			case t.Relation == navigatorRelation:
				stored[t] = true
			case navigates(t):
				rungs = append(rungs, t)
			}
		}
		if next == "" {
			break
		}
		token = next
	}
	memo := &parentMemo{edges: parentOf, complete: true}
	want := map[Tuple]bool{}
	for _, t := range rungs {
		typ, id, _ := cutObject(t.Object)
		o := Object{typ, id}
		above, err := f.containers(ctx, o, memo)
		if err != nil {
			return rep, err
		}
		for _, a := range above {
			want[Tuple{User: t.User, Relation: navigatorRelation, Object: a.String()}] = true
		}
	}
	rep.Wanted = len(want)
	var missing, stale []Tuple
	for t := range want {
		if !stored[t] {
			missing = append(missing, t)
		}
	}
	for t := range stored {
		if !want[t] {
			stale = append(stale, t)
		}
	}
	rep.Stale = len(stale)
	for chunk := range slices.Chunk(missing, maxTuplesPerWrite) {
		if err := f.writeIdempotent(ctx, chunk, nil, "backfilling navigator tuples"); err != nil {
			return rep, err
		}
		rep.Written += len(chunk)
	}
	touched := missing
	if prune {
		for chunk := range slices.Chunk(stale, maxTuplesPerWrite) {
			if err := f.writeIdempotent(ctx, nil, chunk, "pruning navigator tuples"); err != nil {
				return rep, err
			}
			rep.Pruned += len(chunk)
		}
		touched = append(touched, stale...)
	}
	// The snapshot is pages read over time: a revoke (or a grant) landing meanwhile may have made
	// a written (pruned) tuple wrong. Each subject touched is recomputed from its tuples as they are
	// now, which reads after our write: whichever of us read last decides, on current tuples.
	scope := map[string][]Object{}
	for _, t := range touched {
		typ, id, _ := cutObject(t.Object)
		scope[t.User] = append(scope[t.User], Object{typ, id})
	}
	fresh := newParentMemo()
	for subject, containers := range scope {
		if err := f.renavigate(ctx, subject, containers, fresh); err != nil {
			return rep, err
		}
	}
	return rep, nil
}

// writeIdempotent writes and deletes tuples in one transaction, a tuple already stored counting as
// written and one already gone as deleted (OpenFGA's on_duplicate / on_missing "ignore", v1.10+;
// the SDK in use lacks them, so it is called directly). One request whatever is stored, where
// writeTuples needs a refusal and a re-read per tuple to get past a duplicate.
func (f *OpenFGA) writeIdempotent(ctx context.Context, writes, deletes []Tuple, doing string) error {
	if len(writes) == 0 && len(deletes) == 0 {
		return nil
	}
	if len(writes)+len(deletes) > maxTuplesPerWrite {
		return nserr.Internalf("%s: %d tuples exceed one write", doing, len(writes)+len(deletes))
	}
	// Whatever the outcome, answers reused from before may now be wrong (as in write).
	defer f.forgetDecisions(ctx)
	ctx, cancel := context.WithTimeout(ctx, f.timeout)
	defer cancel()
	type key struct {
		User     string `json:"user"`
		Relation string `json:"relation"`
		Object   string `json:"object"`
	}
	keys := func(ts []Tuple) []key {
		out := make([]key, len(ts))
		for i, t := range ts {
			out[i] = key(t)
		}
		return out
	}
	type writesBody struct {
		TupleKeys   []key  `json:"tuple_keys"`
		OnDuplicate string `json:"on_duplicate"`
	}
	type deletesBody struct {
		TupleKeys []key  `json:"tuple_keys"`
		OnMissing string `json:"on_missing"`
	}
	req := struct {
		Writes               *writesBody  `json:"writes,omitempty"`
		Deletes              *deletesBody `json:"deletes,omitempty"`
		AuthorizationModelID string       `json:"authorization_model_id"`
	}{AuthorizationModelID: f.store.ModelID}
	if len(writes) > 0 {
		req.Writes = &writesBody{keys(writes), "ignore"}
	}
	if len(deletes) > 0 {
		req.Deletes = &deletesBody{keys(deletes), "ignore"}
	}
	body, err := json.Marshal(req)
	if err != nil {
		return nserr.Internalf("%s: %w", doing, err)
	}
	// A write may lose a race with another transaction writing the same tuples (replicas starting
	// together, each granting --estate-admins; two grants of one rung): OpenFGA on a SQL datastore
	// answers 409 Aborted "transactional write failed due to conflict". The write is idempotent
	// (duplicates and missing tuples are ignored), so it is simply tried again: the next attempt
	// finds the other transaction's tuples and ignores them.
	backoff := 10 * time.Millisecond
	for attempt := 1; ; attempt++ {
		status, raw, err := f.postWrite(ctx, body, doing)
		switch {
		case err != nil:
			return err
		case status == http.StatusOK:
			return nil
		case status == http.StatusBadRequest:
			// As in write: the client reads our words, OpenFGA's (model internals) stay for the log.
			return nserr.InvalidInputf("the authorization service refused the change while %s: %s", doing, truncate(raw))
		case status == http.StatusConflict && attempt < maxConflictAttempts:
			select {
			case <-ctx.Done():
				return unavailable(ctx, doing, ctx.Err())
			case <-time.After(backoff + time.Duration(rand.Int64N(int64(backoff)))):
			}
			backoff *= 2
			continue
		}
		return nserr.ServiceUnavailablef("authorization service answered %d while %s: %s", status, doing, truncate(raw))
	}
}

// maxConflictAttempts bounds the retries of an idempotent write that lost a transaction race.
const maxConflictAttempts = 6

// postWrite sends one Write request body and answers OpenFGA's status and body.
func (f *OpenFGA) postWrite(ctx context.Context, body []byte, doing string) (int, []byte, error) {
	hreq, err := http.NewRequestWithContext(ctx, http.MethodPost, f.url+"/stores/"+f.store.ID+"/write", bytes.NewReader(body))
	if err != nil {
		return 0, nil, nserr.Internalf("%s: %w", doing, err)
	}
	hreq.Header.Set("Content-Type", "application/json")
	if f.token != "" {
		hreq.Header.Set("Authorization", "Bearer "+f.token)
	}
	hresp, err := f.httpClient.Do(hreq)
	if err != nil {
		return 0, nil, unavailable(ctx, doing, err)
	}
	defer func() { _ = hresp.Body.Close() }()
	raw, _ := io.ReadAll(io.LimitReader(hresp.Body, 1<<20))
	return hresp.StatusCode, raw, nil
}
