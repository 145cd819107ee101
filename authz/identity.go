// Package authz decides who a caller is and what they may do. This file holds the request identity
// as the transport delivers it; verifying it (API key registry, OIDC) comes with authorization.
package authz

import (
	"context"
	"net/http"
	"strings"
)

// Identity is what a caller presented: an API key, a bearer token, or neither.
type Identity struct {
	APIKey      string
	BearerToken string
}

// Anonymous reports whether the caller presented nothing.
func (i Identity) Anonymous() bool { return i.APIKey == "" && i.BearerToken == "" }

// Or fills the fields i lacks from other: the REST spec lets a body carry an identity, but headers
// take precedence field by field.
func (i Identity) Or(other Identity) Identity {
	if i.APIKey == "" {
		i.APIKey = other.APIKey
	}
	if i.BearerToken == "" {
		i.BearerToken = other.BearerToken
	}
	return i
}

// IdentityFromHeaders reads `x-api-key` and `Authorization: Bearer <token>`.
func IdentityFromHeaders(h http.Header) Identity {
	id := Identity{APIKey: strings.TrimSpace(h.Get("x-api-key"))}
	if auth := strings.TrimSpace(h.Get("Authorization")); len(auth) > 7 && strings.EqualFold(auth[:7], "bearer ") {
		id.BearerToken = strings.TrimSpace(auth[7:])
	}
	return id
}

type identityKey struct{}

// WithIdentity stores the caller's identity in ctx.
func WithIdentity(ctx context.Context, id Identity) context.Context {
	return context.WithValue(ctx, identityKey{}, id)
}

// IdentityFrom is the identity stored in ctx (anonymous if none).
func IdentityFrom(ctx context.Context) Identity {
	id, _ := ctx.Value(identityKey{}).(Identity)
	return id
}
