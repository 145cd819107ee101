package governance

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"time"

	"github.com/lancecat/lancecat/registry"
)

// A bucket claim is the control root's record that a bucket belongs to one warehouse: written
// put-if-absent before the bucket is made or adopted, so of any number of racing creates (across
// replicas) exactly one gets a bucket, and kept until the warehouse is deleted. It is also the
// proof a purge needs: the catalog deletes a bucket's objects only for the warehouse its claim
// names (a warehouse recorded before claims existed is never purged).
type bucketClaim struct {
	Bucket    string    `json:"bucket"`
	Warehouse string    `json:"warehouse"`
	Token     string    `json:"token"` // which create attempt holds it
	CreatedAt time.Time `json:"created_at"`
	// Extra keeps the fields of the stored record this version does not know.
	registry.Extra
}

func (c bucketClaim) Validate() error {
	if c.Bucket == "" || c.Warehouse == "" || c.Token == "" {
		return errors.New("bucket claim: bucket, warehouse and token must not be empty")
	}
	return nil
}

// bucketClaimsPrefix sits below the warehouse records' prefix, so their one-level listing never
// reads a claim.
const bucketClaimsPrefix = registry.WarehousesPrefix + "claims/"

// claimStaleAfter is how old a claim whose warehouse was never recorded must be before another
// create may take it over: far longer than any create takes, so only a crashed create's claim
// qualifies.
const claimStaleAfter = 15 * time.Minute

func bucketClaimKey(bucket string) string {
	sum := sha256.Sum256([]byte(bucket))
	return bucketClaimsPrefix + hex.EncodeToString(sum[:20]) + ".json"
}

// claimBucket takes bucket for warehouse id, or refuses with the generic answer (why is logged).
// It answers the claim's token, which releaseClaim needs.
func (s *Service) claimBucket(ctx context.Context, bucket, id string) (string, error) {
	var raw [12]byte
	_, _ = rand.Read(raw[:])
	claim := bucketClaim{Bucket: bucket, Warehouse: id, Token: hex.EncodeToString(raw[:]), CreatedAt: s.now().UTC()}
	key := bucketClaimKey(bucket)
	err := registry.Create(ctx, s.store, key, claim)
	if err == nil {
		return claim.Token, nil
	}
	if !errors.Is(err, registry.ErrExists) {
		return "", registryError(err)
	}
	// Held: by a live warehouse, by a create in flight, or by a create that crashed. Only the
	// last may be taken over, and only by an ETag-guarded write, so two takers cannot both win.
	held, err := registry.Mutate(ctx, s.store, key, func(c *bucketClaim) error {
		if c.Bucket != bucket {
			return errors.New("bucket claim names another bucket (hash collision)")
		}
		if s.now().Sub(c.CreatedAt) < claimStaleAfter {
			return errClaimHeld
		}
		if _, _, err := registry.Read[registry.Warehouse](ctx, s.store, registry.WarehouseKey(c.Warehouse)); !errors.Is(err, registry.ErrNotFound) {
			if err != nil {
				return registryError(err)
			}
			return errClaimHeld
		}
		s.log.WarnContext(ctx, "taking over a stale bucket claim: its create never recorded a warehouse",
			"bucket", bucket, "stale_warehouse", c.Warehouse, "claimed_at", c.CreatedAt, "warehouse", id)
		*c = claim
		return nil
	})
	switch {
	case err == nil && held.Token == claim.Token:
		return claim.Token, nil
	case err == nil, errors.Is(err, errClaimHeld), errors.Is(err, registry.ErrNotFound), errors.Is(err, registry.ErrChanged):
		// Not found: the holder just let go; a retry may get it. Either way not now.
		s.log.InfoContext(ctx, "warehouse create refused: its bucket is claimed", "warehouse", id, "bucket", bucket)
		return "", errBucketUnavailable(publicBucketName(bucket))
	}
	return "", registryError(err)
}

var errClaimHeld = errors.New("bucket claim is held")

// releaseClaim deletes the claim on bucket if token (or, with token "", warehouse id) still holds
// it. A failure is logged: a leftover claim only keeps the bucket name from being reused until it
// goes stale.
func (s *Service) releaseClaim(ctx context.Context, bucket, id, token string) {
	ctx = context.WithoutCancel(ctx)
	key := bucketClaimKey(bucket)
	c, _, err := registry.Read[bucketClaim](ctx, s.store, key)
	switch {
	case errors.Is(err, registry.ErrNotFound):
		return
	case err != nil:
		s.log.ErrorContext(ctx, "reading a bucket claim to release it failed", "bucket", bucket, "warehouse", id, "error", err.Error())
		return
	case c.Bucket != bucket || c.Warehouse != id || (token != "" && c.Token != token):
		return // someone else's
	}
	if err := registry.Delete(ctx, s.store, key); err != nil {
		s.log.ErrorContext(ctx, "releasing a bucket claim failed", "bucket", bucket, "warehouse", id, "error", err.Error())
	}
}

// ownsBucket reports whether the catalog holds a claim on bucket for warehouse id: proof that
// the bucket was made (or adopted empty) for it.
func (s *Service) ownsBucket(ctx context.Context, bucket, id string) (bool, error) {
	c, _, err := registry.Read[bucketClaim](ctx, s.store, bucketClaimKey(bucket))
	if errors.Is(err, registry.ErrNotFound) {
		return false, nil
	}
	if err != nil {
		return false, registryError(err)
	}
	return c.Bucket == bucket && c.Warehouse == id, nil
}

// releaseBucket undoes the bucket of a failed create: removed if this create made it and it is
// still empty. The failure is logged with its cause (the bucket is left behind, empty).
func (s *Service) releaseBucket(ctx context.Context, bucket, id string, made bool) {
	if !made {
		return
	}
	if err := s.buckets.Release(context.WithoutCancel(ctx), bucket); err != nil {
		s.log.ErrorContext(ctx, "removing the bucket of a failed warehouse create failed: it is left behind",
			"warehouse", id, "bucket", bucket, "error", err.Error())
	}
}

// publicBucketName is how an answer names a bucket: its last path element (a local warehouse's
// directory name; an S3 bucket name is unchanged), never a server path.
func publicBucketName(bucket string) string {
	for i := len(bucket) - 1; i >= 0; i-- {
		if bucket[i] == '/' {
			return bucket[i+1:]
		}
	}
	return bucket
}
