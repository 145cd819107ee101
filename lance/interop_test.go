package lance

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"gotest.tools/v3/assert"

	"github.com/lancecat/lancecat/internal/testenv"
	"github.com/lancecat/lancecat/lance/pb/filepb"
	"github.com/lancecat/lancecat/storage"
)

// Fixtures written by scripts/lancedb/table-fixtures.sh: one directory per
// SDK version, each with expected.json (see table-fixtures.mjs).
const tableFixtureEnv = "LANCE_TABLE_FIXTURES"

type sdkVersionExpect struct {
	Version     uint64      `json:"version"`
	TimestampMS int64       `json:"timestamp_ms"`
	Rows        uint64      `json:"rows"`
	Fields      []string    `json:"fields"`
	Schema      []JSONField `json:"schema"`
}

type sdkTableExpect struct {
	Name     string             `json:"name"`
	Dir      string             `json:"dir"`
	Naming   string             `json:"naming"`
	Storage  string             `json:"storage"`
	Versions []sdkVersionExpect `json:"versions"`
	Tags     map[string]struct {
		Version      uint64 `json:"version"`
		ManifestSize int64  `json:"manifestSize"`
	} `json:"tags"`
	Branches map[string]struct {
		ParentVersion uint64             `json:"parentVersion"`
		ParentBranch  *string            `json:"parentBranch"`
		ManifestSize  int64              `json:"manifestSize"`
		Versions      []sdkVersionExpect `json:"versions"`
	} `json:"branches"`
	Indices []sdkIndex `json:"indices"`
	Stats   struct {
		TotalBytes    uint64 `json:"totalBytes"`
		NumRows       uint64 `json:"numRows"`
		NumIndices    int    `json:"numIndices"`
		FragmentStats struct {
			NumFragments      int             `json:"numFragments"`
			NumSmallFragments int             `json:"numSmallFragments"`
			Lengths           FragmentLengths `json:"lengths"`
		} `json:"fragmentStats"`
	} `json:"stats"`
}

type sdkIndex struct {
	Name    string   `json:"name"`
	Type    string   `json:"type"`
	Columns []string `json:"columns"`
}

type sdkExpect struct {
	SDK    string           `json:"sdk"`
	SDKDir string           `json:"sdk_dir"`
	Tables []sdkTableExpect `json:"tables"`
	dir    string
}

func loadTableFixtures(t *testing.T) []sdkExpect {
	root := os.Getenv(tableFixtureEnv)
	if root == "" {
		t.Skipf("%s is not set: run scripts/lancedb/table-fixtures.sh <dir> and export %s=<dir>", tableFixtureEnv, tableFixtureEnv)
	}
	files, err := filepath.Glob(filepath.Join(root, "*", "expected.json"))
	assert.NilError(t, err)
	assert.Assert(t, len(files) > 0, "no */expected.json under %s", root)
	var out []sdkExpect
	for _, f := range files {
		raw, err := os.ReadFile(f)
		assert.NilError(t, err)
		var e sdkExpect
		assert.NilError(t, json.Unmarshal(raw, &e))
		e.dir = filepath.Dir(f)
		out = append(out, e)
	}
	return out
}

func checkVersions(t *testing.T, ds *Dataset, want []sdkVersionExpect) {
	ctx := context.Background()
	listed, err := ds.ListVersions(ctx, ListVersionsOptions{})
	assert.NilError(t, err)
	var got []uint64
	for _, l := range listed {
		got = append(got, l.Version)
	}
	var exp []uint64
	for _, w := range want {
		exp = append(exp, w.Version)
	}
	assert.DeepEqual(t, got, exp)
	for _, w := range want {
		v, err := ds.OpenVersion(ctx, w.Version)
		assert.NilError(t, err)
		assert.Equal(t, v.Timestamp().UnixMilli(), w.TimestampMS, "version %d", w.Version)
		rows, err := v.CountRows()
		assert.NilError(t, err)
		assert.Equal(t, rows, w.Rows, "rows of version %d", w.Version)
		js, err := v.JSONSchema()
		assert.NilError(t, err)
		var names []string
		for i := range js.Fields {
			names = append(names, js.Fields[i].Name)
			js.Fields[i].Metadata = nil // the SDK's listing carries no metadata
		}
		assert.DeepEqual(t, names, w.Fields)
		assert.DeepEqual(t, js.Fields, w.Schema)
		_, err = ds.ReadTransaction(ctx, v)
		assert.NilError(t, err, "version %d has a transaction", w.Version)
	}
}

