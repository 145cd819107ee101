package mview

// The refresh lease: one refresh of a view at a time across the replicas serving one root. It is
// the protocol of the project's other leases (maintenance's table lease, a background index
// build's claim), on an object of its own on the view table's root,
// _maintenance/materialized_view/refresh.json (those two are unexported in packages of their
// own, and the view's lease must not block maintenance of the view table):
//
//   - taken at the door, before the job starts: put-if-absent; if the object exists and is
//     released or stale (not renewed for StaleAfter: its replica died or stalled), replaced with
//     put-if-match on the ETag read, so of two replicas taking it over only one wins;
//   - renewed by the job's heartbeat with put-if-match on our own ETag; a renewal that fails
//     means another replica took it (we were stale) and cancels the job, which then commits
//     nothing;
//   - released by a put-if-match writing it released (never a delete, which could remove a lease
//     another replica took meanwhile).
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
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	nserr "github.com/lancecat/lancecat/errors"
	"github.com/lancecat/lancecat/ident"
	"github.com/lancecat/lancecat/storage"
)

// refreshLeaseKey is the refresh lease's object on the view table's root.
const refreshLeaseKey = stateDir + "refresh.json"

// Defaults of the refresh lease.
const (
	DefaultRefreshHeartbeat  = 10 * time.Second
	DefaultRefreshStaleAfter = 2 * time.Minute
)

// leaseRecord is what the lease object holds.
type leaseRecord struct {
	View      []string  `json:"view"`
	Holder    string    `json:"holder"`
	Task      string    `json:"task,omitempty"`
	UpdatedAt time.Time `json:"updated_at"`
	Released  bool      `json:"released,omitempty"`
}

// refreshLease is a lease this replica holds.
type refreshLease struct {
	store storage.Bucket
	etag  string
	rec   leaseRecord
	now   func() time.Time
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

// acquireRefresh takes the refresh lease of view id, or answers the record of the live lease
// another refresh holds.
func (s *Service) acquireRefresh(ctx context.Context, store storage.Bucket, id ident.ID) (*refreshLease, *leaseRecord, error) {
	l := &refreshLease{store: store, now: s.clock, rec: leaseRecord{View: id, Holder: s.holder(), UpdatedAt: s.clock()}}
	body, _ := json.Marshal(l.rec)
	info, err := store.PutIfAbsent(ctx, refreshLeaseKey, bytes.NewReader(body), int64(len(body)))
	if err == nil {
		l.etag = info.ETag
		return l, nil, nil
	}
	if !errors.Is(err, storage.ErrExists) {
		return nil, nil, fmt.Errorf("mview: refresh lease: %w", err)
	}
	rc, cur, err := store.Get(ctx, refreshLeaseKey)
	if err != nil {
		return nil, nil, fmt.Errorf("mview: refresh lease: %w", err)
	}
	data, err := io.ReadAll(io.LimitReader(rc, 1<<16))
	rc.Close()
	if err != nil {
		return nil, nil, fmt.Errorf("mview: refresh lease: %w", err)
	}
	var held leaseRecord
	if json.Unmarshal(data, &held) == nil && !held.Released && s.clock().Sub(held.UpdatedAt) < s.staleAfter() {
		return nil, &held, nil
	}
	// Released, stale or unreadable (a torn write): take it over unless another replica did.
	info, err = store.PutIfMatch(ctx, refreshLeaseKey, bytes.NewReader(body), int64(len(body)), cur.ETag)
	if errors.Is(err, storage.ErrPreconditionFailed) {
		// Renewed or taken over since we read it: whoever wrote it holds it.
		if data, _, err := storage.ReadAll(ctx, store, refreshLeaseKey); err == nil && json.Unmarshal(data, &held) == nil {
			return nil, &held, nil
		}
		return nil, &leaseRecord{View: id, Holder: "another replica", UpdatedAt: s.clock()}, nil
	}
	if err != nil {
		return nil, nil, fmt.Errorf("mview: refresh lease: %w", err)
	}
	l.etag = info.ETag
	return l, nil, nil
}

// conflict is the answer to a refresh asked for while r's runs.
func (r *leaseRecord) conflict(id ident.ID) error {
	task := r.Task
	if task == "" {
		task = "(starting)"
	}
	return nserr.ConcurrentModificationf("materialized view %s is being refreshed (task %s on %s, last heard of %s); follow it with GET /v1/table/{id}/tasks and refresh again once it ended",
		strings.Join(id, "."), task, r.Holder, r.UpdatedAt.UTC().Format(time.RFC3339))
}

func (l *refreshLease) put(ctx context.Context) error {
	body, _ := json.Marshal(l.rec)
	info, err := l.store.PutIfMatch(context.WithoutCancel(ctx), refreshLeaseKey, bytes.NewReader(body), int64(len(body)), l.etag)
	if err != nil {
		return fmt.Errorf("mview: refresh lease: %w", err)
	}
	l.etag = info.ETag
	return nil
}

// renew records that the refresh is alive (and its task).
func (l *refreshLease) renew(ctx context.Context) error {
	l.rec.UpdatedAt = l.now()
	return l.put(ctx)
}

// release marks the lease released, unless another replica took it meanwhile.
func (l *refreshLease) release(ctx context.Context) error {
	l.rec.Released, l.rec.UpdatedAt = true, l.now()
	return l.put(ctx)
}
