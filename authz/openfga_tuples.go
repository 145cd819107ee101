package authz

import (
	"context"
	"slices"

	openfga "github.com/openfga/go-sdk"

	nserr "github.com/lancecat/lancecat/errors"
)

// OpenFGA refuses more than this many tuples per write by default (--max-tuples-per-write), and
// pages reads at most this large.
const (
	maxTuplesPerWrite = 100
	readPageSize      = 100
	// Writes and deletes race other replicas' identical writes; each race costs one re-read.
	maxWriteAttempts = 3
)

func (f *OpenFGA) SeedCreate(ctx context.Context, principal Principal, object, parent Object) error {
	if err := principal.validate(); err != nil {
		return err
	}
	tuples, err := seedTuples(principal, object, parent)
	if err != nil {
		return err
	}
	// One write, so the object is never left owned but detached from its parent (or the reverse).
	return f.writeTuples(ctx, tuples, "seeding "+object.String())
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
		// The inverse edge lets whoever sees the child see the parent's metadata (can_get_metadata
		// from child); the Catalog keeps none, its readers are estate admins already.
		if theModel.relations[parent.Type]["child"] {
			tuples = append(tuples, Tuple{object.String(), "child", parent.String()})
		}
		return tuples, nil
	}
	return bad()
}

func (f *OpenFGA) RevokeAll(ctx context.Context, object Object) ([]Tuple, error) {
	if err := object.Validate(); err != nil {
		return nil, err
	}
	var removed []Tuple
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
	req := openfga.ReadRequest{TupleKey: &key, PageSize: openfga.PtrInt32(readPageSize)}
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

// exists reports whether exactly tuple t is stored.
func (f *OpenFGA) exists(ctx context.Context, t Tuple) (bool, error) {
	got, err := f.read(ctx, openfga.ReadRequestTupleKey{
		User: openfga.PtrString(t.User), Relation: openfga.PtrString(t.Relation), Object: openfga.PtrString(t.Object),
	})
	if err != nil {
		return false, err
	}
	return slices.Contains(got, t), nil
}

func (f *OpenFGA) Grant(ctx context.Context, subject Subject, relation string, object Object) error {
	t, err := grantTuple(subject, relation, object)
	if err != nil {
		return err
	}
	return f.writeTuples(ctx, []Tuple{t}, "granting "+t.String())
}

func (f *OpenFGA) Revoke(ctx context.Context, subject Subject, relation string, object Object) error {
	t, err := grantTuple(subject, relation, object)
	if err != nil {
		return err
	}
	return f.deleteTuples(ctx, []Tuple{t}, "revoking "+t.String())
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

// writeTuples writes tuples in one transaction; tuples already stored count as written. OpenFGA
// refuses a whole write for one duplicate, so after a refusal the tuples still missing are written
// again in one transaction: the result stays all-or-nothing.
func (f *OpenFGA) writeTuples(ctx context.Context, tuples []Tuple, doing string) error {
	if len(tuples) > maxTuplesPerWrite {
		return nserr.Internalf("%s: %d tuples exceed one write", doing, len(tuples))
	}
	for range maxWriteAttempts {
		refused, err := f.write(ctx, tuples, nil, doing)
		if err == nil || !refused {
			return err
		}
		missing, rerr := f.filterStored(ctx, tuples, false)
		if rerr != nil {
			return rerr
		}
		if len(missing) == len(tuples) {
			return err // refused for another reason than duplicates
		}
		if len(missing) == 0 {
			return nil
		}
		tuples = missing
	}
	return nserr.ServiceUnavailablef("%s: the tuples kept changing underneath; retry", doing)
}

// deleteTuples deletes tuples, in chunks of one write each; tuples already gone count as deleted.
func (f *OpenFGA) deleteTuples(ctx context.Context, tuples []Tuple, doing string) error {
	for chunk := range slices.Chunk(tuples, maxTuplesPerWrite) {
		if err := f.deleteChunk(ctx, chunk, doing); err != nil {
			return err
		}
	}
	return nil
}

func (f *OpenFGA) deleteChunk(ctx context.Context, tuples []Tuple, doing string) error {
	for range maxWriteAttempts {
		refused, err := f.write(ctx, nil, tuples, doing)
		if err == nil || !refused {
			return err
		}
		present, rerr := f.filterStored(ctx, tuples, true)
		if rerr != nil {
			return rerr
		}
		if len(present) == len(tuples) {
			return err
		}
		if len(present) == 0 {
			return nil
		}
		tuples = present
	}
	return nserr.ServiceUnavailablef("%s: the tuples kept changing underneath; retry", doing)
}

// filterStored keeps the tuples that are stored (stored=true) or missing (stored=false).
func (f *OpenFGA) filterStored(ctx context.Context, tuples []Tuple, stored bool) ([]Tuple, error) {
	var out []Tuple
	for _, t := range tuples {
		ok, err := f.exists(ctx, t)
		if err != nil {
			return nil, err
		}
		if ok == stored {
			out = append(out, t)
		}
	}
	return out, nil
}

// write performs one transactional write. refused reports that OpenFGA rejected it as invalid (a
// duplicate, a missing tuple, a type the model does not allow) rather than failing to perform it.
func (f *OpenFGA) write(ctx context.Context, writes, deletes []Tuple, doing string) (refused bool, err error) {
	// Whatever the outcome (a timed-out write may still have landed), answers reused from before
	// it may now be wrong: a revoke, a managed_access switch or an edge change must bite at once.
	defer f.forgetDecisions(ctx)
	ctx, cancel := context.WithTimeout(ctx, f.timeout)
	defer cancel()
	req := openfga.WriteRequest{AuthorizationModelId: &f.store.ModelID}
	if len(writes) > 0 {
		keys := make([]openfga.TupleKey, len(writes))
		for i, t := range writes {
			keys[i] = openfga.TupleKey{User: t.User, Relation: t.Relation, Object: t.Object}
		}
		req.Writes = &openfga.WriteRequestWrites{TupleKeys: keys}
	}
	if len(deletes) > 0 {
		keys := make([]openfga.TupleKeyWithoutCondition, len(deletes))
		for i, t := range deletes {
			keys[i] = openfga.TupleKeyWithoutCondition{User: t.User, Relation: t.Relation, Object: t.Object}
		}
		req.Deletes = &openfga.WriteRequestDeletes{TupleKeys: keys}
	}
	if _, _, err := f.api.OpenFgaApi.Write(ctx, f.store.ID).Body(req).Execute(); err != nil {
		if _, ok := err.(openfga.FgaApiValidationError); ok && ctx.Err() == nil {
			// OpenFGA's own message names model internals and echoes its response body: the
			// client reads ours, the cause stays for the log.
			return true, nserr.Wrap(nserr.InvalidInput, err, "the authorization service refused the change while "+doing)
		}
		return false, unavailable(ctx, doing, err)
	}
	return false, nil
}
