package main

// The HTTP floor: what one request/answer costs over loopback with nothing behind it. `lancebench
// httpfloor <addr>` is a minimal net/http server (its own process, as lancecat serve is) that
// answers every POST with a constant count; rest.go times it with the same client and measure as
// count_rows. count_rows can be no faster than this, whatever the server does; the SDK embedded
// pays no such hop.

import (
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"time"
)

func serveFloor(addr string) error {
	return http.ListenAndServe(addr, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, "200000\n")
	}))
}

// measureFloor starts `<this binary> httpfloor` and times a POST of a count_rows body to it.
func measureFloor(reps int, budget time.Duration) (timing, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return timing{}, err
	}
	addr := l.Addr().String()
	_ = l.Close()
	self, err := os.Executable()
	if err != nil {
		return timing{}, err
	}
	cmd := exec.Command(self, "httpfloor", addr)
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		return timing{}, err
	}
	defer func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }()
	url := "http://" + addr + "/v1/table/" + dataplaneTable + "/count_rows"
	post := func() error {
		resp, err := http.Post(url, "application/json", strings.NewReader("{}"))
		if err != nil {
			return err
		}
		_, err = io.Copy(io.Discard, resp.Body)
		_ = resp.Body.Close()
		return err
	}
	deadline := time.Now().Add(30 * time.Second)
	for post() != nil {
		if time.Now().After(deadline) {
			return timing{}, fmt.Errorf("the HTTP floor server at %s did not answer", addr)
		}
		time.Sleep(20 * time.Millisecond)
	}
	return measure(reps, budget, post)
}
