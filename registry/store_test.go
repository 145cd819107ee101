package registry_test

import (
	"bytes"
	"context"
	"errors"
	"os"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"gotest.tools/v3/assert"

	nserr "github.com/lancecat/lancecat/errors"
	"github.com/lancecat/lancecat/internal/testenv"
	"github.com/lancecat/lancecat/registry"
	"github.com/lancecat/lancecat/storage"
)

// backends are the stores the record protocol is proven on: memory, the filesystem and MinIO
// (skipped, with a message, when MinIO is not running; never under `make test`).
func backends(t *testing.T) map[string]storage.Bucket {
	fs, err := storage.NewFS(t.TempDir())
	assert.NilError(t, err)
	out := map[string]storage.Bucket{"memory": storage.NewMemory(), "fs": fs}
	if os.Getenv(testenv.EnvS3Endpoint) != "" || os.Getenv(testenv.EnvRequireServices) == "1" {
		cfg, bucket := testenv.S3Bucket(t)
		s3, err := storage.NewS3(context.Background(), cfg, bucket, "control")
		assert.NilError(t, err)
		out["minio"] = s3
	} else {
		t.Log("MinIO not available: registry runs on memory and fs only (make test runs it on MinIO too)")
	}
	return out
}

func TestCreateRaceHasOneWinner(t *testing.T) {
	for name, b := range backends(t) {
		t.Run(name, func(t *testing.T) {
			s := registry.NewStore(b)
			ctx := context.Background()
			for round := range 5 {
				var wins, lost atomic.Int32
				var wg sync.WaitGroup
				for i := range 8 {
					wg.Go(func() {
						err := registry.Create(ctx, s, registry.ProjectKey("p"), registry.Project{ID: "p", CreatedBy: string(rune('a' + i))})
						switch {
						case err == nil:
							wins.Add(1)
						case errors.Is(err, registry.ErrExists):
							lost.Add(1)
						default:
							t.Error(err)
						}
					})
				}
				wg.Wait()
				assert.Equal(t, wins.Load(), int32(1), "round %d", round)
				assert.Equal(t, lost.Load(), int32(7))
				assert.NilError(t, registry.Delete(ctx, s, registry.ProjectKey("p")))
			}
		})
	}
}

func TestMutateLosesNoUpdate(t *testing.T) {
	for name, b := range backends(t) {
		t.Run(name, func(t *testing.T) {
			s := registry.NewStore(b)
			s.MutateAttempts = 1000 // 8 writers hammering one record: retries are the point here
			ctx := context.Background()
			key := registry.WarehouseKey("w")
			assert.NilError(t, registry.Create(ctx, s, key, registry.Warehouse{ID: "w", Project: "p", Bucket: "b", RootURI: "s3://b"}))
			var wg sync.WaitGroup
			for range 8 {
				wg.Go(func() {
					for range 20 {
						_, err := registry.Mutate(ctx, s, key, func(w *registry.Warehouse) error {
							w.Bucket += "x"
							return nil
						})
						assert.Check(t, err)
					}
				})
			}
			wg.Wait()
			w, _, err := registry.Read[registry.Warehouse](ctx, s, key)
			assert.NilError(t, err)
			assert.Equal(t, len(w.Bucket), 1+8*20)
		})
	}
}

func TestMutateMissingAndFnError(t *testing.T) {
	s := registry.NewStore(storage.NewMemory())
	ctx := context.Background()
	_, err := registry.Mutate(ctx, s, registry.ProjectKey("gone"), func(*registry.Project) error { return nil })
	assert.Assert(t, errors.Is(err, registry.ErrNotFound))

	assert.NilError(t, registry.Create(ctx, s, registry.ProjectKey("p"), registry.Project{ID: "p"}))
	boom := errors.New("refused")
	_, err = registry.Mutate(ctx, s, registry.ProjectKey("p"), func(*registry.Project) error { return boom })
	assert.Assert(t, errors.Is(err, boom))
	_, err = registry.Mutate(ctx, s, registry.ProjectKey("p"), func(p *registry.Project) error {
		p.ID = "Not Valid"
		return nil
	})
	assert.ErrorContains(t, err, "invalid record")
}

// TestMalformedIsUnavailableNeverAbsent: a record that exists but cannot be read must stop the
// caller (503), not look like a free id.
func TestMalformedIsUnavailableNeverAbsent(t *testing.T) {
	ctx := context.Background()
	b := storage.NewMemory()
	s := registry.NewStore(b)
	for name, body := range map[string]string{
		"not json":       `{"id":`,
		"wrong shape":    `{"id": 7}`,
		"fails validate": `{"id":"UPPER"}`,
		"trailing data":  `{"id":"p"} {"id":"q"}`,
	} {
		t.Run(name, func(t *testing.T) {
			key := registry.ProjectKey("p")
			_, err := b.Put(ctx, key, bytes.NewReader([]byte(body)), int64(len(body)))
			assert.NilError(t, err)
			_, _, err = registry.Read[registry.Project](ctx, s, key)
			assert.Assert(t, errors.Is(err, registry.ErrMalformed), "%v", err)
			assert.Assert(t, !errors.Is(err, registry.ErrNotFound))
			assert.Equal(t, nserr.CodeOf(err), nserr.ServiceUnavailable)
			_, err = registry.Mutate(ctx, s, key, func(*registry.Project) error { return nil })
			assert.Assert(t, errors.Is(err, registry.ErrMalformed))
		})
	}
}

func TestListSkipsAndReportsBadRecords(t *testing.T) {
	ctx := context.Background()
	b := storage.NewMemory()
	s := registry.NewStore(b)
	for _, id := range []string{"a", "b", "c"} {
		assert.NilError(t, registry.Create(ctx, s, registry.WarehouseKey(id),
			registry.Warehouse{ID: id, Project: "p", Bucket: "bk-" + id, RootURI: "s3://bk-" + id, CreatedAt: time.Unix(0, 0).UTC()}))
	}
	_, err := b.Put(ctx, registry.WarehouseKey("broken"), bytes.NewReader([]byte("nope")), 4)
	assert.NilError(t, err)
	assert.NilError(t, registry.Create(ctx, s, registry.BindingKey("ns1"), registry.Binding{TopNamespace: "ns1", WarehouseID: "a", RootURI: "s3://bk-a"}))

	got, err := registry.List[registry.Warehouse](ctx, s, registry.WarehousesPrefix)
	assert.NilError(t, err)
	assert.Equal(t, len(got.Records), 3, "bindings live one level down and are not warehouses")
	assert.DeepEqual(t, got.Skipped, []string{registry.WarehouseKey("broken")})
	bindings, err := registry.List[registry.Binding](ctx, s, registry.BindingsPrefix)
	assert.NilError(t, err)
	assert.Equal(t, len(bindings.Records), 1)
}

func TestObjectKeysAreStableAndDistinct(t *testing.T) {
	a := registry.ObjectKey(registry.ProtectionPrefix, registry.KindTable, []string{"ns", "t"})
	assert.Equal(t, a, registry.ObjectKey(registry.ProtectionPrefix, registry.KindTable, []string{"ns", "t"}))
	assert.Assert(t, a != registry.ObjectKey(registry.ProtectionPrefix, registry.KindNamespace, []string{"ns", "t"}))
	assert.Assert(t, a != registry.ObjectKey(registry.ProtectionPrefix, registry.KindTable, []string{"nst"}))
	assert.Assert(t, a != registry.ObjectKey(registry.ProtectionPrefix, registry.KindTable, []string{"n", "st"}))
	assert.Equal(t, len(a), len(registry.ProtectionPrefix)+len("table-")+24+len(".json"))
}
