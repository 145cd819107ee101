package main

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"

	"google.golang.org/protobuf/types/known/timestamppb"
	"gotest.tools/v3/assert"

	"github.com/lancecat/lancecat/lance"
	"github.com/lancecat/lancecat/lance/pb/filepb"
	"github.com/lancecat/lancecat/lance/pb/tablepb"
	"github.com/lancecat/lancecat/storage"
)

// tinyDataset writes a one-column dataset with three versions and a tag.
func tinyDataset(t *testing.T) string {
	ctx := context.Background()
	dir := t.TempDir()
	store, err := storage.NewFS(dir)
	assert.NilError(t, err)
	ds := lance.NewDatasetAt(store, dir)
	_, err = ds.PutManifest(ctx, lance.NamingV2, &lance.ManifestFile{
		Manifest: &tablepb.Manifest{
			Version:   1,
			Fields:    []*filepb.Field{{Name: "id", ParentId: -1, LogicalType: "int64"}},
			Fragments: []*tablepb.DataFragment{{PhysicalRows: 3, Files: []*tablepb.DataFile{{Path: "a.lance", Fields: []int32{0}}}}},
			Timestamp: timestamppb.Now(),
		},
		Transaction: &tablepb.Transaction{Uuid: "u", Operation: &tablepb.Transaction_Overwrite_{Overwrite: &tablepb.Transaction_Overwrite{}}},
	})
	assert.NilError(t, err)
	_, err = ds.UpdateSchemaMetadata(ctx, lance.MetadataUpdate{"k": lance.Set("v")})
	assert.NilError(t, err)
	_, err = ds.UpdateSchemaMetadata(ctx, lance.MetadataUpdate{"k": nil})
	assert.NilError(t, err)
	_, err = ds.CreateTag(ctx, "first", 1, "")
	assert.NilError(t, err)
	return dir
}

func TestDatasetCommands(t *testing.T) {
	dir := tinyDataset(t)
	tests := []struct {
		args []string
		want []string
	}{
		{[]string{"inspect", dir}, []string{"version        3", "UpdateConfig", "rows           3", "first  version 1"}},
		{[]string{"inspect", "--version", "1", dir}, []string{"Overwrite"}},
		{[]string{"versions", dir}, []string{"VERSION", "Overwrite", "first"}},
		{[]string{"tags", dir}, []string{"first  version 1"}},
		{[]string{"cleanup", "--keep-last", "1", "--dry-run", dir}, []string{"would remove 1 version(s) [2]"}},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args[:len(tt.args)-1], " "), func(t *testing.T) {
			var out, errOut bytes.Buffer
			assert.Equal(t, run(append([]string{"dataset"}, tt.args...), &out, &errOut), 0, errOut.String())
			for _, w := range tt.want {
				assert.Check(t, strings.Contains(out.String(), w), "output lacks %q:\n%s", w, out.String())
			}
		})
	}
}

func TestDatasetJSON(t *testing.T) {
	dir := tinyDataset(t)
	var out, errOut bytes.Buffer
	assert.Equal(t, run([]string{"dataset", "inspect", "--json", dir}, &out, &errOut), 0, errOut.String())
	var r lance.InspectReport
	assert.NilError(t, json.Unmarshal(out.Bytes(), &r))
	assert.Equal(t, r.Version, uint64(3))
	assert.Equal(t, *r.Rows, uint64(3))
	assert.Equal(t, r.Schema.Fields[0].Type.Type, "int64")
	assert.Equal(t, r.Tags[0].Name, "first")

	out.Reset()
	assert.Equal(t, run([]string{"dataset", "cleanup", "--json", "--keep-last", "1", dir}, &out, &errOut), 0, errOut.String())
	var c lance.CleanupReport
	assert.NilError(t, json.Unmarshal(out.Bytes(), &c))
	assert.DeepEqual(t, c.RemovedVersions, []uint64{2})

	out.Reset()
	assert.Equal(t, run([]string{"dataset", "versions", "--json", dir}, &out, &errOut), 0)
	var vs []lance.VersionEntry
	assert.NilError(t, json.Unmarshal(out.Bytes(), &vs))
	assert.Equal(t, len(vs), 2)
}

func TestDatasetErrors(t *testing.T) {
	var out, errOut bytes.Buffer
	assert.Equal(t, run([]string{"dataset"}, &out, &errOut), 2)
	assert.Equal(t, run([]string{"dataset", "frobnicate", "/x"}, &out, &errOut), 2)
	assert.Equal(t, run([]string{"dataset", "inspect"}, &out, &errOut), 2)
	errOut.Reset()
	assert.Equal(t, run([]string{"dataset", "inspect", t.TempDir()}, &out, &errOut), 1)
	assert.Check(t, strings.Contains(errOut.String(), "not found"), errOut.String())
	assert.Equal(t, run([]string{"dataset", "cleanup", t.TempDir()}, &out, &errOut), 1)
}
