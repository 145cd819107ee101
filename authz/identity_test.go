package authz_test

import (
	"context"
	"net/http"
	"testing"

	"gotest.tools/v3/assert"

	"github.com/lancecat/lancecat/authz"
)

func TestIdentityFromHeaders(t *testing.T) {
	cases := []struct {
		name   string
		header map[string]string
		want   authz.Identity
	}{
		{"none", nil, authz.Identity{}},
		{"api key", map[string]string{"X-Api-Key": "k1"}, authz.Identity{APIKey: "k1"}},
		{"bearer", map[string]string{"Authorization": "Bearer tok"}, authz.Identity{BearerToken: "tok"}},
		{"bearer any case", map[string]string{"Authorization": "bearer  tok "}, authz.Identity{BearerToken: "tok"}},
		{"basic is not bearer", map[string]string{"Authorization": "Basic abc"}, authz.Identity{}},
		{"both", map[string]string{"X-Api-Key": "k", "Authorization": "Bearer t"}, authz.Identity{APIKey: "k", BearerToken: "t"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			h := http.Header{}
			for k, v := range c.header {
				h.Set(k, v)
			}
			assert.Equal(t, authz.IdentityFromHeaders(h), c.want)
		})
	}
}

func TestHeaderBeatsBody(t *testing.T) {
	header := authz.Identity{APIKey: "from-header"}
	body := authz.Identity{APIKey: "from-body", BearerToken: "body-token"}
	assert.Equal(t, header.Or(body), authz.Identity{APIKey: "from-header", BearerToken: "body-token"})
	ctx := authz.WithIdentity(context.Background(), header)
	assert.Equal(t, authz.IdentityFrom(ctx), header)
	assert.Assert(t, authz.IdentityFrom(context.Background()).Anonymous())
}
