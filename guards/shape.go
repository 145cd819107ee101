package guards

import (
	"context"
	"strings"

	"github.com/lancecat/lancecat/authz"
	nserr "github.com/lancecat/lancecat/errors"
	"github.com/lancecat/lancecat/ident"
)

// Identity is the first guard of every door: with authorization on, a request without a verified
// principal is 401 before anything about the request is looked at.
func Identity(a authz.Authorizer) Guard {
	return Guard{StageIdentity, "identity", func(_ context.Context, r *Request) error {
		return CheckIdentity(a, r.Principal)
	}}
}

// CheckIdentity is the identity guard on its own (governance runs it for its callers too).
func CheckIdentity(a authz.Authorizer, p authz.Principal) error {
	if a == nil || !a.Enabled() || !p.IsAnonymous() {
		return nil
	}
	return nserr.Unauthenticatedf("authorization is on: present an API key (x-api-key) or a bearer token")
}

// CheckDelimiter refuses a request whose `?delimiter=` is not the server's: ids would split
// differently on each side.
func CheckDelimiter(delimiter *string, server string) error {
	if delimiter != nil && *delimiter != "" && *delimiter != server {
		return nserr.InvalidInputf("delimiter %q is not this server's delimiter %q", *delimiter, server)
	}
	return nil
}

// PathID is the shape guard of a door on an object named by its path {id}: the delimiter is the
// server's and the raw (still escaped) id parses into safe segments. It sets r.ID.
func PathID(delimiter string) Guard {
	return Guard{StageShape, "path id", func(_ context.Context, r *Request) error {
		if d, ok := r.query("delimiter"); ok {
			if err := CheckDelimiter(&d, delimiter); err != nil {
				return err
			}
		}
		id, err := ident.ParsePath(r.param("id"), delimiter)
		if err != nil {
			return err
		}
		r.ID = id
		return nil
	}}
}

// CanonicalEnum accepts an enum value in any casing and with or without underscores (clients send
// "ExistOk", docs say "exist_ok"), and wrapped in one pair of literal double quotes (a LanceDB
// remote-mode client sends Rust's Debug form, `"\"ExistOk\""`), and rewrites it to the spelling
// in allowed.
func CanonicalEnum(field string, value *string, allowed ...string) error {
	if value == nil || *value == "" {
		return nil
	}
	v := *value
	if len(v) >= 2 && v[0] == '"' && v[len(v)-1] == '"' {
		v = v[1 : len(v)-1]
	}
	got := foldEnum(v)
	for _, a := range allowed {
		if foldEnum(a) == got {
			*value = a
			return nil
		}
	}
	return nserr.InvalidInputf("%s %q is not one of %s", field, *value, strings.Join(allowed, ", "))
}

func foldEnum(s string) string {
	return strings.ToLower(strings.NewReplacer("_", "", "-", "", " ", "").Replace(s))
}

// NoQueryMode refuses a `mode` query parameter on a door that takes its mode in the JSON body
// (sent: whether the query has one): two places for one decision is how a guard and a handler
// come to read different ones.
func NoQueryMode(sent bool) error {
	if sent {
		return nserr.InvalidInputf("this operation takes its mode in the JSON body, not in the query")
	}
	return nil
}
