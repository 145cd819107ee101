// Package guards is the one guard chain of both APIs. Every door (a Lance spec operation or a
// control-plane operation) runs its guards in the documented order before its handler:
//
//		identity → shape → parent exists → authorization → conflict → admission
//
//	  - identity: with authorization on, a caller without a verified principal is 401 (Identity).
//	  - shape: the `?delimiter=` is the server's, ids parse and are safe (Delimiter, PathID,
//	    CanonicalEnum, NoQueryMode, Name).
//	  - parent exists / authorization: the door's action on its object, OpenFGA or disabled, an
//	    outage failing closed (Authorize for the spec plane, the control door table for the control
//	    plane). No existence oracle by construction: a caller the check denies gets the same answer
//	    for a missing object as for an existing one (Oracle, Hidden).
//	  - conflict: protection, live trash and overwrite rights (NotProtected, NotTrashed,
//	    NamespaceNotTrashed, Overwrite, NamespaceDrop).
//	  - admission: read-only mode and write shedding (ReadOnly, Shedder), last, so a refused or
//	    denied request never holds a write slot.
//
// A door lists its guards in one place: SpecDoors for the spec plane, ControlDoors for the control
// plane; Chain refuses a list out of the documented order. Guards never write anything.
package guards
