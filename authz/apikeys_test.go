package authz_test

import (
	"context"
	"io"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

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

	// The "upper-case id" case below needs an id with a hex letter in it: an all-digit id (about
	// one in 280) upper-cases to itself, and that case would then send the real key.
	var (
		key string
		rec authz.APIKeyRecord
		err error
	)
	created := 0
	for {
		created++
		key, rec, err = keys.Create(ctx, alice, "laptop")
		assert.NilError(t, err)
		if strings.ToUpper(rec.ID) != rec.ID {
			break
		}
	}
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
	assert.Equal(t, len(list), created+1) // alice's keys (an all-digit id drawn above too) and bob's

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

// countingBucket counts the reads of the control root, and can hold one read up (onGet runs once,
// in the reading goroutine, after the read and before it returns).
type countingBucket struct {
	*storage.Memory
	gets  atomic.Int64
	onGet atomic.Pointer[func()]
}

func (b *countingBucket) Get(ctx context.Context, key string) (io.ReadCloser, storage.ObjectInfo, error) {
	b.gets.Add(1)
	rc, info, err := b.Memory.Get(ctx, key)
	if fn := b.onGet.Swap(nil); fn != nil {
		(*fn)()
	}
	return rc, info, err
}

type fakeClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *fakeClock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

type keyCacheEnv struct {
	bucket *countingBucket
	store  *registry.Store
	clock  *fakeClock
	keys   *authz.APIKeys
}

func newKeyCacheEnv(t *testing.T, opts ...authz.APIKeysOption) *keyCacheEnv {
	t.Helper()
	e := &keyCacheEnv{bucket: &countingBucket{Memory: storage.NewMemory()}, clock: &fakeClock{t: time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC)}}
	e.store = registry.NewStore(e.bucket)
	e.keys = authz.NewAPIKeys(e.store, append([]authz.APIKeysOption{authz.WithClock(e.clock.Now)}, opts...)...)
	return e
}

func (e *keyCacheEnv) create(t *testing.T, user string) (string, authz.APIKeyRecord) {
	t.Helper()
	key, rec, err := e.keys.Create(context.Background(), authz.User(user), "")
	assert.NilError(t, err)
	return key, rec
}

// verify verifies key and returns how many reads of the store it took.
func (e *keyCacheEnv) verify(t *testing.T, key string) (authz.Principal, int64, error) {
	t.Helper()
	before := e.bucket.gets.Load()
	p, err := e.keys.VerifyAPIKey(context.Background(), key)
	return p, e.bucket.gets.Load() - before, err
}

