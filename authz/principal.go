package authz

import (
	"context"
	"strings"

	nserr "github.com/lancecat/lancecat/errors"
)

// Principal is who a request acts as, spelled as an OpenFGA user ("user:<id>"). It is what tuples
// name and what audit lines and set_by fields record.
type Principal string

// Anonymous is the principal of every caller while authorization is off: an estate admin that the
// Disabled authorizer allows everything. With authorization on it is refused (401, code 16).
const Anonymous Principal = "anonymous"

// User is the principal of an OIDC subject (the token's "sub").
func User(sub string) Principal {
	if sub == "" {
		return ""
	}
	// A subject that looks like an API key's principal is encoded, so no token can pose as a key.
	return Principal(TypeUser + ":" + encodeSegments(maxUserLen-len(TypeUser)-1, []string{sub}, strings.HasPrefix(sub, apiKeyPrefix)))
}

// APIKey is the principal of the API key whose (non-secret) id is keyID.
func APIKey(keyID string) Principal {
	if keyID == "" {
		return ""
	}
	limit := maxUserLen - len(TypeUser) - 1 - len(apiKeyPrefix)
	return Principal(TypeUser + ":" + apiKeyPrefix + encodeSegments(limit, []string{keyID}, false))
}

func (p Principal) String() string { return string(p) }

// IsAnonymous reports whether p carries no verified identity.
func (p Principal) IsAnonymous() bool { return p == Anonymous || p == "" }

// Subject is p as the subject of a grant.
func (p Principal) Subject() Subject { return Subject(p) }

// validate refuses a principal OpenFGA could not check: with authorization on, that is a caller we
// do not know (401), never a reason to allow.
func (p Principal) validate() error {
	if p.IsAnonymous() {
		return nserr.Unauthenticatedf("authorization is on: present an API key (x-api-key) or a bearer token")
	}
	id, ok := strings.CutPrefix(string(p), TypeUser+":")
	if !ok || id == "" || !validFGAID(id) || len(p) > maxUserLen {
		return nserr.Unauthenticatedf("principal %q is not a user", string(p))
	}
	return nil
}

// Subject is who a grant is given to: a principal ("user:<id>"), every member of a team
// ("team:<id>#member"), every assignee of a role ("role:<id>#assignee"), or everyone ("user:*",
// accepted only by managed_access, the switch that centralizes granting).
type Subject string

// Everyone is the wildcard subject; only managed_access takes it.
const Everyone Subject = "user:*"

// TeamMembers is the subject "every member of team id".
func TeamMembers(id string) Subject {
	return Subject(TypeTeam + ":" + encodeName(TypeTeam, id) + "#member")
}

// RoleAssignees is the subject "every assignee of role id".
func RoleAssignees(id string) Subject {
	return Subject(TypeRole + ":" + encodeName(TypeRole, id) + "#assignee")
}

// form is the subject's shape as the model lists it: "user", "user:*", "team#member", …
func (s Subject) form() string {
	typ, rest, _ := strings.Cut(string(s), ":")
	id, rel, _ := strings.Cut(rest, "#")
	switch {
	case id == "*":
		return typ + ":*"
	case rel != "":
		return typ + "#" + rel
	}
	return typ
}

func (s Subject) validate() error {
	typ, rest, _ := strings.Cut(string(s), ":")
	id, rel, _ := strings.Cut(rest, "#")
	ok := id != "" && validFGAID(id) && len(s) <= maxUserLen
	switch typ {
	case TypeUser:
		ok = ok && rel == "" && !strings.Contains(rest, "#")
	case TypeTeam:
		ok = ok && rel == "member" && id != "*"
	case TypeRole:
		ok = ok && rel == "assignee" && id != "*"
	default:
		ok = false
	}
	if !ok {
		return nserr.InvalidInputf("grant subject %q: expected user:<id>, team:<id>#member, role:<id>#assignee or user:*", string(s))
	}
	return nil
}

// APIKeyVerifier resolves a presented API key to its principal. An unknown or revoked key is an
// Unauthenticated error; a key store it cannot reach is ServiceUnavailable.
type APIKeyVerifier interface {
	VerifyAPIKey(ctx context.Context, key string) (Principal, error)
}

// TokenVerifier resolves an OIDC bearer token to its principal (User(sub)) after checking
// signature, issuer, audience and expiry. The same error rules as APIKeyVerifier apply.
type TokenVerifier interface {
	VerifyToken(ctx context.Context, token string) (Principal, error)
}

// Authenticator turns the identity a request presented into its principal.
type Authenticator struct {
	// Enabled is whether authorization is on. Off (the embedded default), every caller is Anonymous.
	Enabled bool
	APIKeys APIKeyVerifier // nil: API keys are refused
	Tokens  TokenVerifier  // nil: bearer tokens are refused
}

// Principal is the principal behind id, or an Unauthenticated error (401, code 16).
func (a Authenticator) Principal(ctx context.Context, id Identity) (Principal, error) {
	if !a.Enabled {
		return Anonymous, nil
	}
	switch {
	case id.Anonymous():
		return "", nserr.Unauthenticatedf("authorization is on: present an API key (x-api-key) or a bearer token")
	case id.APIKey != "" && id.BearerToken != "":
		// Two credentials could name two principals; picking one silently would let a proxy's token
		// decide who the caller is.
		return "", nserr.Unauthenticatedf("present either an API key or a bearer token, not both")
	case id.APIKey != "":
		if a.APIKeys == nil {
			return "", nserr.Unauthenticatedf("API keys are not accepted by this server")
		}
		return verified(a.APIKeys.VerifyAPIKey(ctx, id.APIKey))
	default:
		if a.Tokens == nil {
			return "", nserr.Unauthenticatedf("bearer tokens are not accepted by this server")
		}
		return verified(a.Tokens.VerifyToken(ctx, id.BearerToken))
	}
}

func verified(p Principal, err error) (Principal, error) {
	if err != nil {
		return "", nserr.Otherwise(nserr.Unauthenticated, err, "credential not accepted: "+err.Error())
	}
	if err := p.validate(); err != nil {
		return "", err
	}
	return p, nil
}

type principalKey struct{}

// WithPrincipal stores the request's principal in ctx.
func WithPrincipal(ctx context.Context, p Principal) context.Context {
	return context.WithValue(ctx, principalKey{}, p)
}

// PrincipalFrom is the principal stored in ctx ("" if authentication has not run).
func PrincipalFrom(ctx context.Context) Principal {
	p, _ := ctx.Value(principalKey{}).(Principal)
	return p
}
