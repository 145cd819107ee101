package authz

import (
	"crypto/sha256"
	"encoding/base64"
	"strings"

	nserr "github.com/lancecat/lancecat/errors"
	"github.com/lancecat/lancecat/ident"
)

// Object types of the model (model.fga).
const (
	TypeUser      = "user"
	TypeTeam      = "team"
	TypeRole      = "role"
	TypeCatalog   = "catalog"
	TypeProject   = "project"
	TypeWarehouse = "warehouse"
	TypeNamespace = "namespace"
	TypeTable     = "table"
)

// Object is something permissions are held on, as OpenFGA names it: "<Type>:<ID>". Build it with
// the constructors below, never by hand: ID is an encoding of the object's name (see encodeID),
// and the same name must always give the same ID or grants silently stop applying.
type Object struct {
	Type string
	ID   string
}

// Catalog is the estate root: estate admins are its admins, and with warehouses off it is the
// parent of every top-level namespace.
var Catalog = Object{Type: TypeCatalog, ID: "lancecat"}

// ProjectObject is the authorization object of project id.
func ProjectObject(id string) Object { return Object{TypeProject, encodeName(TypeProject, id)} }

// WarehouseObject is the authorization object of warehouse id.
func WarehouseObject(id string) Object { return Object{TypeWarehouse, encodeName(TypeWarehouse, id)} }

// NamespaceObject is the authorization object of namespace id. The root namespace is the Catalog:
// it is what a top-level namespace created without a warehouse hangs from.
func NamespaceObject(id ident.ID) Object {
	if id.IsRoot() {
		return Catalog
	}
	return Object{TypeNamespace, encodeID(TypeNamespace, id)}
}

// TableObject is the authorization object of table id (its namespace is NamespaceObject(id.Parent())).
func TableObject(id ident.ID) Object { return Object{TypeTable, encodeID(TypeTable, id)} }

// TeamObject is team id, whose members a team grant reaches (see TeamMembers).
func TeamObject(id string) Object { return Object{TypeTeam, encodeName(TypeTeam, id)} }

// RoleObject is role id, whose assignees a role grant reaches (see RoleAssignees).
func RoleObject(id string) Object { return Object{TypeRole, encodeName(TypeRole, id)} }

// String is the object as OpenFGA spells it.
func (o Object) String() string { return o.Type + ":" + o.ID }

// IsZero reports whether o names nothing (e.g. the missing parent of a project).
func (o Object) IsZero() bool { return o == Object{} }

// Validate refuses an object OpenFGA would refuse, and the empty name, before it reaches the wire.
func (o Object) Validate() error {
	if !knownTypes[o.Type] {
		return nserr.InvalidInputf("authorization object %q: unknown type %q", o.String(), o.Type)
	}
	if o.ID == "" || !validFGAID(o.ID) || len(o.String()) > maxObjectLen {
		return nserr.InvalidInputf("authorization object %q: not a valid id (build objects with the authz constructors)", o.String())
	}
	return nil
}

var knownTypes = map[string]bool{
	TypeUser: true, TypeTeam: true, TypeRole: true, TypeCatalog: true,
	TypeProject: true, TypeWarehouse: true, TypeNamespace: true, TypeTable: true,
}

// OpenFGA bounds a tuple's object at 256 characters (and its user at 512) and refuses whitespace,
// control characters, ":" and "#" in an id (openfga/api TupleKey validation; pkg/tuple
// IsValidObject, v1.22). Our names hold arbitrary UTF-8 and nest, so they are encoded to fit.
const (
	maxObjectLen = 256
	maxUserLen   = 512
)

// Encoded ids, by their first character (never a plainByte, so the three forms cannot collide):
//
//	plain     every segment is plainByte-only: segments joined by "$", readable in OpenFGA listings
//	"~" + b64 otherwise: base64url of the segments joined by NUL (NUL occurs in no name), reversible
//	"=" + b64 when that would not fit: base64url of the SHA-256 of the same bytes (not reversible)
const (
	plainJoin    = "$"
	encodedMark  = "~"
	hashedMark   = "="
	segmentJoin  = "\x00"
	apiKeyPrefix = "apikey-"
)

func plainByte(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' ||
		c == '-' || c == '_' || c == '.' || c == '@'
}

func plain(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if !plainByte(s[i]) {
			return false
		}
	}
	return true
}

func encodeName(typ, name string) string {
	if name == "" {
		return ""
	}
	return encodeSegments(maxObjectLen-len(typ)-1, []string{name}, false)
}

func encodeID(typ string, id ident.ID) string {
	if len(id) == 0 {
		return ""
	}
	return encodeSegments(maxObjectLen-len(typ)-1, id, false)
}

// encodeSegments encodes a name of one or more segments into at most limit bytes. forceEncoded
// keeps a plain-looking name out of the plain form (a subject "apikey-…" must not pose as a key).
func encodeSegments(limit int, segments []string, forceEncoded bool) string {
	allPlain := !forceEncoded
	for _, s := range segments {
		allPlain = allPlain && plain(s)
	}
	if allPlain {
		if joined := strings.Join(segments, plainJoin); len(joined) <= limit {
			return joined
		}
	}
	raw := strings.Join(segments, segmentJoin)
	if enc := encodedMark + base64.RawURLEncoding.EncodeToString([]byte(raw)); len(enc) <= limit {
		return enc
	}
	sum := sha256.Sum256([]byte(raw))
	return hashedMark + base64.RawURLEncoding.EncodeToString(sum[:])
}

// DecodeID recovers the segments of an encoded id, for operator views of raw tuples. A hashed id
// cannot be reversed (ok is false); look the object up by the name you already hold instead.
func DecodeID(id string) (segments []string, ok bool) {
	switch {
	case id == "":
		return nil, false
	case strings.HasPrefix(id, encodedMark):
		raw, err := base64.RawURLEncoding.DecodeString(id[len(encodedMark):])
		if err != nil || len(raw) == 0 {
			return nil, false
		}
		return strings.Split(string(raw), segmentJoin), true
	case strings.HasPrefix(id, hashedMark):
		return nil, false
	default:
		parts := strings.Split(id, plainJoin)
		for _, p := range parts {
			if !plain(p) {
				return nil, false
			}
		}
		return parts, true
	}
}

// validFGAID mirrors OpenFGA's own id rules: no whitespace, control characters, ":" or "#".
func validFGAID(id string) bool {
	for _, r := range id {
		switch {
		case r == ':' || r == '#' || r == ' ' || r == '\t' || r == '\n' || r == '\r' || r == '\f' || r == '\v':
			return false
		case r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0):
			return false
		}
	}
	return true
}
