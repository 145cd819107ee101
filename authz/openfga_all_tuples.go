package authz

import (
	"context"
	"strings"

	openfga "github.com/openfga/go-sdk"
)

// ReadTuples reads one page of every tuple in the store, from continuation token ("" the
// first); the returned token is "" after the last page. OpenFGA's Read with no tuple key pages
// through the whole store, which is what the drift scan needs to find tuples whose object is
// gone: nothing else lists every object the authorizer knows.
func (f *OpenFGA) ReadTuples(ctx context.Context, token string) ([]Tuple, string, error) {
	return f.readPage(ctx, openfga.ReadRequestTupleKey{}, token)
}

// ParseObject splits an OpenFGA object or user ("type:id", or a userset "type:id#relation")
// into the Object it names; ok is false for a wildcard, a malformed string or an unknown type.
func ParseObject(s string) (Object, bool) {
	if i := strings.IndexByte(s, '#'); i >= 0 {
		s = s[:i]
	}
	typ, id, ok := strings.Cut(s, ":")
	if !ok || id == "" || id == "*" || !knownTypes[typ] {
		return Object{}, false
	}
	o := Object{Type: typ, ID: id}
	if o.Validate() != nil {
		return Object{}, false
	}
	return o, true
}
