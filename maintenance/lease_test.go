package maintenance

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"gotest.tools/v3/assert"

	nserr "github.com/lancecat/lancecat/errors"
	"github.com/lancecat/lancecat/ident"
	"github.com/lancecat/lancecat/storage"
)

// TestOldReplicaLease: during a rolling upgrade a table lease written by a replica from before
// internal/lease ({"holder","expires_at"}) keeps this replica's pass out until it expires (409
// naming that replica), and its released form (a zero expiry) lets the pass in; what this
// replica leaves behind reads as released to the old replica (its expiry is zero).
func TestOldReplicaLease(t *testing.T) {
	ctx := context.Background()
	_, ns := sweepRoot(t, 1, 2)
	s := &Service{Catalog: ns, Holder: "new-replica"}
	id := ident.ID{"t0000"}
	tbl, err := ns.LoadTable(ctx, id)
	assert.NilError(t, err)
	ds, _ := tbl.Dataset()
	store := ds.Store()
	put := func(body string) {
		_, err := store.Put(ctx, LeaseKey, strings.NewReader(body), int64(len(body)))
		assert.NilError(t, err)
	}

	put(fmt.Sprintf(`{"holder":"old-replica","expires_at":%q}`, time.Now().Add(time.Hour).UTC().Format(time.RFC3339Nano)))
	_, err = s.RunTable(ctx, id, RunOptions{})
	assert.Equal(t, nserr.CodeOf(err), nserr.ConcurrentModification, "%v", err)
	assert.ErrorContains(t, err, "old-replica")

	put(`{"holder":"old-replica","expires_at":"0001-01-01T00:00:00Z"}`)
	_, err = s.RunTable(ctx, id, RunOptions{})
	assert.NilError(t, err)

	data, _, err := storage.ReadAll(ctx, store, LeaseKey)
	assert.NilError(t, err)
	var old struct {
		Holder    string    `json:"holder"`
		ExpiresAt time.Time `json:"expires_at"`
	}
	assert.NilError(t, json.Unmarshal(data, &old))
	assert.Equal(t, old.Holder, "new-replica")
	assert.Assert(t, !time.Now().Before(old.ExpiresAt), "an old replica reads it expired: %s", data)
}
