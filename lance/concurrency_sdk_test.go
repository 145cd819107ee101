package lance

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"gotest.tools/v3/assert"

	"github.com/lancecat/lancecat/internal/testenv"
	"github.com/lancecat/lancecat/storage"
)

// Go and the official SDK committing to one dataset at the same time: Go
// commits schema-metadata changes in a loop while the SDK appends in a loop.
// Both sides publish versions with put-if-absent (on local disk a hard link
// from a staging file, on S3 If-None-Match: *) and rebase a lost race, so
// the history must come out linear: consecutive versions, each holding
// exactly one commit, each writer's commits where it was told they landed,
// nothing lost by a rebase, row counts adding up, and every version opening
// in both Go and the SDK.

const (
	raceCommits    = 20 // per side
	raceAppendRows = 2
)

type sdkAppendLine struct {
	Append  int    `json:"append"`
	Version uint64 `json:"version"`
	Error   string `json:"error"`
}

// raceResult is what each side says it committed.
type raceResult struct {
	goVersions  map[uint64]string // version -> Go's transaction uuid
	goKeys      map[uint64]string // version -> the metadata key it set
	goErrors    []error
	sdkVersions map[uint64]bool
	sdkErrors   []string
	elapsed     time.Duration
	txnsBefore  int
}

// raceSDK runs the SDK's append loop against uri while Go commits to ds.
func raceSDK(t *testing.T, sdk sdkExpect, ds *Dataset, uri string, storageOptions map[string]string) raceResult {
	t.Helper()
	ctx := context.Background()
	job := map[string]any{"dir": uri, "storage_options": storageOptions, "count": raceCommits, "rows": raceAppendRows}
	jobPath := filepath.Join(t.TempDir(), "append.json")
	raw, err := json.Marshal(job)
	assert.NilError(t, err)
	assert.NilError(t, os.WriteFile(jobPath, raw, 0o644))

	cmd := testenv.NodeCmd(ctx, sdkScript(t), "append", sdk.SDKDir, jobPath)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	stdout, err := cmd.StdoutPipe()
	assert.NilError(t, err)
	assert.NilError(t, cmd.Start())

	res := raceResult{goVersions: map[uint64]string{}, goKeys: map[uint64]string{}, sdkVersions: map[uint64]bool{}}
	ready := make(chan struct{})
	var lines []sdkAppendLine
	var other []string
	var wg sync.WaitGroup
	wg.Go(func() {
		sc := bufio.NewScanner(stdout)
		readyOnce := sync.OnceFunc(func() { close(ready) })
		defer readyOnce()
		for sc.Scan() {
			line := sc.Text()
			if line == "ready" {
				readyOnce()
				continue
			}
			var l sdkAppendLine
			if json.Unmarshal([]byte(line), &l) != nil {
				other = append(other, line)
				continue
			}
			lines = append(lines, l)
		}
	})
	<-ready
	start := time.Now()
	for i := range raceCommits {
		key := fmt.Sprintf("go-%02d", i)
		v, err := ds.UpdateSchemaMetadata(ctx, MetadataUpdate{key: Set(fmt.Sprint(i))})
		if err != nil {
			res.goErrors = append(res.goErrors, err)
			continue
		}
		res.goVersions[v.Number()] = v.Transaction().GetUuid()
		res.goKeys[v.Number()] = key
	}
	wg.Wait()
	err = cmd.Wait()
	res.elapsed = time.Since(start)
	assert.NilError(t, err, "SDK: %s %s", stderr.String(), strings.Join(other, "\n"))
	for _, l := range lines {
		if l.Error != "" {
			res.sdkErrors = append(res.sdkErrors, l.Error)
			continue
		}
		assert.Check(t, !res.sdkVersions[l.Version], "the SDK reports version %d twice", l.Version)
		res.sdkVersions[l.Version] = true
	}
	assert.Equal(t, len(lines), raceCommits, "SDK output: %v %s", other, stderr.String())
	return res
}

