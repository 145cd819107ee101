package server

import (
	"context"
	"log/slog"
	"math/rand/v2"
	"time"

	"github.com/lancecat/lancecat/governance"
)

// purgeBatch bounds one scheduled purge run; the rest waits for the next tick.
const purgeBatch = 1000

// purgeTrashEvery runs the trash expiry purge every interval until ctx ends. Every replica may
// run it: purges claim records before they delete, so two at once only repeat each other's
// checks. The first run waits a random part of the interval, so replicas started together do not
// purge in step.
func purgeTrashEvery(ctx context.Context, trash *governance.Trash, interval time.Duration, logger *slog.Logger) {
	wait := time.Duration(rand.Int64N(int64(interval)))
	for {
		select {
		case <-ctx.Done():
			return
		case <-time.After(wait):
		}
		wait = interval
		purgeTrashOnce(ctx, trash, logger)
	}
}

// purgeTrashOnce runs one purge and logs what it did.
func purgeTrashOnce(ctx context.Context, trash *governance.Trash, logger *slog.Logger) {
	report, err := trash.PurgeExpired(ctx, governance.PurgeOptions{Limit: purgeBatch})
	if err != nil {
		if ctx.Err() == nil {
			logger.Warn("trash purge failed", slog.String("error", err.Error()))
		}
		return
	}
	purged, kept, skipped := report.Count(governance.PurgePurged), report.Count(governance.PurgeKept), report.Count(governance.PurgeSkipped)
	if purged+kept+skipped == 0 && len(report.Unreadable) == 0 {
		return
	}
	logger.Info("trash purge", slog.Int("purged", purged), slog.Int("kept", kept), slog.Int("skipped", skipped),
		slog.Int("pending", report.Pending), slog.Int("unreadable", len(report.Unreadable)), slog.Bool("truncated", report.Truncated))
}
