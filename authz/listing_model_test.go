package authz

import (
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	openfga "github.com/openfga/go-sdk"
	"gotest.tools/v3/assert"

	nserr "github.com/lancecat/lancecat/errors"
)

// listingChildTypes are, per listing door with a parent short-circuit, the type of the children
// it lists and the parent types FilterListing may be handed for them (the handlers pass
// NamespaceObject(parent id): a namespace, or the Catalog at the root).
var listingChildTypes = map[Action]struct {
	child   string
	parents []string
}{
	TableListEntry:     {TypeTable, []string{TypeNamespace, TypeCatalog}},
	NamespaceListEntry: {TypeNamespace, []string{TypeNamespace}},
}

// TestListingCoverIsSound proves, on the model lancecat ships, that the parent short-circuit of
// FilterListing never shows what a per-item check would hide: for every listing door, the door's
// relation on the child reaches `<cover> from parent` through nothing but unions and computed
// relations (no `and`, no `but not` on the way, so no rule can take away what the parent's
// relation grants), the child's `parent` edge may name every parent type the handlers pass, and
// each of those types defines the cover relation.
func TestListingCoverIsSound(t *testing.T) {
	defs := map[string]map[string]openfga.Userset{}
	parentTypes := map[string][]string{}
	for _, td := range theModel.request.TypeDefinitions {
		if td.Relations != nil {
			defs[td.Type] = *td.Relations
		}
		if td.Metadata != nil && td.Metadata.Relations != nil {
			if md, ok := (*td.Metadata.Relations)["parent"]; ok && md.DirectlyRelatedUserTypes != nil {
				for _, r := range *md.DirectlyRelatedUserTypes {
					parentTypes[td.Type] = append(parentTypes[td.Type], r.Type)
				}
			}
		}
	}
	assert.Equal(t, len(listingChildTypes), len(coverRelation), "every door with a short-circuit is proved here")
	for action, cover := range coverRelation {
		kinds, ok := listingChildTypes[action]
		assert.Assert(t, ok, "%s has a cover relation but no proof", action)
		relation, onParent, err := RelationFor(action)
		assert.NilError(t, err)
		assert.Assert(t, !onParent)
		var path []string
		reached := reachesParentCover(defs, kinds.child, relation, cover, map[string]bool{}, &path)
		assert.Assert(t, reached,
			"%s: %s#%s does not reach `%s from parent` through unions only", action, kinds.child, relation, cover)
		t.Logf("%s: %s", action, strings.Join(path, " ⊇ "))
		for _, p := range kinds.parents {
			assert.Assert(t, contains(parentTypes[kinds.child], p), "%s#parent cannot name a %s", kinds.child, p)
			_, ok := defs[p][cover]
			assert.Assert(t, ok, "%s has no relation %s", p, cover)
		}
	}
}

// reachesParentCover reports whether relation on typ includes `cover from parent` by union alone.
func reachesParentCover(defs map[string]map[string]openfga.Userset, typ, relation, cover string, seen map[string]bool, path *[]string) bool {
	if seen[relation] {
		return false
	}
	seen[relation] = true
	u, ok := defs[typ][relation]
	if !ok {
		return false
	}
	*path = append(*path, typ+"#"+relation)
	if reachesIn(defs, typ, u, cover, seen, path) {
		return true
	}
	*path = (*path)[:len(*path)-1]
	return false
}

func reachesIn(defs map[string]map[string]openfga.Userset, typ string, u openfga.Userset, cover string, seen map[string]bool, path *[]string) bool {
	switch {
	case u.TupleToUserset != nil:
		ttu := u.TupleToUserset
		if ttu.Tupleset.GetRelation() == "parent" && ttu.ComputedUserset.GetRelation() == cover {
			*path = append(*path, cover+" from parent")
			return true
		}
	case u.ComputedUserset != nil:
		return reachesParentCover(defs, typ, u.ComputedUserset.GetRelation(), cover, seen, path)
	case u.Union != nil:
		for _, c := range u.Union.Child {
			if reachesIn(defs, typ, c, cover, seen, path) {
				return true
			}
		}
	}
	// Direct tuples give nothing from the parent; an intersection or a difference could take away
	// what the parent grants, so a path through one proves nothing.
	return false
}

func contains(s []string, v string) bool {
	for _, x := range s {
		if x == v {
			return true
		}
	}
	return false
}

// fakeFGA answers Check from allowed (by object), counting calls; down makes it fail (500).
type fakeFGA struct {
	checks  atomic.Int64
	down    atomic.Bool
	allowed map[string]bool
}

func (f *fakeFGA) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if !strings.HasSuffix(r.URL.Path, "/check") {
		http.NotFound(w, r)
		return
	}
	f.checks.Add(1)
	if f.down.Load() {
		http.Error(w, `{"code":"internal_error","message":"down"}`, http.StatusInternalServerError)
		return
	}
	var body struct {
		TupleKey struct{ Object string } `json:"tuple_key"`
	}
	_ = json.NewDecoder(r.Body).Decode(&body)
	w.Header().Set("Content-Type", "application/json")
	if f.allowed[body.TupleKey.Object] {
		_, _ = w.Write([]byte(`{"allowed":true}`))
		return
	}
	_, _ = w.Write([]byte(`{"allowed":false}`))
}

