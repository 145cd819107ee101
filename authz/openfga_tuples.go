package authz

import (
	"context"
	"slices"

	openfga "github.com/openfga/go-sdk"
	"golang.org/x/sync/errgroup"

	nserr "github.com/lancecat/lancecat/errors"
)

// OpenFGA refuses more than this many tuples per write by default (--max-tuples-per-write), and
// pages reads at most this large.
const (
	maxTuplesPerWrite = 100
	readPageSize      = 100
)

func (f *OpenFGA) SeedCreate(ctx context.Context, principal Principal, object, parent Object) error {
	tuples, err := f.seedPlan(ctx, principal, object, parent)
	if err != nil {
		return err
	}
	// One write, so the object is never left owned but detached from its parent (or the reverse),
	// nor owned by a creator who cannot see where it lies.
	return f.writeTuples(ctx, tuples, "seeding "+object.String())
}

// seedPlan is what SeedCreate writes: the seed tuples and the creator's navigator tuples on every
// container above (navigation.go), whose finding is SeedCreate's only read.
func (f *OpenFGA) seedPlan(ctx context.Context, principal Principal, object, parent Object) ([]Tuple, error) {
	if err := principal.validate(); err != nil {
		return nil, err
	}
	tuples, err := seedTuples(principal, object, parent)
	if err != nil {
		return nil, err
	}
	if object.Type == TypeTable || object.Type == TypeNamespace {
		above, err := f.containersFrom(ctx, parent, newParentMemo())
		if err != nil {
			return nil, err
		}
		tuples = append(tuples, navigatorTuples(principal.String(), above)...)
	}
	return tuples, nil
}

// SeedPlan is a create's authorization bookkeeping prepared while the catalog commits: what
// RevokeAll and SeedCreate would read is read, nothing is written. Commit it once the catalog's
// create stands.
type SeedPlan struct {
	f         *OpenFGA
	object    Object
	tuples    []Tuple
	leftovers bool
}

// PrepareSeed reads, for a create of object under parent by principal, whether any tuple still
// names object (an earlier object at this id) and what SeedCreate will write. It writes nothing,
// so it may run alongside the catalog commit: a create that fails leaves no trace, and one that
// wins finds the id as it was read, because only a create that commits this id seeds it.
func (f *OpenFGA) PrepareSeed(ctx context.Context, principal Principal, object, parent Object) (*SeedPlan, error) {
	p := &SeedPlan{f: f, object: object}
	g, gctx := errgroup.WithContext(ctx)
	g.Go(func() (err error) {
		p.tuples, err = f.seedPlan(gctx, principal, object, parent)
		return err
	})
	g.Go(func() error {
		left, err := f.tuplesNaming(gctx, object)
		p.leftovers = len(left) > 0
		return err
	})
	if err := g.Wait(); err != nil {
		return nil, err
	}
	return p, nil
}

// Commit clears what an earlier object at the id left (RevokeAll, only when PrepareSeed found
// anything) and writes the seed in one write: after the catalog commit, one OpenFGA request for a
// fresh id.
func (p *SeedPlan) Commit(ctx context.Context) error {
	if p.leftovers {
		if _, err := p.f.RevokeAll(ctx, p.object); err != nil {
			return err
		}
	}
	return p.f.writeTuples(ctx, p.tuples, "seeding "+p.object.String())
}

// seedTuples are the tuples recording that principal created object under parent.
func seedTuples(principal Principal, object, parent Object) ([]Tuple, error) {
	if err := object.Validate(); err != nil {
		return nil, err
	}
	if !parent.IsZero() {
		if err := parent.Validate(); err != nil {
			return nil, err
		}
	}
	bad := func() ([]Tuple, error) {
		return nil, nserr.Internalf("cannot seed %s under parent %s", object.String(), describe(parent))
	}
	switch object.Type {
	case TypeProject:
		if !parent.IsZero() {
			return bad()
		}
		return []Tuple{{principal.String(), "admin", object.String()}}, nil
	case TypeWarehouse:
		if parent.Type != TypeProject {
			return bad()
		}
		return []Tuple{
			{principal.String(), "owner", object.String()},
			{parent.String(), "project", object.String()},
		}, nil
	case TypeNamespace, TypeTable:
		allowed := namespaceParents
		if object.Type == TypeTable {
			allowed = tableParents
		}
		if !slices.Contains(allowed, parent.Type) {
			return bad()
		}
		tuples := []Tuple{
			{principal.String(), "owner", object.String()},
			{parent.String(), "parent", object.String()},
		}
		// The inverse edge: no relation reads it any more (navigator took over can_get_metadata
		// from child), but replicas of the previous version do during a rolling upgrade, so it is
		// still written (and RevokeAll still clears it). The Catalog keeps none.
		if theModel.relations[parent.Type]["child"] {
			tuples = append(tuples, Tuple{object.String(), "child", parent.String()})
		}
		return tuples, nil
	}
	return bad()
}

