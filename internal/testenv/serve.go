package testenv

import (
	"context"
	"net"
	"testing"
	"time"
)

// serveTimeout bounds how long a server may take to listen (opening a root, an OpenFGA store).
const serveTimeout = 60 * time.Second

// Serve runs a server until t ends and returns the http:// URL of its listener. run starts the
// server with ctx and sends the listener's address on ready once it accepts (server.Run's ready
// channel); when t ends, ctx is cancelled and run must return nil. A run that fails or is not
// listening within a minute fails t.
func Serve(t testing.TB, ready <-chan net.Addr, run func(ctx context.Context) error) string {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- run(ctx) }()
	select {
	case addr := <-ready:
		t.Cleanup(func() {
			cancel()
			if err := <-done; err != nil {
				t.Errorf("testenv: server: %v", err)
			}
		})
		return "http://" + addr.String()
	case err := <-done:
		cancel()
		t.Fatalf("testenv: server did not start: %v", err)
	case <-time.After(serveTimeout):
		cancel()
		t.Fatalf("testenv: server not listening after %v", serveTimeout)
	}
	return ""
}
