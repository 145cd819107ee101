package maintenance

import (
	"context"
	"log/slog"
	"math/rand/v2"
	"time"

	"github.com/lancecat/lancecat/governance"
)

// PurgeBatch bounds one scheduled purge run; the rest waits for the next tick.
const PurgeBatch = 1000

// PurgeTrashEvery runs the trash expiry purge of trash every interval until ctx ends. Every
// replica may run it: purges claim records before they delete, so two at once only repeat each
// other's checks. The first run waits a random part of the interval, so replicas started together
// do not purge in step.
func PurgeTrashEvery(ctx context.Context, trash *governance.Trash, interval time.Duration, logger *slog.Logger) {
	purgeEvery(ctx, func(ctx context.Context, opts PurgeOptions) (PurgeReport, error) {
		return PurgeTrash(ctx, trash, opts)
	}, interval, logger)
}

// purgeFunc is one purge run (PurgeTrash over a trash); the loop's tests give their own.
type purgeFunc func(context.Context, PurgeOptions) (PurgeReport, error)

func purgeEvery(ctx context.Context, purge purgeFunc, interval time.Duration, logger *slog.Logger) {
	wait := time.Duration(rand.Int64N(int64(interval)))
	for {
		select {
		case <-ctx.Done():
			return
		case <-time.After(wait):
		}
		wait = interval
		purgeOnce(ctx, purge, logger)
	}
}

// purgeOnce runs one purge of at most PurgeBatch records and logs what it did (nothing when it
// found nothing to do).
func purgeOnce(ctx context.Context, purge purgeFunc, logger *slog.Logger) {
	report, err := purge(ctx, PurgeOptions{Limit: PurgeBatch})
	if err != nil {
		if ctx.Err() == nil {
			logger.Warn("trash purge failed", slog.String("error", err.Error()))
		}
		return
	}
	purged, kept, skipped := report.Count(PurgePurged), report.Count(PurgeKept), report.Count(PurgeSkipped)
	if purged+kept+skipped == 0 && len(report.Unreadable) == 0 {
		return
	}
	logger.Info("trash purge", slog.Int("purged", purged), slog.Int("kept", kept), slog.Int("skipped", skipped),
		slog.Int("pending", report.Pending), slog.Int("unreadable", len(report.Unreadable)), slog.Bool("truncated", report.Truncated))
}