// TestSDKTableFixtures reads every version of every fixture and compares
// it with what the SDK reported.
func TestSDKTableFixtures(t *testing.T) {
	ctx := context.Background()
	for _, sdk := range loadTableFixtures(t) {
		for _, table := range sdk.Tables {
			t.Run(sdk.SDK+"/"+table.Name, func(t *testing.T) {
				dir := filepath.Join(sdk.dir, table.Dir)
				ds, err := OpenURI(ctx, dir, storage.S3Config{})
				assert.NilError(t, err)
				checkSDKTable(t, ds, sdk, table)
			})
		}
	}
}

// checkSDKTable compares everything Go reads of ds with what the SDK
// reported for table: every version, tags, branches, indices, stats and
// deletion files.
func checkSDKTable(t *testing.T, ds *Dataset, sdk sdkExpect, table sdkTableExpect) {
	t.Helper()
	ctx := context.Background()
	scheme, err := ds.NamingScheme(ctx)
	assert.NilError(t, err)
	assert.Equal(t, scheme.String(), map[string]string{"v1": "V1", "v2": "V2"}[table.Naming])
	checkVersions(t, ds, table.Versions)

	tags, err := ds.ListTags(ctx)
	assert.NilError(t, err)
	assert.Equal(t, len(tags), len(table.Tags))
	for _, tag := range tags {
		w := table.Tags[tag.Name]
		assert.Equal(t, tag.Version, w.Version, tag.Name)
		assert.Equal(t, tag.ManifestSize, w.ManifestSize, tag.Name)
		v, err := ds.OpenTag(ctx, tag.Name)
		assert.NilError(t, err)
		assert.Equal(t, v.Location.Size, w.ManifestSize)
	}

	branches, err := ds.ListBranches(ctx)
	assert.NilError(t, err)
	assert.Equal(t, len(branches), len(table.Branches))
	for _, b := range branches {
		w := table.Branches[b.Name]
		assert.Equal(t, b.ParentVersion, w.ParentVersion)
		assert.DeepEqual(t, b.ParentBranch, w.ParentBranch)
		assert.Equal(t, b.ManifestSize, w.ManifestSize)
		bd, err := ds.Branch(b.Name)
		assert.NilError(t, err)
		checkVersions(t, bd, w.Versions)
	}

	latest, err := ds.OpenLatest(ctx)
	assert.NilError(t, err)
	idx := ListIndices(latest)
	assert.Equal(t, len(idx), len(table.Indices))
	slices.SortFunc(idx, func(a, b IndexInfo) int { return strings.Compare(a.Name, b.Name) })
	slices.SortFunc(table.Indices, func(a, b sdkIndex) int { return strings.Compare(a.Name, b.Name) })
	for i, w := range table.Indices {
		assert.Equal(t, idx[i].Name, w.Name)
		assert.DeepEqual(t, idx[i].Columns, w.Columns)
		want := map[string]string{"BTree": "BTree", "IvfPq": "Vector"}[w.Type]
		assert.Equal(t, idx[i].Type, want, "index %s (SDK type %s)", w.Name, w.Type)
	}

	st, err := latest.Stats()
	assert.NilError(t, err)
	assert.Equal(t, st.NumRows, table.Stats.NumRows)
	assert.Equal(t, st.NumIndices, table.Stats.NumIndices)
	// 0.31 sums column sizes from the data files' metadata (a
	// file read); 0.39 sums file sizes, which the manifest has.
	if sdk.SDK != "0.31.0" {
		assert.Equal(t, st.TotalBytes, table.Stats.TotalBytes)
	}
	assert.Equal(t, st.NumFragments, table.Stats.FragmentStats.NumFragments)
	assert.Equal(t, st.NumSmallFragments, table.Stats.FragmentStats.NumSmallFragments)
	assert.DeepEqual(t, st.Lengths, table.Stats.FragmentStats.Lengths)

	// Every deletion file of every version decodes to its count.
	for _, w := range table.Versions {
		v, err := ds.OpenVersion(ctx, w.Version)
		assert.NilError(t, err)
		for _, f := range v.Manifest().GetFragments() {
			if del := f.GetDeletionFile(); del != nil {
				_, err := ReadDeletionFile(ctx, ds.Store(), f.GetId(), del)
				assert.NilError(t, err)
			}
		}
	}
}

