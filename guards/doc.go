// Package guards is the one guard chain of both APIs. Every door (a Lance spec operation or a
// control-plane operation) runs its guards in the documented order before its handler:
//
//	identity → shape → parent exists → authorization → conflict → admission
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
// behavior, rename destination, force), so the doors that create, destroy or move call them once
// they have decoded it, before they act. Quarantine (a deactivated warehouse) is answered where
// the id is routed (routing.Router.Active), which reads the warehouse record once per request.
//
// Admission: read-only mode and write shedding (ReadOnly, Shedder, Admission), last, so a
// refused or denied request never holds a write slot.
//
// A door lists its guards in one place: SpecDoors for the spec plane, ControlDoors for the control
// plane (SpecChain and ControlChain build their chains; the server runs them for every routed
// request and closes each with Admission); NewChain refuses a list out of the documented order.
// Guards never write anything.
package guards
