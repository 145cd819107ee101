package mview

// The refresh lease: one refresh of a view at a time across the replicas serving one root. It is
// the catalog's lease protocol (internal/lease: put-if-absent, take-over of a released or stale
// record by put-if-match, renewal by put-if-match, release written released, clock-skew margin)
// on an object of its own on the view table's root, _maintenance/materialized_view/refresh.json,
// so the view's lease does not block maintenance of the view table. The record names the view
// (payload "view"), the holder and, once started, the refresh task.
//
//   - taken at the door, before the job starts; the job's heartbeat renews it with the task
//     record; a renewal that fails means another replica took it (we were stale) and cancels the
//     job, which then commits nothing (and checks the lease once more just before its commit);
//   - released when the job ends (not if it was lost: the lease is the other replica's).
//
// A refresh asked for while another runs answers 409 (ConcurrentModification) naming the
// running task and its replica, rather than joining it: the running refresh may have read the
// source before the caller's last write, so its job would not answer for that write. The caller
// follows the task (GET /v1/table/{id}/tasks) and refreshes again once it ended.
//
// Besides the lease, a refresh commits only if the view's head is still the version it started
// from (checked just before the commit): so a refresh whose lease was taken over while it worked
// (a stalled replica) cannot land its older read of the source after the newer one.

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	nserr "github.com/lancecat/lancecat/errors"
	"github.com/lancecat/lancecat/ident"
	"github.com/lancecat/lancecat/internal/lease"
	"github.com/lancecat/lancecat/storage"
)

// refreshLeaseKey is the refresh lease's object on the view table's root.
const refreshLeaseKey = stateDir + "refresh.json"

// Defaults of the refresh lease.
const (
	DefaultRefreshHeartbeat  = 10 * time.Second
	DefaultRefreshStaleAfter = 2 * time.Minute
)

// refreshPayload is the refresh lease record's own field (beside the protocol's).
type refreshPayload struct {
	View []string `json:"view"`
}

func (s *Service) holder() string {
	if s.Holder != "" {
		return s.Holder
	}
	host, _ := os.Hostname()
	return fmt.Sprintf("%s:%d", host, os.Getpid())
}

func (s *Service) clock() time.Time {
	if s.Now != nil {
		return s.Now().UTC()
	}
	return time.Now().UTC()
}

func (s *Service) heartbeat() time.Duration {
	if s.Heartbeat > 0 {
		return s.Heartbeat
	}
	return DefaultRefreshHeartbeat
}

func (s *Service) staleAfter() time.Duration {
	if s.StaleAfter > 0 {
		return s.StaleAfter
	}
	return DefaultRefreshStaleAfter
}

// acquireRefresh takes the refresh lease of view id, or answers the 409 of a live lease another
// refresh holds.
func (s *Service) acquireRefresh(ctx context.Context, store storage.Bucket, id ident.ID) (*lease.Lease, error) {
	l, err := lease.Acquire(ctx, store, refreshLeaseKey, lease.Options{
		Holder: s.holder(), StaleAfter: s.staleAfter(), Now: s.clock, Payload: refreshPayload{View: id},
	})
	var held *lease.HeldError
	if errors.As(err, &held) {
		return nil, refreshConflict(id, held)
	}
	if err != nil {
		return nil, fmt.Errorf("mview: refresh lease: %w", err)
	}
	return l, nil
}

// refreshConflict is the answer to a refresh asked for while held's runs.
func refreshConflict(id ident.ID, held *lease.HeldError) error {
	task := held.Record.Task
	if task == "" {
		task = "(starting)"
	}
	return nserr.ConcurrentModificationf("materialized view %s is being refreshed (task %s on %s, last heard of %s); follow it with GET /v1/table/{id}/tasks and refresh again once it ended",
		strings.Join(id, "."), task, held.Who(), held.Record.RenewedAt.UTC().Format(time.RFC3339))
}
