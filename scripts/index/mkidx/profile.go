package main

// MKIDX_CPUPROFILE=<file> writes a CPU profile of the build (index build
// time against the SDK, issue 16).

import (
	"os"
	"runtime/pprof"
)

func init() {
	if p := os.Getenv("MKIDX_CPUPROFILE"); p != "" {
		f, _ := os.Create(p)
		_ = pprof.StartCPUProfile(f)
		stopProfile = func() { pprof.StopCPUProfile(); f.Close() }
	}
}
