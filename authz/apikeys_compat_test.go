package authz_test

import (
	"context"
	"encoding/json"
	"io"
	"strings"
	"testing"

	"gotest.tools/v3/assert"

	"github.com/lancecat/lancecat/authz"
	"github.com/lancecat/lancecat/registry"
	"github.com/lancecat/lancecat/storage"
)

// TestAPIKeyRevokeKeepsNewerFields: revoking a key (a read-modify-write of its record) keeps the
// fields a newer version wrote into the record (issue 12 item 9: rolling upgrades).
func TestAPIKeyRevokeKeepsNewerFields(t *testing.T) {
	ctx := context.Background()
	bucket := storage.NewMemory()
	keys := authz.NewAPIKeys(registry.NewStore(bucket))
	_, rec, err := keys.Create(ctx, authz.User("alice"), "laptop")
	assert.NilError(t, err)
	key := authz.APIKeyKey(rec.ID)
	rc, _, err := bucket.Get(ctx, key)
	assert.NilError(t, err)
	raw, err := io.ReadAll(rc)
	assert.NilError(t, err)
	assert.NilError(t, rc.Close())
	body := strings.TrimSuffix(strings.TrimSpace(string(raw)), "}") + `, "expires_at": "2030-01-01T00:00:00Z", "scopes": ["read"]}`
	_, err = bucket.Put(ctx, key, strings.NewReader(body), int64(len(body)))
	assert.NilError(t, err)

	revoked, err := keys.Revoke(ctx, rec.ID)
	assert.NilError(t, err)
	assert.Assert(t, revoked.RevokedAt != nil)
	rc, _, err = bucket.Get(ctx, key)
	assert.NilError(t, err)
	defer rc.Close()
	var fields map[string]any
	assert.NilError(t, json.NewDecoder(rc).Decode(&fields))
	assert.Equal(t, fields["expires_at"], "2030-01-01T00:00:00Z", "%v", fields)
	assert.DeepEqual(t, fields["scopes"], []any{"read"})
	assert.Assert(t, fields["revoked_at"] != nil, "%v", fields)
}
