package authz_test

import (
	"context"
	"errors"
	"testing"

	"gotest.tools/v3/assert"

	"github.com/lancecat/lancecat/authz"
	nserr "github.com/lancecat/lancecat/errors"
)

type keys map[string]string

func (k keys) VerifyAPIKey(_ context.Context, key string) (authz.Principal, error) {
	if id, ok := k[key]; ok {
		return authz.APIKey(id), nil
	}
	return "", errors.New("unknown key")
}

type tokens struct{ err error }

func (t tokens) VerifyToken(_ context.Context, tok string) (authz.Principal, error) {
	if t.err != nil {
		return "", t.err
	}
	return authz.User("sub-" + tok), nil
}

func TestAuthenticator(t *testing.T) {
	on := authz.Authenticator{Enabled: true, APIKeys: keys{"secret": "k1"}, Tokens: tokens{}}
	cases := []struct {
		name string
		auth authz.Authenticator
		id   authz.Identity
		want authz.Principal
		code nserr.Code // checked when want is ""
	}{
		{"off: anonymous estate admin", authz.Authenticator{}, authz.Identity{}, authz.Anonymous, 0},
		{"off ignores credentials", authz.Authenticator{}, authz.Identity{APIKey: "x"}, authz.Anonymous, 0},
		{"on: nothing presented", on, authz.Identity{}, "", nserr.Unauthenticated},
		{"on: api key", on, authz.Identity{APIKey: "secret"}, authz.APIKey("k1"), 0},
		{"on: bad api key", on, authz.Identity{APIKey: "nope"}, "", nserr.Unauthenticated},
		{"on: bearer", on, authz.Identity{BearerToken: "t"}, authz.User("sub-t"), 0},
		{"on: both", on, authz.Identity{APIKey: "secret", BearerToken: "t"}, "", nserr.Unauthenticated},
		{"on: no verifier", authz.Authenticator{Enabled: true}, authz.Identity{BearerToken: "t"}, "", nserr.Unauthenticated},
		{"on: verifier outage stays 503", authz.Authenticator{Enabled: true, Tokens: tokens{nserr.ServiceUnavailablef("jwks down")}},
			authz.Identity{BearerToken: "t"}, "", nserr.ServiceUnavailable},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := c.auth.Principal(context.Background(), c.id)
			if c.want != "" {
				assert.NilError(t, err)
				assert.Equal(t, got, c.want)
				return
			}
			assert.Assert(t, nserr.Coded(err), err)
			assert.Equal(t, nserr.CodeOf(err), c.code)
		})
	}
}

func TestPrincipalInContext(t *testing.T) {
	ctx := authz.WithPrincipal(context.Background(), authz.User("a"))
	assert.Equal(t, authz.PrincipalFrom(ctx), authz.User("a"))
	assert.Equal(t, authz.PrincipalFrom(context.Background()), authz.Principal(""))
}
