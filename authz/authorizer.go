package authz

import "context"

// Authorizer decides and records who may do what. Both implementations (Disabled, OpenFGA) satisfy
// it; a consumer that needs less should declare its own narrower interface.
//
// Errors carry spec codes: a denial is PermissionDenied (15), a missing or unusable principal is
// Unauthenticated (16), an authorization service that is down, slow or misconfigured is
// ServiceUnavailable (17). No error path ever allows.
type Authorizer interface {
	// Enabled reports whether decisions are real (false: every caller is an estate admin).
	Enabled() bool

	// Check returns nil when principal may pass door action on object. For a door checked on the
	// parent (RelationFor's onParent: creates, and warehouse doors gated by their project), object
	// is that parent.
	Check(ctx context.Context, principal Principal, action Action, object Object) error

	// Filter returns the objects principal may pass door action on, in their input order. It is
	// all or nothing: any failed check fails the call, so a listing is never silently short.
	//
	// Listings paginate AFTER filtering: read a page from the store, filter it, and keep reading
	// until the page is full or the store is exhausted; the cursor is the last name returned, never
	// a count of unfiltered rows (that would leak how many hidden objects lie between pages, and
	// pages would come back short or empty).
	Filter(ctx context.Context, principal Principal, action Action, objects []Object) ([]Object, error)

	// SeedCreate records that principal created object under parent, in one write: the creator's
	// rung (owner; admin on a project), the structural edge to the parent, and its inverse where
	// the parent keeps one. parent is zero only for a project. Idempotent. If it fails, the caller
	// undoes its native create: an object without tuples has no owner and no inherited grants.
	SeedCreate(ctx context.Context, principal Principal, object, parent Object) error

	// RevokeAll deletes every tuple on object and every structural edge naming it (its inverse edge
	// on the parent, its children's edges to it), and returns what it removed. Call it after the
	// destroy commits; a recoverable drop keeps its tuples so the owner can undrop.
	RevokeAll(ctx context.Context, object Object) ([]Tuple, error)

	// Grant gives subject a directly assignable relation on object; granting what is held is a
	// no-op. Structural and derived relations are refused (InvalidInput).
	Grant(ctx context.Context, subject Subject, relation string, object Object) error

	// Revoke removes a grant; revoking what is not held is a no-op.
	Revoke(ctx context.Context, subject Subject, relation string, object Object) error
}

// Tuple is one relationship as OpenFGA stores it.
type Tuple struct {
	User     string
	Relation string
	Object   string
}

func (t Tuple) String() string { return t.Object + "#" + t.Relation + "@" + t.User }

var (
	_ Authorizer = Disabled{}
	_ Authorizer = (*OpenFGA)(nil)
)