type planVersion struct {
	Version uint64   `json:"version"`
	Rows    uint64   `json:"rows"`
	Fields  []string `json:"fields"`
}

// TestSDKReadsGoCommits: Go commits on SDK-written tables (tag, schema
// metadata, drop column, restore, delete versions, cleanup), then the SDK
// opens every remaining version, reads it and appends on top; Go reads the
// result.
func TestSDKReadsGoCommits(t *testing.T) {
	ctx := context.Background()
	for _, sdk := range loadTableFixtures(t) {
		t.Run(sdk.SDK, func(t *testing.T) {
			work := t.TempDir()
			goCommitsThenSDK(t, sdk, work, nil, func(t *testing.T, table sdkTableExpect) (*Dataset, string) {
				dir := filepath.Join(work, table.Dir)
				testenv.CopyDir(t, filepath.Join(sdk.dir, table.Dir), dir)
				ds, err := OpenURI(ctx, dir, storage.S3Config{})
				assert.NilError(t, err)
				return ds, dir
			})
		})
	}
}

// sdkScript is the SDK side of the table interop tests.
func sdkScript(t *testing.T) string {
	t.Helper()
	if _, err := exec.LookPath("node"); err != nil {
		t.Skip("node is not installed")
	}
	return testenv.Script("lancedb", "table-interop.mjs")
}

// runSDK runs table-interop.mjs mode with arg and returns its output.
func runSDK(t *testing.T, sdk sdkExpect, mode, arg string) []byte {
	t.Helper()
	return testenv.Node(t, sdkScript(t), mode, sdk.SDKDir, arg)
}

type planTable struct {
	Dir      string            `json:"dir"`
	Versions []planVersion     `json:"versions"`
	Tags     map[string]uint64 `json:"tags"`
	Append   bool              `json:"append"`
}

