package main

// lancebench serveprof <dir> <profile-dir> [reps]: the server side of rest.go, CPU-profiled. It
// runs lancecat's server in this process (app.Run, as the e2e tests do) on a fresh root
// (<dir>/profroot), creates the table through REST and runs each data-plane operation reps times
// over REST (and for at least 2s), profiling each into <profile-dir>/create.pprof and <profile-dir>/<op>.pprof
// (go tool pprof -top lancebench <file>). The profiles hold the server and the client together;
// the client's frames are the arrow ipc reader's and net/http's client side.

import (
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"runtime/pprof"
	"syscall"
	"time"

	"github.com/lancecat/lancecat/app"
)

// processCPU is the user+system CPU time this process has used.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func runServeProf(dir, profileDir string, reps int) error {
	root := filepath.Join(dir, "profroot")
	if err := os.RemoveAll(root); err != nil {
		return err
	}
	cfg := app.DefaultConfig()
	cfg.Root, cfg.Listen, cfg.LogLevel = root, "127.0.0.1:0", "warn"
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	ready := make(chan net.Addr, 1)
	done := make(chan error, 1)
	go func() { done <- app.Run(ctx, cfg, nil, ready) }()
	var c *serveProc
	select {
	case addr := <-ready:
		c = &serveProc{url: "http://" + addr.String()}
	case err := <-done:
		return err
	case <-time.After(60 * time.Second):
		return fmt.Errorf("server not ready after 60s")
	}
	profile := func(name string, f func() error) error {
		pf, err := os.Create(filepath.Join(profileDir, name+".pprof"))
		if err != nil {
			return err
		}
		defer pf.Close()
		if err := pprof.StartCPUProfile(pf); err != nil {
			return err
		}
		defer pprof.StopCPUProfile()
		return f()
	}
	body, err := createBody(dir)
	if err != nil {
		return err
	}
	if err := profile("create", func() error { return createTable(c, body) }); err != nil {
		return fmt.Errorf("create: %w", err)
	}
	for _, op := range dataplaneOps {
		err := profile(op.Name, func() error {
			// At least reps runs and at least 2s of them, so the quick operations show up too.
			start, cpu0 := time.Now(), processCPU()
			i := 0
			for ; i < reps || time.Since(start) < 2*time.Second; i++ {
				if _, err := runOp(c, op, queryVector()); err != nil {
					return err
				}
			}
			// Per operation: wall time, and CPU of this process (server and client together).
			fmt.Fprintf(os.Stderr, "%-16s %6d runs  %10.1f µs/op wall  %10.1f µs/op CPU\n", op.Name, i,
				float64(time.Since(start).Microseconds())/float64(i), float64((processCPU()-cpu0).Microseconds())/float64(i))
			return nil
		})
		if err != nil {
			return fmt.Errorf("%s: %w", op.Name, err)
		}
	}
	cancel()
	return <-done
}