func (f *OpenFGA) RevokeAll(ctx context.Context, object Object) (removed []Tuple, err error) {
	if err := object.Validate(); err != nil {
		return nil, err
	}
	// The subjects whose rung on object goes may no longer navigate the containers above it: once
	// the tuples are gone (or the attempt failed part way), recompute theirs. The containers are
	// found before anything is deleted (the object's own parent edge goes too), and only when
	// there is something to delete: a create clears its id first, and that must stay one read.
	var above []Object
	found := !(object.Type == TypeTable || object.Type == TypeNamespace)
	memo := newParentMemo()
	defer func() {
		done := map[string]bool{}
		for _, t := range removed {
			if t.Object != object.String() || !navigates(t) || done[t.User] {
				continue
			}
			done[t.User] = true
			if rerr := f.renavigate(ctx, t.User, above, memo); rerr != nil && err == nil {
				err = rerr
			}
		}
	}()
	// Reading the first page again after deleting it, rather than following a continuation token,
	// pages through any number of tuples and also catches tuples written while we work.
	for range maxRevokeRounds {
		page, err := f.tuplesNaming(ctx, object)
		if err != nil {
			return removed, err
		}
		if len(page) == 0 {
			return removed, nil
		}
		if !found {
			if above, err = f.containers(ctx, object, memo); err != nil {
				return removed, err
			}
			found = true
		}
		if err := f.deleteTuples(ctx, page, "revoking "+object.String()); err != nil {
			return removed, err
		}
		removed = append(removed, page...)
	}
	return removed, nserr.ServiceUnavailablef("revoking %s: tuples kept appearing after %d rounds", object.String(), maxRevokeRounds)
}

// maxRevokeRounds bounds RevokeAll: each round deletes up to a page per query, so this allows a
// hundred thousand tuples on one object before giving up.
const maxRevokeRounds = 1000

// tuplesNaming returns up to a page of the tuples on object, plus up to a page per place where
// object can be a tuple's user (its inverse edge on its parent, its children's edges to it, a
// team's or role's usersets).
func (f *OpenFGA) tuplesNaming(ctx context.Context, object Object) ([]Tuple, error) {
	page, err := f.read(ctx, openfga.ReadRequestTupleKey{Object: openfga.PtrString(object.String())})
	if err != nil {
		return nil, err
	}
	for _, ref := range theModel.referrers[object.Type] {
		user := object.String()
		if ref.userset != "" {
			user += "#" + ref.userset
		}
		more, err := f.read(ctx, openfga.ReadRequestTupleKey{
			User:   openfga.PtrString(user),
			Object: openfga.PtrString(ref.objectType + ":"),
		})
		if err != nil {
			return nil, err
		}
		for _, t := range more {
			if !slices.Contains(page, t) {
				page = append(page, t)
			}
		}
	}
	return page, nil
}

// Grants lists the tuples of relation on object ("" relation: every relation), every page.
func (f *OpenFGA) Grants(ctx context.Context, relation string, object Object) ([]Tuple, error) {
	if err := object.Validate(); err != nil {
		return nil, err
	}
	key := openfga.ReadRequestTupleKey{Object: openfga.PtrString(object.String())}
	if relation != "" {
		key.Relation = openfga.PtrString(relation)
	}
	var out []Tuple
	token := ""
	for {
		page, next, err := f.readPage(ctx, key, token)
		if err != nil {
			return nil, err
		}
		out = append(out, page...)
		if next == "" {
			return out, nil
		}
		token = next
	}
}