// checkRace checks the history after a race from Go's side and the SDK's.
func checkRace(t *testing.T, sdk sdkExpect, ds *Dataset, uri string, storageOptions map[string]string,
	before *Version, res raceResult) {
	t.Helper()
	ctx := context.Background()
	t.Logf("Go: %d commits, %d errors %v; SDK: %d appends, %d errors %v; %v",
		len(res.goVersions), len(res.goErrors), res.goErrors, len(res.sdkVersions), len(res.sdkErrors), res.sdkErrors, res.elapsed)
	assert.Check(t, len(res.goErrors) == 0, "Go commits failed: %v", res.goErrors)
	assert.Check(t, len(res.sdkErrors) == 0, "SDK appends failed: %v", res.sdkErrors)

	// Each version was claimed by exactly one writer.
	for v := range res.goVersions {
		assert.Check(t, !res.sdkVersions[v], "version %d claimed by both Go and the SDK", v)
	}
	first := before.Number()
	latest := first + uint64(len(res.goVersions)+len(res.sdkVersions))

	listed, err := ds.ListVersions(ctx, ListVersionsOptions{})
	assert.NilError(t, err)
	var got []uint64
	for _, l := range listed {
		got = append(got, l.Version)
	}
	for i := 1; i < len(got); i++ {
		assert.Assert(t, got[i] == got[i-1]+1, "versions not consecutive: %v", got)
	}
	assert.Equal(t, got[len(got)-1], latest, "latest version: %v", got)
	for _, v := range got {
		if v <= first { // the new ones are opened below
			_, err := ds.OpenVersion(ctx, v)
			assert.NilError(t, err)
		}
	}

	// Walk the new versions: who wrote each, and did it keep what came before?
	prevRows, err := before.CountRows()
	assert.NilError(t, err)
	prevMeta := maps.Clone(before.Manifest().GetSchemaMetadata())
	uuids := map[string]uint64{}
	type seen struct {
		Rows     uint64
		Metadata map[string]string
	}
	goSide := map[uint64]seen{}
	for v := first + 1; v <= latest; v++ {
		ver, err := ds.OpenVersion(ctx, v)
		assert.NilError(t, err)
		txn, err := ds.ReadTransaction(ctx, ver)
		assert.NilError(t, err)
		if w, dup := uuids[txn.GetUuid()]; dup {
			t.Errorf("versions %d and %d hold the same transaction %s", w, v, txn.GetUuid())
		}
		uuids[txn.GetUuid()] = v
		rows, err := ver.CountRows()
		assert.NilError(t, err)
		meta := ver.Manifest().GetSchemaMetadata()
		switch {
		case res.goVersions[v] != "":
			assert.Check(t, OperationName(txn) == "UpdateConfig", "version %d: Go committed UpdateConfig, the manifest holds %s", v, OperationName(txn))
			assert.Check(t, txn.GetUuid() == res.goVersions[v], "version %d holds transaction %s, not Go's %s", v, txn.GetUuid(), res.goVersions[v])
			assert.Check(t, rows == prevRows, "version %d: a metadata commit changed the rows %d -> %d", v, prevRows, rows)
			key := res.goKeys[v]
			_, had := prevMeta[key]
			assert.Check(t, !had && meta[key] != nil, "version %d: key %s was not added by it", v, key)
		case res.sdkVersions[v]:
			assert.Check(t, OperationName(txn) == "Append", "version %d: the SDK appended, the manifest holds %s", v, OperationName(txn))
			assert.Check(t, rows == prevRows+raceAppendRows, "version %d: %d rows after %d", v, rows, prevRows)
		default:
			t.Errorf("version %d (%s) was claimed by no writer", v, OperationName(txn))
		}
		// Nothing a rebase could drop: every key so far is still there.
		for k, val := range prevMeta {
			assert.Check(t, string(meta[k]) == string(val), "version %d lost schema metadata %s", v, k)
		}
		prevRows, prevMeta = rows, meta
		m := map[string]string{}
		for k, val := range meta {
			m[k] = string(val)
		}
		goSide[v] = seen{Rows: rows, Metadata: m}
	}
	// How the two writers interleaved (G = Go, S = SDK), and how many
	// transaction files were written beyond the versions that landed: each
	// is an attempt that lost a race and was rebased.
	var order strings.Builder
	for v := first + 1; v <= latest; v++ {
		if res.goVersions[v] != "" {
			order.WriteByte('G')
		} else {
			order.WriteByte('S')
		}
	}
	txns, err := listAll(ctx, ds.Store(), TransactionsDir)
	assert.NilError(t, err)
	t.Logf("history %d..%d: %s; %d transaction files for %d commits (%d attempts lost a race and were retried)",
		first+1, latest, order.String(), len(txns)-res.txnsBefore, latest-first, len(txns)-res.txnsBefore-int(latest-first))

	before0, err := before.CountRows()
	assert.NilError(t, err)
	assert.Equal(t, prevRows, before0+uint64(raceAppendRows*len(res.sdkVersions)))
	for v := range res.goVersions {
		assert.Check(t, prevMeta[res.goKeys[v]] != nil, "latest lacks %s", res.goKeys[v])
	}

	// The SDK sees the same history.
	job := map[string]any{"dir": uri, "storage_options": storageOptions}
	jobPath := filepath.Join(t.TempDir(), "history.json")
	raw, err := json.Marshal(job)
	assert.NilError(t, err)
	assert.NilError(t, os.WriteFile(jobPath, raw, 0o644))
	out := runSDK(t, sdk, "history", jobPath)
	var hist struct {
		Listed   []uint64 `json:"listed"`
		Versions []struct {
			Version  uint64            `json:"version"`
			Rows     uint64            `json:"rows"`
			Metadata map[string]string `json:"metadata"`
			Error    string            `json:"error"`
		} `json:"versions"`
	}
	lastLine := out[strings.LastIndexByte(strings.TrimRight(string(out), "\n"), '\n')+1:]
	assert.NilError(t, json.Unmarshal(lastLine, &hist), "%s", out)
	assert.DeepEqual(t, hist.Listed, got)
	for _, h := range hist.Versions {
		assert.Check(t, h.Error == "", "SDK cannot open version %d: %s", h.Version, h.Error)
		if w, ok := goSide[h.Version]; ok {
			assert.Check(t, h.Rows == w.Rows, "version %d: SDK counts %d rows, Go %d", h.Version, h.Rows, w.Rows)
			assert.Check(t, maps.Equal(h.Metadata, w.Metadata), "version %d: SDK metadata %v, Go %v", h.Version, h.Metadata, w.Metadata)
		}
	}
}

