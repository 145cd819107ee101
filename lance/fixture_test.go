package lance

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"gotest.tools/v3/assert"

	"github.com/lancecat/lancecat/storage"
)

// Fixtures written by the official LanceDB SDK. LANCE_FIXTURE_DIR holds one
// directory per table plus expected.json, which records what the SDK itself
// reports for every version:
//
//	{"tables": [{"name": "v2names", "dir": "v2names.lance", "naming": "v1"|"v2",
//	  "versions": [{"version": 1, "timestamp_ms": 1795973348426, "rows": 100,
//	                "fields": ["id", "name"]}],
//	  "tags": {"first": {"version": 1, "manifestSize": 627}}}]}
const fixtureEnv = "LANCE_FIXTURE_DIR"

type fixtureExpect struct {
	Tables []struct {
		Name     string `json:"name"`
		Dir      string `json:"dir"`
		Naming   string `json:"naming"`
		Versions []struct {
			Version     uint64   `json:"version"`
			TimestampMS int64    `json:"timestamp_ms"`
			Rows        uint64   `json:"rows"`
			Fields      []string `json:"fields"`
		} `json:"versions"`
		Tags map[string]struct {
			Version      uint64 `json:"version"`
			ManifestSize int64  `json:"manifestSize"`
		} `json:"tags"`
	} `json:"tables"`
}

func TestSDKFixtures(t *testing.T) {
	dir := os.Getenv(fixtureEnv)
	if dir == "" {
		t.Skipf("%s is not set", fixtureEnv)
	}
	raw, err := os.ReadFile(filepath.Join(dir, "expected.json"))
	assert.NilError(t, err)
	var want fixtureExpect
	assert.NilError(t, json.Unmarshal(raw, &want))
	assert.Assert(t, len(want.Tables) > 0)
	ctx := context.Background()

	for _, table := range want.Tables {
		t.Run(table.Name, func(t *testing.T) {
			store, err := storage.NewFS(filepath.Join(dir, table.Dir))
			assert.NilError(t, err)
			ds := NewDataset(store)

			scheme, err := ds.NamingScheme(ctx)
			assert.NilError(t, err)
			assert.Equal(t, map[NamingScheme]string{NamingV1: "v1", NamingV2: "v2"}[scheme], table.Naming)

			listed, err := ds.ListVersions(ctx, ListVersionsOptions{})
			assert.NilError(t, err)
			assert.Equal(t, len(listed), len(table.Versions))
			for i, exp := range table.Versions {
				assert.Equal(t, listed[i].Version, exp.Version)
				assert.Equal(t, listed[i].Timestamp.UnixMilli(), exp.TimestampMS)

				v, err := ds.OpenVersion(ctx, exp.Version)
				assert.NilError(t, err)
				rows, err := v.CountRows()
				assert.NilError(t, err)
				assert.Equal(t, rows, exp.Rows, "version %d", exp.Version)
				var top []string
				for _, f := range v.Fields() {
					if f.GetParentId() == -1 {
						top = append(top, f.GetName())
					}
				}
				assert.DeepEqual(t, top, exp.Fields)
				assert.Check(t, v.Transaction() != nil, "8.0 writes the transaction inline")

				// Protobuf-go must reproduce Rust's bytes for these manifests
				// (no maps with more than one entry, where order could differ).
				data, _, err := storage.ReadAll(ctx, store, v.Location.Key)
				assert.NilError(t, err)
				again, err := v.File.Encode()
				assert.NilError(t, err)
				assert.Check(t, bytes.Equal(again, data), "version %d re-encodes differently", exp.Version)
			}

			latest, err := ds.OpenLatest(ctx)
			assert.NilError(t, err)
			assert.Equal(t, latest.Number(), table.Versions[len(table.Versions)-1].Version)
			hint, ok, err := ReadVersionHint(ctx, store)
			assert.NilError(t, err)
			assert.Check(t, ok)
			assert.Equal(t, hint, latest.Number())

			// A tag's manifestSize is the size of the tagged manifest file.
			for name, tag := range table.Tags {
				loc, err := ds.ResolveVersion(ctx, tag.Version)
				assert.NilError(t, err)
				assert.Equal(t, loc.Size, tag.ManifestSize, "tag %s", name)
			}
		})
	}
}
