package namespace

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"google.golang.org/protobuf/types/known/timestamppb"
	"gotest.tools/v3/assert"

	"github.com/lancecat/lancecat/catalog"
	nserr "github.com/lancecat/lancecat/errors"
	"github.com/lancecat/lancecat/ident"
	"github.com/lancecat/lancecat/lance"
	"github.com/lancecat/lancecat/lance/lancefile"
	"github.com/lancecat/lancecat/lance/pb/tablepb"
	"github.com/lancecat/lancecat/storage"
	"github.com/lancecat/lancecat/table"
)

// stage writes an (empty) manifest of version under key, as a client staging a commit does.
func stage(t *testing.T, b storage.Bucket, key string, version uint64) int64 {
	t.Helper()
	fields, err := lancefile.LanceFields(manifestSchema(), 0)
	assert.NilError(t, err)
	mf := &lance.ManifestFile{
		Manifest: &tablepb.Manifest{
			Fields: fields, Version: version, Timestamp: timestamppb.New(time.Now()),
			DataFormat: &tablepb.Manifest_DataStorageFormat{FileFormat: "lance", Version: "2.1"},
		},
		Transaction: &tablepb.Transaction{Uuid: uuid.NewString(), ReadVersion: version - 1},
	}
	data, err := mf.Encode()
	assert.NilError(t, err)
	_, err = b.Put(context.Background(), key, bytes.NewReader(data), int64(len(data)))
	assert.NilError(t, err)
	return int64(len(data))
}

