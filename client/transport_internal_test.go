package client

import (
	"net/http"
	"testing"
	"time"

	"gotest.tools/v3/assert"
)

func TestRetryAfterParsing(t *testing.T) {
	for _, tc := range []struct {
		header string
		min    time.Duration
		max    time.Duration
	}{
		{"", 0, 0},
		{"0", 0, 0},
		{"-3", 0, 0},
		{"soon", 0, 0},
		{"2", 2 * time.Second, 2 * time.Second},
		{"86400", MaxRetryAfter, MaxRetryAfter}, // capped
		{time.Now().Add(5 * time.Second).UTC().Format(http.TimeFormat), 3 * time.Second, 5 * time.Second},
		{time.Now().Add(-time.Hour).UTC().Format(http.TimeFormat), 0, 0},
	} {
		got := retryAfter(tc.header)
		assert.Assert(t, got >= tc.min && got <= tc.max, "%q: %s", tc.header, got)
	}
}

// TestBackoff: doubling from the backoff, jittered into the upper half, capped at MaxBackoff.
func TestBackoff(t *testing.T) {
	rt := &retryTransport{policy: retryPolicy{max: 100, backoff: 100 * time.Millisecond}}
	for attempt, want := range []time.Duration{100, 200, 400, 800, 1600} {
		want *= time.Millisecond
		for range 50 {
			got := rt.backoffFor(attempt)
			assert.Assert(t, got >= want/2 && got <= want, "attempt %d: %s", attempt, got)
		}
	}
	for range 50 {
		got := rt.backoffFor(60)
		assert.Assert(t, got >= MaxBackoff/2 && got <= MaxBackoff, "%s", got)
	}
}
