package authz_test

import (
	"context"
	"strings"
	"testing"

	"gotest.tools/v3/assert"

	"github.com/lancecat/lancecat/authz"
	nserr "github.com/lancecat/lancecat/errors"
	"github.com/lancecat/lancecat/registry"
	"github.com/lancecat/lancecat/storage"
)

func TestAPIKeys(t *testing.T) {
	ctx := context.Background()
	bucket := storage.NewMemory()
	keys := authz.NewAPIKeys(registry.NewStore(bucket))
	alice := authz.User("alice")

	key, rec, err := keys.Create(ctx, alice, "laptop")
	assert.NilError(t, err)
	assert.Assert(t, strings.HasPrefix(key, "lck_"+rec.ID+"_"))
	assert.Equal(t, rec.Principal, "user:alice")

	// The record holds a hash, never the key.
	rc, _, err := bucket.Get(ctx, authz.APIKeyKey(rec.ID))
	assert.NilError(t, err)
	raw := make([]byte, 4096)
	n, _ := rc.Read(raw)
	rc.Close()
	secret := key[len("lck_"+rec.ID+"_"):]
	assert.Assert(t, !strings.Contains(string(raw[:n]), secret))

	got, err := keys.VerifyAPIKey(ctx, key)
	assert.NilError(t, err)
	assert.Equal(t, got, alice)

	other, _, err := keys.Create(ctx, authz.User("bob"), "")
	assert.NilError(t, err)
	otherSecret := other[len("lck_")+12+1:]

	refused := []struct{ name, key string }{
		{"empty", ""},
		{"no mark", strings.TrimPrefix(key, "lck_")},
		{"wrong secret", "lck_" + rec.ID + "_" + otherSecret},
		{"unknown id", "lck_000000000000_" + secret},
		{"upper-case id", "lck_" + strings.ToUpper(rec.ID) + "_" + secret},
		{"short secret", "lck_" + rec.ID + "_abc"},
	}
	for _, tc := range refused {
		t.Run(tc.name, func(t *testing.T) {
			_, err := keys.VerifyAPIKey(ctx, tc.key)
			assert.Equal(t, nserr.CodeOf(err), nserr.Unauthenticated)
			assert.ErrorContains(t, err, "api key not accepted")
		})
	}

	list, err := keys.List(ctx)
	assert.NilError(t, err)
	assert.Equal(t, len(list), 2)

	revoked, err := keys.Revoke(ctx, rec.ID)
	assert.NilError(t, err)
	assert.Assert(t, revoked.Revoked())
	_, err = keys.Revoke(ctx, rec.ID) // idempotent
	assert.NilError(t, err)
	_, err = keys.VerifyAPIKey(ctx, key)
	assert.Equal(t, nserr.CodeOf(err), nserr.Unauthenticated)
	_, err = keys.VerifyAPIKey(ctx, other) // the other key still works
	assert.NilError(t, err)

	_, err = keys.Revoke(ctx, "0123456789ab")
	assert.Equal(t, nserr.CodeOf(err), nserr.NamespaceNotFound)
	_, err = keys.Revoke(ctx, "nope")
	assert.Equal(t, nserr.CodeOf(err), nserr.InvalidInput)
	_, _, err = keys.Create(ctx, authz.Anonymous, "")
	assert.Equal(t, nserr.CodeOf(err), nserr.InvalidInput)

	// A broken record is an outage (503), never "unknown key" or an allow.
	_, err = bucket.Put(ctx, authz.APIKeyKey(rec.ID), strings.NewReader("{"), 1)
	assert.NilError(t, err)
	_, err = keys.VerifyAPIKey(ctx, key)
	assert.Equal(t, nserr.CodeOf(err), nserr.ServiceUnavailable)
	_, err = keys.List(ctx)
	assert.Equal(t, nserr.CodeOf(err), nserr.ServiceUnavailable)
}

func TestParsePrincipal(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want authz.Principal
		ok   bool
	}{
		{"user:alice", "user:alice", true},
		{" user:alice ", "user:alice", true},
		{"alice", "", false},
		{"team:x#member", "", false},
		{"anonymous", "", false},
		{"user:", "", false},
	} {
		got, err := authz.ParsePrincipal(tc.in)
		if !tc.ok {
			assert.Equal(t, nserr.CodeOf(err), nserr.InvalidInput, tc.in)
			continue
		}
		assert.NilError(t, err, tc.in)
		assert.Equal(t, got, tc.want)
	}
}