func TestManagedVersioning(t *testing.T) {
	ctx := context.Background()
	n, b := newTestNamespace(t) // RootURI "/root"
	_, err := n.CreateNamespace(ctx, ident.ID{"prod"}, nil, "")
	assert.NilError(t, err)
	tbl, err := n.DeclareTable(ctx, ident.ID{"prod", "items"}, "", nil)
	assert.NilError(t, err)
	assert.Assert(t, !tbl.ManagedVersioning, "off by default")

	_, err = n.CreateNamespace(ctx, ident.ID{}, map[string]string{ManagedVersioningProperty: "true"}, catalog.ModeOverwrite)
	assert.NilError(t, err)
	tbl, err = n.DescribeTable(ctx, ident.ID{"prod", "items"})
	assert.NilError(t, err)
	assert.Assert(t, tbl.ManagedVersioning, "on by the root property")

	// No versions yet: an empty list, and describe says version not found.
	vs, _, err := n.handleOf(tbl).ListVersions(ctx, catalog.VersionQuery{Descending: true, Limit: 1})
	assert.NilError(t, err)
	assert.Equal(t, len(vs), 0)
	_, err = n.handleOf(tbl).DescribeVersion(ctx, "", nil)
	assert.Assert(t, errors.Is(err, nserr.ErrTableVersionNotFound), "%v", err)

	storeForm := "root/" + tbl.Location // the object-store form of the table directory
	publish := func(version uint64, clientPrefix, branch string) (catalog.TableVersion, error) {
		dir := tbl.Location + "/" + table.BranchPrefix(branch) + "_versions/"
		name := lance.NamingV2.ManifestName(version) + "-" + uuid.NewString()
		size := stage(t, b, dir+name, version)
		return n.handleOf(tbl).CreateVersion(ctx, catalog.NewTableVersion{
			Version: int64(version), ManifestPath: clientPrefix + table.BranchPrefix(branch) + "_versions/" + name,
			ManifestSize: &size, NamingScheme: "V2", Branch: branch,
		})
	}

	// Object-store form in, object-store form out; the staging file is gone.
	v1, err := publish(1, storeForm+"/", "")
	assert.NilError(t, err)
	assert.Equal(t, v1.ManifestPath, storeForm+"/"+lance.NamingV2.ManifestKey(1))
	page, err := b.List(ctx, tbl.Location+"/_versions/", storage.ListOptions{})
	assert.NilError(t, err)
	assert.Equal(t, len(page.Objects), 1, "staging file deleted: %v", page.Objects)

	// An absolute path in, the same form out.
	v2, err := publish(2, "/"+storeForm+"/", "")
	assert.NilError(t, err)
	assert.Equal(t, v2.ManifestPath, "/"+storeForm+"/"+lance.NamingV2.ManifestKey(2))

	// A taken version: 409 code 14, and version 2 is untouched.
	_, err = publish(2, storeForm+"/", "")
	assert.Assert(t, errors.Is(err, nserr.ErrConcurrentModification), "%v", err)
	info, err := b.Stat(ctx, tbl.Location+"/"+lance.NamingV2.ManifestKey(2))
	assert.NilError(t, err)
	assert.Equal(t, info.Size, v2.ManifestSize)

	// A staged manifest of another version, or outside the table, is refused.
	size := stage(t, b, tbl.Location+"/_versions/x.manifest-1", 7)
	_, err = n.handleOf(tbl).CreateVersion(ctx, catalog.NewTableVersion{Version: 3, ManifestPath: storeForm + "/_versions/x.manifest-1", ManifestSize: &size})
	assert.Assert(t, errors.Is(err, nserr.ErrInvalidInput), "%v", err)
	_, err = n.handleOf(tbl).CreateVersion(ctx, catalog.NewTableVersion{Version: 3, ManifestPath: "root/other/_versions/x.manifest-1"})
	assert.Assert(t, errors.Is(err, nserr.ErrInvalidInput), "%v", err)
	_, err = n.handleOf(tbl).CreateVersion(ctx, catalog.NewTableVersion{Version: 3, ManifestPath: storeForm + "/_versions/../../x"})
	assert.Assert(t, errors.Is(err, nserr.ErrInvalidInput), "%v", err)

	// List (descending, limit, pages) and describe read the same store.
	for v := uint64(3); v <= 5; v++ {
		_, err := publish(v, storeForm+"/", "")
		assert.NilError(t, err)
	}
	vs, next, err := n.handleOf(tbl).ListVersions(ctx, catalog.VersionQuery{Descending: true, Limit: 2})
	assert.NilError(t, err)
	assert.DeepEqual(t, versionNumbers(vs), []uint64{5, 4})
	vs, _, err = n.handleOf(tbl).ListVersions(ctx, catalog.VersionQuery{Descending: true, Limit: 2, Token: next})
	assert.NilError(t, err)
	assert.DeepEqual(t, versionNumbers(vs), []uint64{3, 2})
	latest, err := n.handleOf(tbl).DescribeVersion(ctx, "", nil)
	assert.NilError(t, err)
	assert.Equal(t, latest.Version, uint64(5))
	assert.Assert(t, !strings.HasPrefix(latest.ManifestPath, "/"), latest.ManifestPath)
	_, err = n.handleOf(tbl).DescribeVersion(ctx, "", ptrTo(int64(9)))
	assert.Assert(t, errors.Is(err, nserr.ErrTableVersionNotFound), "%v", err)

	// A branch: its own _versions/ under tree/<branch>/; an unknown branch has no versions.
	bv, err := publish(6, storeForm+"/", "dev")
	assert.NilError(t, err)
	assert.Equal(t, bv.ManifestPath, storeForm+"/tree/dev/"+lance.NamingV2.ManifestKey(6))
	vs, _, err = n.handleOf(tbl).ListVersions(ctx, catalog.VersionQuery{Branch: "dev", Descending: true, Limit: 1})
	assert.NilError(t, err)
	assert.DeepEqual(t, versionNumbers(vs), []uint64{6})
	vs, _, err = n.handleOf(tbl).ListVersions(ctx, catalog.VersionQuery{Branch: "nobranch", Descending: true, Limit: 1})
	assert.NilError(t, err)
	assert.Equal(t, len(vs), 0)
	// The branch named in the body must be the one the path is on.
	name := lance.NamingV2.ManifestName(7) + "-x"
	stage(t, b, tbl.Location+"/_versions/"+name, 7)
	_, err = n.handleOf(tbl).CreateVersion(ctx, catalog.NewTableVersion{Version: 7, ManifestPath: storeForm + "/_versions/" + name, Branch: "dev"})
	assert.Assert(t, errors.Is(err, nserr.ErrInvalidInput), "%v", err)

	// Delete versions: [1, 3) goes, the latest stays.
	n2, err := n.handleOf(tbl).DeleteVersions(ctx, "", []lance.VersionRange{{Start: 1, End: 3}, {Start: 5, End: -1}})
	assert.NilError(t, err)
	assert.Equal(t, n2, 2)
	_, err = n.handleOf(tbl).DescribeVersion(ctx, "", ptrTo(int64(1)))
	assert.Assert(t, errors.Is(err, nserr.ErrTableVersionNotFound), "%v", err)
}

func TestManagedVersioningConcurrentCreates(t *testing.T) {
	ctx := context.Background()
	n, b := newTestNamespace(t)
	tbl, err := n.DeclareTable(ctx, ident.ID{"t"}, "", nil)
	assert.NilError(t, err)
	const writers = 8
	errs := make(chan error, writers)
	for i := range writers {
		name := tbl.Location + "/_versions/" + lance.NamingV2.ManifestName(1) + "-" + uuid.NewString()
		stage(t, b, name, 1)
		go func() {
			_, err := n.handleOf(tbl).CreateVersion(ctx, catalog.NewTableVersion{Version: 1, ManifestPath: "root/" + name})
			errs <- err
		}()
		_ = i
	}
	won := 0
	for range writers {
		err := <-errs
		if err == nil {
			won++
			continue
		}
		assert.Assert(t, errors.Is(err, nserr.ErrConcurrentModification), "%v", err)
	}
	assert.Equal(t, won, 1)
}

func versionNumbers(vs []catalog.TableVersion) []uint64 {
	out := make([]uint64, len(vs))
	for i, v := range vs {
		out[i] = v.Version
	}
	return out
}

func ptrTo[T any](v T) *T { return &v }
