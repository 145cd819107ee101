package namespace_test

import (
	"context"
	"encoding/hex"
	"strings"
	"testing"
	"time"

	"gotest.tools/v3/assert"

	nserr "github.com/lancecat/lancecat/errors"
	"github.com/lancecat/lancecat/ident"
	"github.com/lancecat/lancecat/storage"
)

// TestIndexBuildOldClaim: during a rolling upgrade a build claim written by a replica from
// before internal/lease keeps a create of the same name out while it is fresh
// (ConcurrentModification naming its task and replica), and is taken over once stale; the
// build that took it over deletes it when it ends, as the old replicas did.
func TestIndexBuildOldClaim(t *testing.T) {
	ctx := context.Background()
	later := func() time.Time { return time.Now().Add(time.Hour) }
	a, b, _ := replicas(t, later)
	id := ident.ID{"vecs"}
	vectorTable(t, a, id, buildRows)
	h, err := a.LoadTable(ctx, id)
	assert.NilError(t, err)
	root := mustDataset(t, h).Store()
	key := "_maintenance/index_builds/" + hex.EncodeToString([]byte("\x00vec_idx")) + ".json"
	body := `{"index_name":"vec_idx","holder":"old-replica","task":"task-old","updated_at":"` + time.Now().UTC().Format(time.RFC3339Nano) + `"}`
	_, err = root.Put(ctx, key, strings.NewReader(body), int64(len(body)))
	assert.NilError(t, err)

	_, err = createIVFPQ(ctx, a, id)
	assert.Equal(t, codeOf(err), nserr.ConcurrentModification, "%v", err)
	assert.ErrorContains(t, err, "task task-old on old-replica")

	_, err = createIVFPQ(ctx, b, id) // an hour later by b's clock: the old claim is stale
	assert.NilError(t, err)
	b.WaitIndexBuilds()
	assert.DeepEqual(t, indexNames(t, a, id), []string{"vec_idx:IVF_PQ"})
	_, err = root.Stat(ctx, key)
	assert.ErrorIs(t, err, storage.ErrNotFound, "the claim is deleted when the build ends")
}
