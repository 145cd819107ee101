package faults

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"gotest.tools/v3/assert"

	"github.com/lancecat/lancecat/internal/testenv"
)

// TestCampaign runs the fault campaign (issue 36): LANCECAT_FAULTS_SECONDS long (75 s by
// default; scripts/faults/run.sh 600 for the long one). It fails on any anomaly.
func TestCampaign(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the fault campaign")
	}
	fga := testenv.OpenFGA(t)
	secs := 75
	if v := os.Getenv("LANCECAT_FAULTS_SECONDS"); v != "" {
		n, err := strconv.Atoi(v)
		assert.NilError(t, err, "LANCECAT_FAULTS_SECONDS")
		secs = n
	}
	workers := 8
	if v := os.Getenv("LANCECAT_FAULTS_WORKERS"); v != "" {
		n, err := strconv.Atoi(v)
		assert.NilError(t, err, "LANCECAT_FAULTS_WORKERS")
		workers = min(max(n, 1), 64)
	}
	rep := campaign(t, fga, time.Duration(secs)*time.Second, workers, true, "")
	for _, a := range rep.Anomalies {
		t.Errorf("ANOMALY %s", a)
	}
	t.Log(rep.Summary())
}

// TestMutantIsCaught proves the checkers: lancecat built with the mutant tag (S3 PutIfAbsent
// unconditional) must make the campaign report anomalies, even without faults.
func TestMutantIsCaught(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a campaign")
	}
	fga := testenv.OpenFGA(t)
	rep := campaign(t, fga, 20*time.Second, 8, false, "lancecat_faults_mutant")
	byChecker := map[string]int{}
	for i, a := range rep.Anomalies {
		byChecker[a.Checker]++
		if i < 3 {
			t.Logf("mutant anomaly %s", a)
		}
	}
	t.Logf("mutant anomalies by checker: %v", byChecker)
	t.Log("mutant " + rep.Summary())
	assert.Assert(t, len(rep.Anomalies) > 0, "the mutant's broken commit path went unnoticed")
}

func campaign(t *testing.T, fga string, d time.Duration, workers int, faults bool, tags string) Report {
	t.Helper()
	repo, err := filepath.Abs("../..")
	assert.NilError(t, err)
	dir := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), d+5*time.Minute)
	defer cancel()
	rep, err := RunCampaign(ctx, CampaignConfig{
		Dir: dir, Repo: repo, OpenFGA: fga, Duration: d, Workers: workers, MaxOps: 200_000,
		Faults: faults, Tags: tags, Seed: uint64(time.Now().UnixNano()), Logf: t.Logf,
	})
	if err != nil {
		for _, f := range []string{"r1.log", "r2.log", "r3.log", "minio.log"} {
			b, _ := os.ReadFile(filepath.Join(dir, f))
			if len(b) > 3000 {
				b = b[len(b)-3000:]
			}
			t.Logf("----- %s -----\n%s", f, b)
		}
	}
	assert.NilError(t, err)
	if rep.TimedOut {
		t.Log("porcupine timed out on some object: not proven, not refuted")
	}
	kinds := map[string]int{}
	for _, f := range rep.Faults {
		kinds[f.Kind]++
	}
	outcomes := map[Outcome]int{}
	for _, o := range rep.Ops {
		outcomes[o.Outcome]++
	}
	t.Logf("faults by kind %v; outcomes ok %d, refused %d, unknown %d; data table holds %d rows",
		kinds, outcomes[OK], outcomes[Refused], outcomes[Unknown], rep.Rows)
	t.Logf("calls by kind: %s", tally(rep.Ops))
	t.Logf("journal: %d events read back (shared journal: %v); %d of the data table's after a later version's (asynchronous delivery across replicas, not counted)",
		rep.Events, rep.Journaled, len(rep.Inversions))
	for i, inv := range rep.Inversions {
		if i < 3 {
			t.Logf("journal order: %s", inv)
		}
	}
	if path := os.Getenv("LANCECAT_FAULTS_HISTORY"); path != "" {
		f, err := os.Create(path)
		assert.NilError(t, err)
		for _, o := range rep.Ops {
			fmt.Fprintln(f, o)
		}
		for _, ft := range rep.Faults {
			fmt.Fprintf(f, "FAULT %s on %s %.3fs–%.3fs %s\n", ft.Kind, ft.Target, ft.Start.Seconds(), ft.End.Seconds(), ft.Err)
		}
		assert.NilError(t, f.Close())
	}
	return rep
}

// tally is, per object kind and call, how many answered ok / refused (by code) / unknown.
func tally(ops []Op) string {
	type key struct{ kind, f string }
	counts := map[key]map[string]int{}
	for _, o := range ops {
		kind, _, _ := strings.Cut(o.Obj, "/")
		k := key{kind, o.F}
		if counts[k] == nil {
			counts[k] = map[string]int{}
		}
		out := o.Outcome.String()
		if o.Outcome == Refused {
			out = o.Code.String()
		}
		counts[k][out]++
	}
	var lines []string
	for k, m := range counts {
		lines = append(lines, fmt.Sprintf("%s.%s %v", k.kind, k.f, m))
	}
	sort.Strings(lines)
	return strings.Join(lines, "; ")
}
