package authz

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	nserr "github.com/lancecat/lancecat/errors"
	"github.com/lancecat/lancecat/registry"
)

// API keys live on the control root, one record per key under APIKeysPrefix, holding the SHA-256
// of the key's secret, never the secret: a copy of the control root does not let anyone call the
// catalog. A key is shown once, when it is created.
//
// A key reads "lck_<id>_<secret>": id is the record's name (12 hex digits, not secret: it appears
// in listings and logs), secret is 32 random bytes in base64url. The secret has 256 bits of
// entropy, so one SHA-256 is a sound verifier (a slow password hash buys nothing against keys that
// cannot be guessed, and would cost every request).
const (
	APIKeysPrefix = "_apikeys/"
	apiKeyMark    = "lck_"
	apiKeyIDLen   = 12
)

// APIKeyRecord is one API key as stored.
type APIKeyRecord struct {
	ID          string     `json:"id"`
	Hash        string     `json:"sha256"`
	Principal   string     `json:"principal"`
	Description string     `json:"description,omitempty"`
	CreatedAt   time.Time  `json:"created_at"`
	RevokedAt   *time.Time `json:"revoked_at,omitempty"`
}

func (r APIKeyRecord) Validate() error {
	if !validKeyID(r.ID) {
		return fmt.Errorf("api key id %q is not %d hex digits", r.ID, apiKeyIDLen)
	}
	if len(r.Hash) != 64 {
		return errors.New("api key hash must be a hex SHA-256")
	}
	if err := Principal(r.Principal).validate(); err != nil {
		return fmt.Errorf("api key principal: %w", err)
	}
	return nil
}

// Revoked reports whether the key no longer authenticates.
func (r APIKeyRecord) Revoked() bool { return r.RevokedAt != nil }

// APIKeyKey is where the record of key id lives.
func APIKeyKey(id string) string { return APIKeysPrefix + id + ".json" }

func validKeyID(id string) bool {
	if len(id) != apiKeyIDLen {
		return false
	}
	_, err := hex.DecodeString(id)
	return err == nil && strings.ToLower(id) == id
}

// ParsePrincipal reads a principal as an operator writes it ("user:alice"), refusing anything a
// check could not use.
func ParsePrincipal(s string) (Principal, error) {
	p := Principal(strings.TrimSpace(s))
	if err := p.validate(); err != nil {
		return "", nserr.InvalidInputf("principal %q: expected user:<id>", s)
	}
	return p, nil
}

// APIKeys is the API key registry on the control root. It is the APIKeyVerifier of the server.
type APIKeys struct {
	store *registry.Store
	now   func() time.Time
}

var _ APIKeyVerifier = (*APIKeys)(nil)

// NewAPIKeys returns the key registry kept in store (the control root).
func NewAPIKeys(store *registry.Store) *APIKeys {
	return &APIKeys{store: store, now: time.Now}
}

// Create mints a key for principal and returns it in full: the only time the secret exists
// outside the caller's hands. Each key gets its own principal-independent id, minted with
// put-if-absent, so two creates never share a record.
func (k *APIKeys) Create(ctx context.Context, principal Principal, description string) (string, APIKeyRecord, error) {
	if err := principal.validate(); err != nil {
		return "", APIKeyRecord{}, nserr.InvalidInputf("api key principal %q: expected user:<id>", principal.String())
	}
	for range 3 {
		var idb [apiKeyIDLen / 2]byte
		var secret [32]byte
		if _, err := rand.Read(idb[:]); err != nil {
			return "", APIKeyRecord{}, err
		}
		if _, err := rand.Read(secret[:]); err != nil {
			return "", APIKeyRecord{}, err
		}
		id := hex.EncodeToString(idb[:])
		sec := base64.RawURLEncoding.EncodeToString(secret[:])
		rec := APIKeyRecord{
			ID: id, Hash: hashSecret(sec), Principal: principal.String(),
			Description: description, CreatedAt: k.now().UTC(),
		}
		err := registry.Create(ctx, k.store, APIKeyKey(id), rec)
		if errors.Is(err, registry.ErrExists) {
			continue // a 48-bit id collided: mint another
		}
		if err != nil {
			return "", APIKeyRecord{}, err
		}
		return apiKeyMark + id + "_" + sec, rec, nil
	}
	return "", APIKeyRecord{}, nserr.ServiceUnavailablef("could not mint an unused api key id")
}

// Revoke makes key id stop authenticating; revoking a revoked key is a no-op. An unknown id is a
// not-found error (code 1), so a typo is not mistaken for a revocation.
func (k *APIKeys) Revoke(ctx context.Context, id string) (APIKeyRecord, error) {
	if !validKeyID(id) {
		return APIKeyRecord{}, nserr.InvalidInputf("api key id %q is not %d lowercase hex digits", id, apiKeyIDLen)
	}
	now := k.now().UTC()
	rec, err := registry.Mutate(ctx, k.store, APIKeyKey(id), func(r *APIKeyRecord) error {
		if r.RevokedAt == nil {
			r.RevokedAt = &now
		}
		return nil
	})
	if errors.Is(err, registry.ErrNotFound) {
		return APIKeyRecord{}, nserr.NamespaceNotFoundf("api key %s does not exist", id)
	}
	return rec, err
}

// List returns every key record (never a secret), oldest first. Unreadable records are refused:
// an operator auditing keys must not get a silently short list.
func (k *APIKeys) List(ctx context.Context) ([]APIKeyRecord, error) {
	listed, err := registry.List[APIKeyRecord](ctx, k.store, APIKeysPrefix)
	if err != nil {
		return nil, err
	}
	if len(listed.Skipped) > 0 {
		return nil, nserr.ServiceUnavailablef("unreadable api key records: %s", strings.Join(listed.Skipped, ", "))
	}
	out := listed.Records
	sort.Slice(out, func(i, j int) bool {
		if !out[i].CreatedAt.Equal(out[j].CreatedAt) {
			return out[i].CreatedAt.Before(out[j].CreatedAt)
		}
		return out[i].ID < out[j].ID
	})
	return out, nil
}

// VerifyAPIKey resolves a presented key to its principal. Every refusal reads the same to the
// caller ("not accepted"), so the answer does not tell an unknown id from a wrong secret.
func (k *APIKeys) VerifyAPIKey(ctx context.Context, key string) (Principal, error) {
	refuse := nserr.Unauthenticatedf("api key not accepted")
	id, secret, ok := splitAPIKey(key)
	if !ok {
		return "", refuse
	}
	rec, _, err := registry.Read[APIKeyRecord](ctx, k.store, APIKeyKey(id))
	switch {
	case errors.Is(err, registry.ErrNotFound):
		return "", refuse
	case err != nil:
		// The key store did not answer (or holds a broken record): never an allow, never a 401
		// that would make a client drop a good key.
		return "", nserr.Wrap(nserr.ServiceUnavailable, err, "the api key store is unavailable")
	}
	if subtle.ConstantTimeCompare([]byte(rec.Hash), []byte(hashSecret(secret))) != 1 || rec.Revoked() {
		return "", refuse
	}
	return Principal(rec.Principal), nil
}

func splitAPIKey(key string) (id, secret string, ok bool) {
	rest, ok := strings.CutPrefix(key, apiKeyMark)
	if !ok {
		return "", "", false
	}
	id, secret, ok = strings.Cut(rest, "_")
	if !ok || !validKeyID(id) || len(secret) < 32 {
		return "", "", false
	}
	return id, secret, true
}

func hashSecret(secret string) string {
	sum := sha256.Sum256([]byte(secret))
	return hex.EncodeToString(sum[:])
}
