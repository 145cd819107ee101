package maintenance

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime/pprof"
	"syscall"
	"testing"
	"time"

	"gotest.tools/v3/assert"

	"github.com/lancecat/lancecat/ident"
	"github.com/lancecat/lancecat/namespace"
	"github.com/lancecat/lancecat/storage"
)

// BenchmarkSweepIdleTables measures one sweep over n idle tables on local disk (issue 17: 10,000
// idle tables under 10 s). One table is made and swept (so it carries its stamp), then its
// directory is copied n-1 times as compatibility-mode root tables (<name>.lance: tables by
// listing alone, so no manifest commit per table). "upgrade" is the first sweep over the copies:
// their own stamps say idle but the root's stamp index (stamp_index.go) names only the first
// table, so it reads every stamp and writes the index entries (as the first sweep after an
// upgrade from a version without the index does; the copies' files also get their ETags
// computed). "cold" is a replica's first sweep after that (nothing cached in the process), "warm"
// every later one.
//
//	go test -run '^$' -bench BenchmarkSweepIdleTables -benchtime 1x ./maintenance/
//
// LANCECAT_SWEEP_PROFILE=dir writes a CPU profile of each phase alone (dir/<n>-<phase>.prof):
// -cpuprofile would mostly show the copying of the tables.
func BenchmarkSweepIdleTables(b *testing.B) {
	for _, n := range []int{1000, 10000} {
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			ctx := context.Background()
			dir := b.TempDir()
			store, err := storage.NewFS(dir)
			assert.NilError(b, err)
			ns := namespace.New(store, namespace.Options{RootURI: dir})
			createFilled(b, ns, ident.ID{"t"}, 10)
			_, err = (&Service{Catalog: ns}).Sweep(ctx)
			assert.NilError(b, err)
			// Copies made in process (os.CopyFS): spawning one cp per directory took minutes
			// for 10,000 on a loaded machine.
			src := filepath.Join(dir, "t.lance")
			for i := 1; i < n; i++ {
				assert.NilError(b, os.CopyFS(filepath.Join(dir, fmt.Sprintf("c%d.lance", i)), os.DirFS(src)))
			}
			for _, phase := range []string{"upgrade", "cold", "warm"} {
				s := &Service{Catalog: namespace.New(store, namespace.Options{RootURI: dir})}
				if phase == "warm" {
					_, err := s.Sweep(ctx)
					assert.NilError(b, err)
				}
				b.Run(phase, func(b *testing.B) {
					stop := profilePhase(b, fmt.Sprintf("%d-%s", n, phase))
					cpu0 := cpuTime()
					for b.Loop() {
						rep, err := s.Sweep(ctx)
						assert.NilError(b, err)
						assert.Equal(b, rep.Counts[OutcomeIdle], n, "%+v", rep.Counts)
					}
					// CPU seconds (user+system of the process) per sweep: on a shared machine
					// they say more than the wall time.
					b.ReportMetric((cpuTime()-cpu0).Seconds()/float64(b.N), "cpu-s/op")
					stop()
				})
			}
		})
	}
}

// cpuTime is the CPU time (user and system) this process has used so far.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// profilePhase starts a CPU profile of one phase when LANCECAT_SWEEP_PROFILE names a directory;
// the returned func stops it.
func profilePhase(b *testing.B, name string) func() {
	dir := os.Getenv("LANCECAT_SWEEP_PROFILE")
	if dir == "" {
		return func() {}
	}
	f, err := os.Create(filepath.Join(dir, name+".prof"))
	assert.NilError(b, err)
	assert.NilError(b, pprof.StartCPUProfile(f))
	return func() {
		pprof.StopCPUProfile()
		assert.NilError(b, f.Close())
	}
}
