package app

import (
	"log/slog"
	"sync"
	"time"

	"github.com/lancecat/lancecat/namespace"
)

// stopIndexBuilds ends the background index builds of a shutting-down replica, once its HTTP
// server has drained (no request can start one any more): each is cancelled, so its task ends
// failed saying so and its claim is released at once, instead of going stale and holding the index
// name for StaleAfter. It waits for them for up to timeout (a build checks its context between
// steps); one still running then is left to die with the process, as a crash would (its commit is
// its last step: nothing half-made is listed).
func stopIndexBuilds(nss []*namespace.Namespace, timeout time.Duration, logger *slog.Logger) {
	var wg sync.WaitGroup
	for _, n := range nss {
		n.CancelIndexBuilds()
		wg.Go(n.WaitIndexBuilds)
	}
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(timeout):
		logger.Warn("index builds still running at shutdown", slog.Duration("waited", timeout))
	}
}