// TestDecisionReuse: within a request a question is asked once (allow or deny); across requests
// only allows are reused, and only with the replica cache on and within its TTL; a failure is
// never remembered, never turned into an allow, and a write drops everything reused.
func TestDecisionReuse(t *testing.T) {
	yes, no := TableObject([]string{"ns", "yes"}), TableObject([]string{"ns", "no"})
	fake := &fakeFGA{allowed: map[string]bool{yes.String(): true}}
	srv := httptest.NewServer(fake)
	t.Cleanup(srv.Close)
	newAuthorizer := func(opts ...Option) *OpenFGA {
		f, err := New(srv.URL, Store{ID: "01ARZ3NDEKTSV4RRFFQ69G5FAV", ModelID: "01ARZ3NDEKTSV4RRFFQ69G5FAW"}, append(opts, WithAuditLog(slog.New(slog.DiscardHandler)))...)
		assert.NilError(t, err)
		return f
	}
	alice := User("alice")
	calls := func() int64 { return fake.checks.Swap(0) }

	t.Run("per request: each question once, allow or deny", func(t *testing.T) {
		f := newAuthorizer()
		ctx := WithDecisions(context.Background())
		for range 3 {
			assert.NilError(t, f.Check(ctx, alice, TableQuery, yes))
			assert.Equal(t, nserr.CodeOf(f.Check(ctx, alice, TableQuery, no)), nserr.PermissionDenied)
		}
		assert.Equal(t, calls(), int64(2))
		// Another request asks again: the memo lives with the request.
		assert.NilError(t, f.Check(WithDecisions(context.Background()), alice, TableQuery, yes))
		assert.Equal(t, calls(), int64(1))
		// Without a memo (a background job), every ask goes to OpenFGA.
		assert.NilError(t, f.Check(context.Background(), alice, TableQuery, yes))
		assert.NilError(t, f.Check(context.Background(), alice, TableQuery, yes))
		assert.Equal(t, calls(), int64(2))
	})

	t.Run("per request: a failure is not remembered", func(t *testing.T) {
		f := newAuthorizer()
		ctx := WithDecisions(context.Background())
		fake.down.Store(true)
		assert.Equal(t, nserr.CodeOf(f.Check(ctx, alice, TableQuery, yes)), nserr.ServiceUnavailable)
		assert.Equal(t, nserr.CodeOf(f.Check(ctx, alice, TableQuery, yes)), nserr.ServiceUnavailable)
		fake.down.Store(false)
		assert.NilError(t, f.Check(ctx, alice, TableQuery, yes))
		assert.Equal(t, calls(), int64(3))
	})

	t.Run("replica cache: off by default", func(t *testing.T) {
		f := newAuthorizer()
		assert.NilError(t, f.Check(context.Background(), alice, TableQuery, yes))
		assert.NilError(t, f.Check(context.Background(), alice, TableQuery, yes))
		assert.Equal(t, calls(), int64(2))
	})

	t.Run("replica cache: allows only, within the TTL", func(t *testing.T) {
		f := newAuthorizer(WithAllowCache(time.Minute))
		now := time.Now()
		f.allows.now = func() time.Time { return now }
		for range 3 {
			assert.NilError(t, f.Check(context.Background(), alice, TableQuery, yes))
			assert.Equal(t, nserr.CodeOf(f.Check(context.Background(), alice, TableQuery, no)), nserr.PermissionDenied)
		}
		assert.Equal(t, calls(), int64(1+3), "the allow once, every denial each time")
		// Another principal, relation or object is another question.
		assert.Equal(t, nserr.CodeOf(f.Check(context.Background(), User("bob"), TableQuery, no)), nserr.PermissionDenied)
		assert.NilError(t, f.Check(context.Background(), User("bob"), TableQuery, yes))
		assert.NilError(t, f.Check(context.Background(), alice, TableDrop, yes))
		assert.Equal(t, calls(), int64(3))
		// Past the TTL the allow is asked again.
		now = now.Add(time.Minute)
		assert.NilError(t, f.Check(context.Background(), alice, TableQuery, yes))
		assert.Equal(t, calls(), int64(1))
	})

	t.Run("replica cache: an outage never becomes an allow", func(t *testing.T) {
		f := newAuthorizer(WithAllowCache(time.Minute))
		fake.down.Store(true)
		for range 2 {
			assert.Equal(t, nserr.CodeOf(f.Check(context.Background(), alice, TableQuery, no)), nserr.ServiceUnavailable)
			assert.Equal(t, nserr.CodeOf(f.Check(context.Background(), alice, TableQuery, yes)), nserr.ServiceUnavailable)
		}
		fake.down.Store(false)
		assert.Equal(t, nserr.CodeOf(f.Check(context.Background(), alice, TableQuery, no)), nserr.PermissionDenied)
		assert.Equal(t, calls(), int64(5))
	})

	t.Run("a write drops what was reused", func(t *testing.T) {
		f := newAuthorizer(WithAllowCache(time.Minute))
		ctx := WithDecisions(context.Background())
		assert.NilError(t, f.Check(ctx, alice, TableQuery, yes))
		assert.NilError(t, f.Check(context.Background(), alice, TableQuery, yes))
		assert.Equal(t, calls(), int64(1))
		// The fake refuses writes (404): the write failed, but may have landed, so both go.
		assert.Assert(t, f.Revoke(ctx, alice.Subject(), "reader", yes) != nil)
		assert.NilError(t, f.Check(ctx, alice, TableQuery, yes))
		assert.Equal(t, calls(), int64(1), "the request's memo was dropped")
		assert.NilError(t, f.Check(context.Background(), alice, TableQuery, yes))
		assert.Equal(t, calls(), int64(0), "the replica cache refilled from the request's fresh answer")
		f.forgetDecisions(context.Background())
		assert.NilError(t, f.Check(context.Background(), alice, TableQuery, yes))
		assert.Equal(t, calls(), int64(1))
	})
}
