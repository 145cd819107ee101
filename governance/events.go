package governance

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"maps"
	"strconv"
	"strings"
	"sync"
	"time"

	nserr "github.com/lancecat/lancecat/errors"
)

// DefaultEventBuffer is how many control events a replica retains.
const DefaultEventBuffer = 512

// Event types emitted by the lifecycle doors.
const (
	EventProjectCreated       = "project_created"
	EventProjectDeleted       = "project_deleted"
	EventProjectProtected     = "project_protected"
	EventProjectUnprotected   = "project_unprotected"
	EventWarehouseCreated     = "warehouse_created"
	EventWarehouseDeleted     = "warehouse_deleted"
	EventWarehouseDeactivated = "warehouse_deactivated"
	EventWarehouseActivated   = "warehouse_activated"
	EventWarehouseProtected   = "warehouse_protected"
	EventWarehouseUnprotected = "warehouse_unprotected"
	EventWarehouseUnbound     = "warehouse_unbound"
	EventTableProtected       = "table_protected"
	EventTableUnprotected     = "table_unprotected"
	EventNamespaceProtected   = "namespace_protected"
	EventNamespaceUnprotected = "namespace_unprotected"
	EventPolicySet            = "policy_set"
	EventPolicyDeleted        = "policy_deleted"
	EventGrantAdded           = "grant_added"
	EventTuplesRevoked        = "tuples_revoked"
)

// Event is one control-plane change.
type Event struct {
	Cursor     string
	Type       string
	At         time.Time
	Actor      string
	Object     string
	Attributes map[string]string
}

// Events is a per-replica ring buffer of control events. It is not shared between replicas and
// does not survive a restart: a reader holding a cursor from another replica or an earlier process
// gets everything retained with reset=true, as does a reader whose cursor fell off the buffer, so
// a consumer always knows when it may have missed events (and should resynchronise from the
// registries). Cursors are "<epoch>.<sequence>"; the epoch is minted when the buffer is.
type Events struct {
	journal *Journal // nil: the ring is all there is

	mu    sync.Mutex
	epoch string
	ring  []Event
	next  uint64 // sequence of the next event; the first is 1
}

// NewEvents returns a buffer retaining the last size events.
func NewEvents(size int) *Events {
	if size < 1 {
		size = DefaultEventBuffer
	}
	var b [4]byte
	_, _ = rand.Read(b[:])
	return &Events{epoch: hex.EncodeToString(b[:]), ring: make([]Event, 0, size), next: 1}
}

// WithJournal makes j, the catalog's durable replica-wide log, where every event is written and
// what Read answers from; the ring stays as this replica's recent history for logs.
func (e *Events) WithJournal(j *Journal) *Events {
	e.journal = j
	return e
}

// Journal is the durable log events go to (nil: none).
func (e *Events) Journal() *Journal { return e.journal }

// Emit appends ev (stamping its ring cursor), queues it for the journal, and returns it.
func (e *Events) Emit(ev Event) Event {
	if e.journal != nil {
		e.journal.enqueue(ev)
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	ev.Cursor = e.cursor(e.next)
	ev.Attributes = maps.Clone(ev.Attributes)
	if len(e.ring) < cap(e.ring) {
		e.ring = append(e.ring, ev)
	} else {
		e.ring[int((e.next-1)%uint64(cap(e.ring)))] = ev
	}
	e.next++
	return ev
}

func (e *Events) cursor(seq uint64) string { return e.epoch + "." + strconv.FormatUint(seq, 10) }

// Read returns up to limit events after cursor from the journal when there is one (one stream
// for every replica; a ring cursor there reads from the oldest with reset), else from the ring.
func (e *Events) Read(ctx context.Context, cursor string, limit int) (events []Event, next string, reset bool, err error) {
	if e.journal == nil {
		return e.Since(cursor, limit)
	}
	// What this replica emitted is written first, so a caller reads its own changes.
	if err := e.journal.Flush(ctx); err != nil {
		return nil, "", false, nserr.Wrap(nserr.ServiceUnavailable, err, "the control root did not answer")
	}
	if cursor != "" && !isJournalCursor(cursor) {
		// A ring cursor (from a release before the journal): start over, saying so.
		epoch, seqText, ok := strings.Cut(cursor, ".")
		if _, perr := strconv.ParseUint(seqText, 10, 64); !ok || perr != nil || epoch == "" {
			return nil, "", false, nserr.InvalidInputf("cursor %q is not one this server issued", cursor)
		}
		events, next, _, err = e.journal.Since(ctx, "", limit)
		return events, next, true, err
	}
	return e.journal.Since(ctx, cursor, limit)
}

// Since returns up to limit events after cursor ("" = from the oldest retained), the cursor to
// ask with next time, and whether the given cursor could not be honoured (reset).
func (e *Events) Since(cursor string, limit int) (events []Event, next string, reset bool, err error) {
	if limit <= 0 || limit > MaxPageSize {
		limit = MaxPageSize
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	oldest := e.next - uint64(len(e.ring)) // sequence of the oldest retained event
	after := oldest - 1                    // deliver sequences > after
	if cursor != "" {
		epoch, seqText, ok := strings.Cut(cursor, ".")
		seq, perr := strconv.ParseUint(seqText, 10, 64)
		switch {
		case !ok || perr != nil || epoch == "":
			return nil, "", false, nserr.InvalidInputf("cursor %q is not one this server issued", cursor)
		case epoch != e.epoch || seq >= e.next:
			// Another replica's or process's cursor (or one from the future): start over.
			reset = true
		case seq < oldest-1:
			reset = true
		default:
			after = seq
		}
	}
	for seq := after + 1; seq < e.next && len(events) < limit; seq++ {
		events = append(events, e.ring[int((seq-1)%uint64(cap(e.ring)))])
	}
	switch {
	case len(events) > 0:
		next = events[len(events)-1].Cursor
	default:
		next = e.cursor(after)
	}
	return events, next, reset, nil
}