// goCommitsThenSDK is the body of TestSDKReadsGoCommits for one SDK and
// one place: open puts a private copy of a fixture table there and returns
// it as Go's dataset and as the SDK's path or URI (which storageOptions, if
// any, reach).
func goCommitsThenSDK(t *testing.T, sdk sdkExpect, work string, storageOptions map[string]string,
	open func(t *testing.T, table sdkTableExpect) (*Dataset, string)) {
	ctx := context.Background()
	sdkScript(t)
	var plan struct {
		StorageOptions map[string]string `json:"storage_options,omitempty"`
		Tables         []planTable       `json:"tables"`
	}
	plan.StorageOptions = storageOptions
	latestRows := map[string]uint64{}
	datasets := map[string]*Dataset{}
	for _, table := range sdk.Tables {
		ds, dir := open(t, table)
		datasets[dir] = ds
		first := table.Versions[0].Version

		_, err := ds.CreateTag(ctx, "go-first", first, "")
		assert.NilError(t, err)
		meta, err := ds.UpdateSchemaMetadata(ctx, MetadataUpdate{"lancecat": Set("yes")})
		assert.NilError(t, err)
		dropped, err := ds.DropColumns(ctx, "score")
		assert.NilError(t, err)
		assert.Check(t, !slices.ContainsFunc(dropped.Fields(), func(f *filepb.Field) bool { return f.GetName() == "score" }))
		_, err = ds.RestoreVersion(ctx, meta.Number())
		assert.NilError(t, err)
		final, err := ds.UpdateSchemaMetadata(ctx, MetadataUpdate{"restored": Set("yes")})
		assert.NilError(t, err)
		// Drop two early untagged versions, then clean up all but the last 3.
		_, _, err = ds.DeleteVersions(ctx, []VersionRange{{Start: first + 1, End: int64(first + 3)}})
		assert.NilError(t, err)
		rep, err := ds.Cleanup(ctx, CleanupOptions{KeepLast: 3})
		assert.NilError(t, err)
		t.Logf("%s: cleanup removed versions %v, %d files", table.Name, rep.RemovedVersions, len(rep.RemovedFiles))

		pt := planTable{Dir: dir, Tags: map[string]uint64{"go-first": first}, Append: true}
		for name, tag := range table.Tags {
			pt.Tags[name] = tag.Version
		}
		listed, err := ds.ListVersions(ctx, ListVersionsOptions{})
		assert.NilError(t, err)
		for _, l := range listed {
			v, err := ds.OpenVersion(ctx, l.Version)
			assert.NilError(t, err)
			rows, err := v.CountRows()
			assert.NilError(t, err)
			pv := planVersion{Version: l.Version, Rows: rows}
			for _, f := range v.Fields() {
				if f.GetParentId() == -1 {
					pv.Fields = append(pv.Fields, f.GetName())
				}
			}
			pt.Versions = append(pt.Versions, pv)
		}
		r, err := final.CountRows()
		assert.NilError(t, err)
		latestRows[dir] = r
		plan.Tables = append(plan.Tables, pt)
	}
	planPath := filepath.Join(work, "plan.json")
	raw, err := json.Marshal(plan)
	assert.NilError(t, err)
	assert.NilError(t, os.WriteFile(planPath, raw, 0o644))

	out := runSDK(t, sdk, "verify", planPath)
	t.Logf("%s", out)

	var result struct {
		Results []struct {
			Dir      string   `json:"dir"`
			Errors   []string `json:"errors"`
			Appended struct {
				Version uint64 `json:"version"`
				Rows    uint64 `json:"rows"`
			} `json:"appended"`
			SchemaMetadata map[string]string `json:"schema_metadata"`
			Versions       []planVersion     `json:"versions"`
		} `json:"results"`
	}
	raw, err = os.ReadFile(filepath.Join(work, "plan.result.json"))
	assert.NilError(t, err)
	assert.NilError(t, json.Unmarshal(raw, &result))
	assert.Equal(t, len(result.Results), len(plan.Tables))
	for i, res := range result.Results {
		assert.Check(t, len(res.Errors) == 0, "%s: %v", res.Dir, res.Errors)
		assert.Equal(t, len(res.Versions), len(plan.Tables[i].Versions))
		assert.Equal(t, res.SchemaMetadata["lancecat"], "yes")
		assert.Equal(t, res.SchemaMetadata["restored"], "yes")
		// Go reads what the SDK appended on top of our commits.
		ds := datasets[res.Dir]
		v, err := ds.OpenLatest(ctx)
		assert.NilError(t, err)
		assert.Equal(t, v.Number(), res.Appended.Version)
		assert.Equal(t, OperationName(v.Transaction()), "Append")
		rows, err := v.CountRows()
		assert.NilError(t, err)
		assert.Equal(t, rows, res.Appended.Rows)
		assert.Equal(t, rows, latestRows[res.Dir]+3)
		// And every version still opens in Go.
		listed, err := ds.ListVersions(ctx, ListVersionsOptions{})
		assert.NilError(t, err)
		for _, l := range listed {
			_, err := ds.OpenVersion(ctx, l.Version)
			assert.NilError(t, err)
		}
	}
}

// TestOpenManyVersions times opening the latest of a 1,000-version dataset
// on local disk: the SDK-written "many" table of LANCE_FIXTURE_DIR when set,
// else one Go writes (see manyVersionsDir).
func TestOpenManyVersions(t *testing.T) {
	dir := manyVersionsDir(t)
	ctx := context.Background()
	ds, err := OpenURI(ctx, dir, storage.S3Config{})
	assert.NilError(t, err)
	start := time.Now()
	v, err := ds.OpenLatest(ctx)
	assert.NilError(t, err)
	openLatest := time.Since(start)
	start = time.Now()
	list, err := ds.ListVersions(ctx, ListVersionsOptions{})
	assert.NilError(t, err)
	listAll := time.Since(start)
	start = time.Now()
	_, err = ds.OpenVersion(ctx, 500)
	assert.NilError(t, err)
	openOld := time.Since(start)
	t.Logf("1,000 versions: OpenLatest %v (version %d), OpenVersion(500) %v, ListVersions (%d) %v", openLatest, v.Number(), openOld, len(list), listAll)
}
