package maintenance

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"gotest.tools/v3/assert"
	"gotest.tools/v3/poll"
)

// syncBuffer is a log sink the loop's goroutine writes while the test reads.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// TestPurgeEveryRunsBatchesUntilStopped: the loop runs the purge repeatedly in batches of
// PurgeBatch, logs a run that did something, keeps quiet about one that did nothing, and stops
// with its context. The wired loop over a real server is server's TestScheduledTrashPurge.
func TestPurgeEveryRunsBatchesUntilStopped(t *testing.T) {
	var mu sync.Mutex
	runs := 0
	purge := func(_ context.Context, opts PurgeOptions) (PurgeReport, error) {
		mu.Lock()
		defer mu.Unlock()
		assert.Check(t, opts.Limit == PurgeBatch && !opts.DryRun, "%+v", opts)
		runs++
		if runs == 1 {
			return PurgeReport{Items: []PurgeItem{{Kind: "table", Action: PurgePurged}}}, nil
		}
		return PurgeReport{Items: []PurgeItem{}}, nil
	}
	ctx, stop := context.WithCancel(context.Background())
	var logs syncBuffer
	done := make(chan struct{})
	go func() {
		purgeEvery(ctx, purge, 5*time.Millisecond, slog.New(slog.NewJSONHandler(&logs, nil)))
		close(done)
	}()
	poll.WaitOn(t, func(poll.LogT) poll.Result {
		mu.Lock()
		defer mu.Unlock()
		if runs < 3 {
			return poll.Continue("%d runs so far", runs)
		}
		return poll.Success()
	}, poll.WithTimeout(10*time.Second), poll.WithDelay(5*time.Millisecond))
	stop()
	<-done
	assert.Equal(t, strings.Count(logs.String(), `"msg":"trash purge"`), 1, "only the run that did something is logged: %s", logs.String())
	assert.Assert(t, strings.Contains(logs.String(), `"purged":1`), logs.String())
}

// TestPurgeOnceLogsFailures: a failed run is a warning, unless the loop is stopping.
func TestPurgeOnceLogsFailures(t *testing.T) {
	failing := func(context.Context, PurgeOptions) (PurgeReport, error) {
		return PurgeReport{}, errors.New("control root unreachable")
	}
	var logs syncBuffer
	logger := slog.New(slog.NewJSONHandler(&logs, nil))
	purgeOnce(context.Background(), failing, logger)
	assert.Assert(t, strings.Contains(logs.String(), "control root unreachable"), logs.String())

	logs = syncBuffer{}
	logger = slog.New(slog.NewJSONHandler(&logs, nil))
	ctx, stop := context.WithCancel(context.Background())
	stop()
	purgeOnce(ctx, failing, logger)
	assert.Equal(t, logs.String(), "", "a stopping loop does not warn")
}