// raceTables are the fixture tables raced on: one per naming scheme.
var raceTables = []string{"hist_v2_1", "v1names"}

func raceOne(t *testing.T, sdk sdkExpect, ds *Dataset, uri string, storageOptions map[string]string) {
	t.Helper()
	before, err := ds.OpenLatest(context.Background())
	assert.NilError(t, err)
	txns, err := listAll(context.Background(), ds.Store(), TransactionsDir)
	assert.NilError(t, err)
	res := raceSDK(t, sdk, ds, uri, storageOptions)
	res.txnsBefore = len(txns)
	checkRace(t, sdk, ds, uri, storageOptions, before, res)
}

// TestSDKConcurrentCommits races Go and the SDK on local disk.
func TestSDKConcurrentCommits(t *testing.T) {
	ctx := context.Background()
	for _, sdk := range loadTableFixtures(t) {
		for _, table := range sdk.Tables {
			if !slices.Contains(raceTables, table.Name) {
				continue
			}
			t.Run(sdk.SDK+"/"+table.Name, func(t *testing.T) {
				sdkScript(t)
				dir := filepath.Join(t.TempDir(), table.Dir)
				testenv.CopyDir(t, filepath.Join(sdk.dir, table.Dir), dir)
				ds, err := OpenURI(ctx, dir, storage.S3Config{})
				assert.NilError(t, err)
				raceOne(t, sdk, ds, dir, nil)
			})
		}
	}
}

// TestSDKConcurrentCommitsS3 races Go and the SDK on MinIO.
func TestSDKConcurrentCommitsS3(t *testing.T) {
	sdks := loadTableFixtures(t)
	p := newS3Place(t)
	for _, sdk := range sdks {
		for _, table := range sdk.Tables {
			if !slices.Contains(raceTables, table.Name) {
				continue
			}
			t.Run(sdk.SDK+"/"+table.Name, func(t *testing.T) {
				sdkScript(t)
				prefix := "race/" + sdk.SDK + "/" + table.Dir
				p.upload(t, filepath.Join(sdk.dir, table.Dir), prefix)
				ds, uri := p.dataset(t, prefix)
				raceOne(t, sdk, ds, uri, p.env.SDKStorageOptions())
			})
		}
	}
}
