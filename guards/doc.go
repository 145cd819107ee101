// Package guards is the one guard chain of both APIs. Every door (a Lance spec operation or a
// control-plane operation) runs its guards in the documented order before its handler:
//
//	identity → (read-only mode) → shape → parent exists → authorization → conflict → admission
//
// Identity: with authorization on, a caller without a verified principal is 401 (Identity; on
// the spec plane authentication settles it before the chain).
//
// Shape: the `?delimiter=` is the server's, ids parse and are safe (CheckDelimiter, PathID,
// CanonicalEnum, NoQueryMode, ProjectShape, WarehouseShape, ObjectShape).
//
// Parent exists and authorization: the door's action on its object, OpenFGA or disabled, an
// outage failing closed (Authorize for the spec plane, ControlChain for the control plane). No
// existence oracle by construction: a caller the check denies gets the same answer for a missing
// object as for an existing one (Oracle; Hidden on the destructive control doors).
//
// Conflict: protection, live trash and overwrite rights (NotProtected, NotTrashed,
// NamespaceNotTrashed, Overwrite, NamespaceDrop). They decide on the decoded request (mode,
// behavior, rename destination, force), so they run in the governed catalog (catalog/governed),
// which the doors that create, destroy or move call once they have decoded it: after the
// takeover's or rename destination's authorization, before the catalog acts. Quarantine (a deactivated warehouse) is answered where
// the id is routed (routing.Router.Active), which reads the warehouse record once per request.
//
// Admission: write shedding (Shedder), last, so a refused or denied request never holds a write
// slot. Read-only maintenance mode (ReadOnly) is the other replica-wide refusal; it is decided
// about the replica, not the request, so it answers right after identity (StageMode), before
// anything about the request is looked at: a write to a read-only replica is 503 however
// malformed, as it was when it ran before the gate (the governance e2e suite pins that).
//
// A door lists its guards in one place: SpecDoors for the spec plane, ControlDoors for the control
// plane (SpecChain and ControlChain build their chains; the server runs them for every routed
// request, wrapping each with the replica's guards; UnroutedChain is the chain of a request that
// is no operation); NewChain refuses a list out of the documented order.
// Guards never write anything.
package guards