func (f *OpenFGA) read(ctx context.Context, key openfga.ReadRequestTupleKey) ([]Tuple, error) {
	out, _, err := f.readPage(ctx, key, "")
	return out, err
}

// readPage reads one page of tuples matching key from continuation token ("" the first).
func (f *OpenFGA) readPage(ctx context.Context, key openfga.ReadRequestTupleKey, token string) ([]Tuple, string, error) {
	ctx, cancel := context.WithTimeout(ctx, f.timeout)
	defer cancel()
	req := openfga.ReadRequest{PageSize: openfga.PtrInt32(readPageSize)}
	if key.User != nil || key.Relation != nil || key.Object != nil {
		req.TupleKey = &key // none at all: every tuple of the store
	}
	if token != "" {
		req.ContinuationToken = openfga.PtrString(token)
	}
	resp, _, err := f.api.OpenFgaApi.Read(ctx, f.store.ID).Body(req).Execute()
	if err != nil {
		return nil, "", unavailable(ctx, "reading tuples", err)
	}
	out := make([]Tuple, 0, len(resp.Tuples))
	for _, t := range resp.Tuples {
		out = append(out, Tuple{User: t.Key.User, Relation: t.Key.Relation, Object: t.Key.Object})
	}
	return out, resp.GetContinuationToken(), nil
}

func (f *OpenFGA) Grant(ctx context.Context, subject Subject, relation string, object Object) error {
	t, err := grantTuple(subject, relation, object)
	if err != nil {
		return err
	}
	tuples := []Tuple{t}
	if navigates(t) {
		// The grantee navigates every container above, from the same write (navigation.go).
		above, err := f.containers(ctx, object, newParentMemo())
		if err != nil {
			return err
		}
		tuples = append(tuples, navigatorTuples(t.User, above)...)
	}
	return f.writeTuples(ctx, tuples, "granting "+t.String())
}

func (f *OpenFGA) Revoke(ctx context.Context, subject Subject, relation string, object Object) error {
	t, err := grantTuple(subject, relation, object)
	if err != nil {
		return err
	}
	if !navigates(t) {
		return f.deleteTuples(ctx, []Tuple{t}, "revoking "+t.String())
	}
	if err := f.deleteTuples(ctx, []Tuple{t}, "revoking "+t.String()); err != nil {
		return err
	}
	// What the subject navigated through this rung goes, unless something else below still grants.
	// A failure here leaves the rung revoked and is reported: revoking again finishes the job.
	memo := newParentMemo()
	above, err := f.containers(ctx, object, memo)
	if err != nil {
		return err
	}
	return f.renavigate(ctx, t.User, above, memo)
}

func grantTuple(subject Subject, relation string, object Object) (Tuple, error) {
	if err := object.Validate(); err != nil {
		return Tuple{}, err
	}
	if err := subject.validate(); err != nil {
		return Tuple{}, err
	}
	if !theModel.grantable[object.Type][relation] {
		return Tuple{}, nserr.InvalidInputf("%q cannot be granted on a %s", relation, object.Type)
	}
	// Refused here, in our words, rather than by OpenFGA in its own (which name model internals).
	if form := subject.form(); !slices.Contains(theModel.subjects[object.Type][relation], form) {
		if subject == Everyone {
			return Tuple{}, nserr.InvalidInputf("%q cannot be granted to everyone (user:*) on a %s: grant it to a user, team or role", relation, object.Type)
		}
		return Tuple{}, nserr.InvalidInputf("%q on a %s cannot be granted to %q", relation, object.Type, string(subject))
	}
	return Tuple{User: string(subject), Relation: relation, Object: object.String()}, nil
}

// writeTuples writes tuples in one transaction; tuples already stored count as written (one
// request whatever is stored: writeIdempotent).
func (f *OpenFGA) writeTuples(ctx context.Context, tuples []Tuple, doing string) error {
	return f.writeIdempotent(ctx, tuples, nil, doing)
}

// deleteTuples deletes tuples, in chunks of one write each; tuples already gone count as deleted.
func (f *OpenFGA) deleteTuples(ctx context.Context, tuples []Tuple, doing string) error {
	for chunk := range slices.Chunk(tuples, maxTuplesPerWrite) {
		if err := f.writeIdempotent(ctx, nil, chunk, doing); err != nil {
			return err
		}
	}
	return nil
}