func TestAPIKeyCache(t *testing.T) {
	ctx := context.Background()
	ttl := authz.DefaultAPIKeyCacheTTL
	for _, tc := range []struct {
		name string
		opts []authz.APIKeysOption
		run  func(t *testing.T, e *keyCacheEnv)
	}{
		{"a just-created key works at once, and then from the cache", nil, func(t *testing.T, e *keyCacheEnv) {
			key, _ := e.create(t, "alice")
			p, gets, err := e.verify(t, key)
			assert.NilError(t, err)
			assert.Equal(t, p, authz.User("alice"))
			assert.Equal(t, gets, int64(1))
			for range 3 {
				p, gets, err = e.verify(t, key)
				assert.NilError(t, err)
				assert.Equal(t, p, authz.User("alice"))
				assert.Equal(t, gets, int64(0), "a cached key does not touch the store")
			}
		}},
		{"an entry expires after the TTL", nil, func(t *testing.T, e *keyCacheEnv) {
			key, _ := e.create(t, "alice")
			_, gets, _ := e.verify(t, key)
			assert.Equal(t, gets, int64(1))
			e.clock.Advance(ttl - time.Nanosecond)
			_, gets, err := e.verify(t, key)
			assert.NilError(t, err)
			assert.Equal(t, gets, int64(0))
			e.clock.Advance(time.Nanosecond)
			_, gets, err = e.verify(t, key)
			assert.NilError(t, err)
			assert.Equal(t, gets, int64(1), "expired: read again")
			_, gets, _ = e.verify(t, key)
			assert.Equal(t, gets, int64(0), "and cached again")
		}},
		{"the TTL is an option", []authz.APIKeysOption{authz.WithCacheTTL(time.Second)}, func(t *testing.T, e *keyCacheEnv) {
			key, _ := e.create(t, "alice")
			e.verify(t, key)
			e.clock.Advance(time.Second)
			_, gets, _ := e.verify(t, key)
			assert.Equal(t, gets, int64(1))
		}},
		{"a revoke on this replica evicts at once", nil, func(t *testing.T, e *keyCacheEnv) {
			key, rec := e.create(t, "alice")
			other, _ := e.create(t, "bob")
			e.verify(t, key)
			e.verify(t, other)
			_, err := e.keys.Revoke(ctx, rec.ID)
			assert.NilError(t, err)
			_, gets, err := e.verify(t, key)
			assert.Equal(t, nserr.CodeOf(err), nserr.Unauthenticated)
			assert.Equal(t, gets, int64(1))
			_, gets, err = e.verify(t, other)
			assert.NilError(t, err)
			assert.Equal(t, gets, int64(0), "other keys stay cached")
		}},
		{"a revoke on another replica takes effect within the TTL", nil, func(t *testing.T, e *keyCacheEnv) {
			key, rec := e.create(t, "alice")
			e.verify(t, key)
			elsewhere := authz.NewAPIKeys(e.store, authz.WithClock(e.clock.Now))
			_, err := elsewhere.Revoke(ctx, rec.ID)
			assert.NilError(t, err)
			_, _, err = e.verify(t, key)
			assert.NilError(t, err, "still cached here")
			e.clock.Advance(ttl)
			_, _, err = e.verify(t, key)
			assert.Equal(t, nserr.CodeOf(err), nserr.Unauthenticated)
		}},
		{"refused keys are not cached", nil, func(t *testing.T, e *keyCacheEnv) {
			key, rec := e.create(t, "alice")
			other, _ := e.create(t, "bob")
			for _, bad := range []string{
				"lck_000000000000_" + strings.Repeat("x", 43),    // unknown id
				"lck_" + rec.ID + "_" + other[len("lck_")+12+1:], // wrong secret
			} {
				for range 3 {
					_, gets, err := e.verify(t, bad)
					assert.Equal(t, nserr.CodeOf(err), nserr.Unauthenticated)
					assert.Equal(t, gets, int64(1), "every refusal reads the store")
				}
			}
			// A wrong secret for a cached id misses, and does not evict the good entry.
			e.verify(t, key)
			_, _, err := e.verify(t, "lck_"+rec.ID+"_"+other[len("lck_")+12+1:])
			assert.Equal(t, nserr.CodeOf(err), nserr.Unauthenticated)
			_, gets, err := e.verify(t, key)
			assert.NilError(t, err)
			assert.Equal(t, gets, int64(0))
		}},
		{"the cache is bounded, oldest out first", []authz.APIKeysOption{authz.WithCacheSize(2)}, func(t *testing.T, e *keyCacheEnv) {
			k1, _ := e.create(t, "a")
			k2, _ := e.create(t, "b")
			k3, _ := e.create(t, "c")
			e.verify(t, k1)
			e.verify(t, k2)
			e.verify(t, k3) // evicts k1
			_, gets, _ := e.verify(t, k3)
			assert.Equal(t, gets, int64(0))
			_, gets, _ = e.verify(t, k2)
			assert.Equal(t, gets, int64(0))
			_, gets, _ = e.verify(t, k1)
			assert.Equal(t, gets, int64(1))
		}},
		{"a TTL of zero turns the cache off", []authz.APIKeysOption{authz.WithCacheTTL(0)}, func(t *testing.T, e *keyCacheEnv) {
			key, _ := e.create(t, "alice")
			for range 3 {
				_, gets, err := e.verify(t, key)
				assert.NilError(t, err)
				assert.Equal(t, gets, int64(1))
			}
		}},
		{"a read from before a revoke is not cached after it", nil, func(t *testing.T, e *keyCacheEnv) {
			key, rec := e.create(t, "alice")
			// The verification reads the record, then the revoke runs before it is done.
			hold := func() {
				_, err := e.keys.Revoke(ctx, rec.ID)
				assert.Check(t, err)
			}
			e.bucket.onGet.Store(&hold)
			_, _, err := e.verify(t, key)
			assert.NilError(t, err, "it read the record before the revoke")
			_, gets, err := e.verify(t, key)
			assert.Equal(t, nserr.CodeOf(err), nserr.Unauthenticated)
			assert.Equal(t, gets, int64(1))
		}},
	} {
		t.Run(tc.name, func(t *testing.T) { tc.run(t, newKeyCacheEnv(t, tc.opts...)) })
	}
}

// Verifications, creates and revokes at once: under -race, and a revoked key never verifies on
// this replica once its revoke returned.
func TestAPIKeyCacheConcurrent(t *testing.T) {
	ctx := context.Background()
	e := newKeyCacheEnv(t, authz.WithCacheSize(4))
	type issued struct {
		key string
		id  string
	}
	var keys []issued
	for i := range 8 {
		key, rec := e.create(t, "u"+strconv.Itoa(i))
		keys = append(keys, issued{key, rec.ID})
	}
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 200 {
				k := keys[(g+i)%len(keys)]
				if _, err := e.keys.VerifyAPIKey(ctx, k.key); err != nil && nserr.CodeOf(err) != nserr.Unauthenticated {
					t.Errorf("verify: %v", err)
					return
				}
				if i%50 == 0 {
					e.clock.Advance(time.Second)
				}
			}
		}()
	}
	wg.Add(1)
	go func() {
		defer wg.Done()
		for _, k := range keys[:4] {
			if _, err := e.keys.Revoke(ctx, k.id); err != nil {
				t.Errorf("revoke: %v", err)
				return
			}
			if _, err := e.keys.VerifyAPIKey(ctx, k.key); nserr.CodeOf(err) != nserr.Unauthenticated {
				t.Errorf("key %s verified after its revoke returned: %v", k.id, err)
			}
		}
	}()
	wg.Wait()
	for i, k := range keys {
		_, err := e.keys.VerifyAPIKey(ctx, k.key)
		if i < 4 {
			assert.Equal(t, nserr.CodeOf(err), nserr.Unauthenticated)
		} else {
			assert.NilError(t, err)
		}
	}
}

func BenchmarkVerifyAPIKey(b *testing.B) {
	ctx := context.Background()
	for _, bc := range []struct {
		name string
		opts []authz.APIKeysOption
	}{
		{"uncached", []authz.APIKeysOption{authz.WithCacheTTL(0)}},
		{"cached", nil},
	} {
		b.Run(bc.name, func(b *testing.B) {
			keys := authz.NewAPIKeys(registry.NewStore(storage.NewMemory()), bc.opts...)
			key, _, err := keys.Create(ctx, authz.User("alice"), "")
			assert.NilError(b, err)
			b.ReportAllocs()
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					if _, err := keys.VerifyAPIKey(ctx, key); err != nil {
						b.Error(err)
						return
					}
				}
			})
		})
	}
}
