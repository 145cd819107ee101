package governance

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strconv"
	"strings"
	"sync"
	"time"

	nserr "github.com/lancecat/lancecat/errors"
	"github.com/lancecat/lancecat/storage"
)

// Journal is the control events' durable log, shared by every replica of a catalog: segments
// `_events/<20-digit sequence>.json` on the control root, each a JSON array of the events one
// replica flushed at once. A cursor `j<sequence>.<index>` means the same event on every replica
// and after every restart, so a reader behind a load balancer sees one stream.
//
// Ordering without a coordinator: a replica writes segment k with put-if-absent, and only after
// it has seen segment k-1 exist (listed it, failed to put it because it existed, or written it).
// So segment k+1 never exists without k, a listing is gap-free, and two replicas racing for k
// resolve by the put: the loser takes k+1. Before each flush a replica lists the segments after
// the last it knows (one cheap listing), so it never writes below the tail even after pruning.
//
// Delivery is asynchronous: Emit queues the event and a flusher writes everything queued as one
// segment, retrying a failed put with backoff. An event therefore reaches the log moments after
// its change committed; a crash in that moment loses it (the change itself is durable in its
// registry, and the per-replica ring still had it). Close flushes what is queued.
//
// Retention: segments beyond the newest Retain and older than an hour are deleted by the replica
// that writes past them (the hour keeps a segment a slow writer may still be listing after).
type Journal struct {
	bucket storage.Bucket
	retain uint64
	log    *slog.Logger
	now    func() time.Time

	flushMu sync.Mutex // one flush at a time, so a queued event is written once
	mu      sync.Mutex
	pending []Event
	tail    uint64 // the newest segment this replica knows exists (0: none known)
	wake    chan struct{}
	closing chan struct{}
	done    chan struct{}
	closed  bool
	sync    bool // Emit writes before it returns (short-lived commands)

	// The batch being written (the head of pending), kept across failed flushes so a put whose
	// answer was lost is recognised rather than written again as the next segment: its size, the
	// token its segment carries, and the segment last tried for it (0: none).
	inflightN     int
	inflightToken string
	inflightAt    uint64
}

// JournalPrefix is where the segments live on the control root.
const JournalPrefix = "_events/"

// DefaultJournalRetain is how many segments are kept.
const DefaultJournalRetain = 10000

// journalMinAge is how old a segment must be before it may be pruned.
const journalMinAge = time.Hour

// maxSegmentEvents bounds one segment (a burst is split into several).
const maxSegmentEvents = 500

// maxSegmentSeq is the largest sequence a segment may carry. A key above it (written by someone
// with write access to the control root, never by a journal: at one segment a millisecond it is
// 30 million years away) is not a segment: were it one, the next append would wrap to 0 and
// write segments no listing reads.
const maxSegmentSeq uint64 = 1e18

// NewJournal starts a journal on bucket (the control root). retain <= 0: DefaultJournalRetain.
func NewJournal(bucket storage.Bucket, retain int, logger *slog.Logger) *Journal {
	if retain <= 0 {
		retain = DefaultJournalRetain
	}
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	j := &Journal{bucket: bucket, retain: uint64(retain), log: logger, now: time.Now,
		wake: make(chan struct{}, 1), closing: make(chan struct{}), done: make(chan struct{})}
	go j.flusher()
	return j
}

func segmentKey(seq uint64) string { return fmt.Sprintf("%s%020d.json", JournalPrefix, seq) }

func parseSegmentKey(key string) (uint64, bool) {
	name, ok := strings.CutPrefix(key, JournalPrefix)
	if !ok {
		return 0, false
	}
	digits, ok := strings.CutSuffix(name, ".json")
	if !ok || len(digits) != 20 {
		return 0, false
	}
	seq, err := strconv.ParseUint(digits, 10, 64)
	return seq, err == nil && seq > 0 && seq <= maxSegmentSeq
}

func journalCursor(seq uint64, idx int) string {
	return "j" + strconv.FormatUint(seq, 10) + "." + strconv.Itoa(idx)
}

// isJournalCursor tells a journal cursor from a ring cursor ("<hex epoch>.<n>").
func isJournalCursor(c string) bool { return strings.HasPrefix(c, "j") }

func parseJournalCursor(c string) (seq uint64, idx int, err error) {
	s, i, ok := strings.Cut(strings.TrimPrefix(c, "j"), ".")
	seq, err1 := strconv.ParseUint(s, 10, 64)
	idx, err2 := strconv.Atoi(i)
	if !ok || err1 != nil || err2 != nil || idx < -1 || seq > maxSegmentSeq {
		return 0, 0, nserr.InvalidInputf("cursor %q is not one this catalog issued", c)
	}
	return seq, idx, nil
}

// Synchronous makes every Emit write its event before returning: for a command that exits when
// its work is done (`lancecat trash purge`, `maintenance run`), where a queued event would die with
// the process.
func (j *Journal) Synchronous() {
	j.mu.Lock()
	j.sync = true
	j.mu.Unlock()
}

// enqueue queues ev for the next flush (or, synchronous, writes it now).
func (j *Journal) enqueue(ev Event) {
	j.mu.Lock()
	if j.closed {
		j.mu.Unlock()
		j.log.Warn("control event after the journal closed: kept only in this replica's ring", slog.String("type", ev.Type))
		return
	}
	j.pending = append(j.pending, ev)
	sync := j.sync
	j.mu.Unlock()
	if sync {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if err := j.Flush(ctx); err != nil {
			j.log.Warn("control event not yet written to the journal", slog.String("type", ev.Type), slog.String("error", err.Error()))
		}
		return
	}
	select {
	case j.wake <- struct{}{}:
	default:
	}
}

// flusher writes queued events until Close, then once more.
func (j *Journal) flusher() {
	defer close(j.done)
	backoff := 50 * time.Millisecond
	for {
		select {
		case <-j.wake:
		case <-j.closing:
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			if err := j.Flush(ctx); err != nil {
				j.log.Warn("control events not written to the journal at shutdown", slog.String("error", err.Error()))
			}
			cancel()
			return
		}
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		err := j.Flush(ctx)
		cancel()
		if err == nil {
			backoff = 50 * time.Millisecond
			continue
		}
		j.log.Warn("control events not yet written to the journal; retrying", slog.String("error", err.Error()), slog.Duration("in", backoff))
		select {
		case <-time.After(backoff):
		case <-j.closing:
		}
		backoff = min(2*backoff, 10*time.Second)
		select {
		case j.wake <- struct{}{}:
		default:
		}
	}
}

// Flush writes every queued event now (callers: tests, shutdown). On an error the events stay
// queued, in order, for the next flush.
func (j *Journal) Flush(ctx context.Context) error {
	j.flushMu.Lock()
	defer j.flushMu.Unlock()
	for {
		j.mu.Lock()
		if j.inflightN == 0 {
			j.inflightN = min(len(j.pending), maxSegmentEvents)
			j.inflightToken, j.inflightAt = writeToken(), 0
		}
		batch := j.pending[:j.inflightN]
		j.mu.Unlock()
		if len(batch) == 0 {
			return nil
		}
		if err := j.append(ctx, batch, j.inflightToken); err != nil {
			return err
		}
		j.mu.Lock()
		j.pending = j.pending[len(batch):]
		j.inflightN, j.inflightToken, j.inflightAt = 0, "", 0
		j.mu.Unlock()
	}
}

// writeToken names one batch's segment write (random: unique across replicas and restarts).
func writeToken() string {
	b := make([]byte, 16)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// segmentEvent is an event as a segment stores it (its cursor is its place in the journal).
type segmentEvent struct {
	Type       string            `json:"type"`
	At         time.Time         `json:"at"`
	Actor      string            `json:"actor,omitempty"`
	Object     string            `json:"object,omitempty"`
	Attributes map[string]string `json:"attributes,omitempty"`
	// Write is the token of the batch the segment holds (on its first event): the writer's way
	// to know a segment it finds in its way is its own put, landed though its answer was lost.
	Write string `json:"write,omitempty"`
}

// append writes batch as the next segment. A put that failed without an answer may have landed
// (the answer lost to a timeout or a reset, or landed by the S3 client's own retry, which then
// sees "exists"): the segment then tried, and any segment that refuses a put, is read back and
// taken as written when it carries token, so a batch is in the journal once.
func (j *Journal) append(ctx context.Context, batch []Event, token string) error {
	stored := make([]segmentEvent, len(batch))
	for i, ev := range batch {
		stored[i] = segmentEvent{Type: ev.Type, At: ev.At, Actor: ev.Actor, Object: ev.Object, Attributes: ev.Attributes}
	}
	stored[0].Write = token
	body, err := json.Marshal(stored)
	if err != nil {
		return err
	}
	j.mu.Lock()
	tried := j.inflightAt
	j.mu.Unlock()
	if tried > 0 {
		mine, err := j.segmentHolds(ctx, tried, token)
		if err != nil {
			return err
		}
		if mine {
			j.written(ctx, tried)
			return nil
		}
	}
	tail, err := j.listTail(ctx)
	if err != nil {
		return err
	}
	for next := tail + 1; ; next++ {
		j.mu.Lock()
		j.inflightAt = next
		j.mu.Unlock()
		// next-1 exists: listed, written by us, or refused our put just now.
		_, err := j.bucket.PutIfAbsent(ctx, segmentKey(next), bytes.NewReader(body), int64(len(body)))
		if errors.Is(err, storage.ErrExists) {
			mine, err := j.segmentHolds(ctx, next, token)
			if err != nil {
				return err
			}
			if !mine {
				continue
			}
		} else if err != nil {
			return fmt.Errorf("journal segment %d: %w", next, err)
		}
		j.written(ctx, next)
		return nil
	}
}

func (j *Journal) written(ctx context.Context, seq uint64) {
	j.mu.Lock()
	j.tail = max(j.tail, seq)
	j.mu.Unlock()
	j.prune(ctx, seq)
}

// segmentHolds reports whether segment seq exists and holds the batch of token.
func (j *Journal) segmentHolds(ctx context.Context, seq uint64, token string) (bool, error) {
	rc, _, err := j.bucket.Get(ctx, segmentKey(seq))
	if errors.Is(err, storage.ErrNotFound) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("journal segment %d: %w", seq, err)
	}
	defer rc.Close()
	data, err := io.ReadAll(io.LimitReader(rc, 64<<20))
	if err != nil {
		return false, fmt.Errorf("journal segment %d: %w", seq, err)
	}
	var stored []segmentEvent
	if json.Unmarshal(data, &stored) != nil || len(stored) == 0 {
		return false, nil
	}
	return stored[0].Write == token, nil
}

// listTail returns the newest segment, listing only those after the newest this replica knew.
func (j *Journal) listTail(ctx context.Context) (uint64, error) {
	j.mu.Lock()
	tail := j.tail
	j.mu.Unlock()
	opts := storage.ListOptions{Limit: 1000}
	if tail > 0 {
		opts.StartAfter = segmentKey(tail)
	}
	for {
		page, err := j.bucket.List(ctx, JournalPrefix, opts)
		if err != nil {
			return 0, fmt.Errorf("list the journal: %w", err)
		}
		for _, o := range page.Objects {
			if seq, ok := parseSegmentKey(o.Key); ok && seq > tail {
				tail = seq
			}
		}
		if page.NextStartAfter == "" {
			break
		}
		opts.StartAfter = page.NextStartAfter
	}
	j.mu.Lock()
	j.tail = max(j.tail, tail)
	j.mu.Unlock()
	return tail, nil
}

// prune deletes the segment Retain behind the one just written, once it is old enough; every
// 100th segment it also sweeps older leftovers (ones skipped while too young).
func (j *Journal) prune(ctx context.Context, written uint64) {
	if written <= j.retain {
		return
	}
	limit := written - j.retain
	var candidates []uint64
	if written%100 == 0 {
		page, err := j.bucket.List(ctx, JournalPrefix, storage.ListOptions{Limit: 1000})
		if err != nil {
			return
		}
		for _, o := range page.Objects {
			if seq, ok := parseSegmentKey(o.Key); ok && seq <= limit && j.now().Sub(o.ModTime) > journalMinAge {
				candidates = append(candidates, seq)
			}
		}
	} else {
		info, err := j.bucket.Stat(ctx, segmentKey(limit))
		if err == nil && j.now().Sub(info.ModTime) > journalMinAge {
			candidates = append(candidates, limit)
		}
	}
	for _, seq := range candidates {
		if err := j.bucket.Delete(ctx, segmentKey(seq)); err != nil {
			j.log.Warn("journal: pruning a segment failed", slog.Uint64("segment", seq), slog.String("error", err.Error()))
			return
		}
	}
}

// End returns the cursor of the newest event in the journal ("j0.-1" when it is empty): reading
// Since it returns only what is written afterwards.
func (j *Journal) End(ctx context.Context) (string, error) {
	tail, err := j.listTail(ctx)
	if err != nil {
		return "", nserr.Wrap(nserr.ServiceUnavailable, err, "the control root did not answer")
	}
	if tail == 0 {
		return journalCursor(0, -1), nil
	}
	batch, err := j.readSegment(ctx, segmentKey(tail))
	if err != nil {
		return "", err
	}
	return journalCursor(tail, len(batch)-1), nil
}

// Since returns up to limit events after cursor ("" or a cursor this catalog did not issue in
// its journal: from the oldest retained), the cursor to ask with next time, and whether the
// cursor could not be honoured because its events were pruned (reset).
func (j *Journal) Since(ctx context.Context, cursor string, limit int) (events []Event, next string, reset bool, err error) {
	if limit <= 0 || limit > MaxPageSize {
		limit = MaxPageSize
	}
	var seq uint64
	idx := -1
	if cursor != "" {
		if seq, idx, err = parseJournalCursor(cursor); err != nil {
			return nil, "", false, err
		}
	}
	opts := storage.ListOptions{Limit: 1000}
	if seq > 1 {
		opts.StartAfter = segmentKey(seq - 1)
	}
	next = cursor
	first := true
	for len(events) < limit {
		page, err := j.bucket.List(ctx, JournalPrefix, opts)
		if err != nil {
			return nil, "", false, nserr.Wrap(nserr.ServiceUnavailable, err, "the control root did not answer")
		}
		for _, o := range page.Objects {
			s, ok := parseSegmentKey(o.Key)
			if !ok || len(events) >= limit {
				continue
			}
			if first {
				first = false
				// The cursor's own segment is gone (pruned) while later ones exist: the reader
				// missed events.
				if cursor != "" && s > seq && seq > 0 {
					reset = true
					idx = -1
				}
			}
			if s < seq {
				continue
			}
			batch, err := j.readSegment(ctx, o.Key)
			if err != nil {
				return nil, "", false, err
			}
			from := 0
			if s == seq {
				from = idx + 1
			}
			for i := from; i < len(batch) && len(events) < limit; i++ {
				ev := batch[i]
				ev.Cursor = journalCursor(s, i)
				events = append(events, ev)
				next = ev.Cursor
			}
		}
		if page.NextStartAfter == "" {
			break
		}
		opts.StartAfter = page.NextStartAfter
	}
	if next == "" {
		next = journalCursor(0, -1)
	}
	return events, next, reset, nil
}

func (j *Journal) readSegment(ctx context.Context, key string) ([]Event, error) {
	rc, _, err := j.bucket.Get(ctx, key)
	if err != nil {
		return nil, nserr.Wrap(nserr.ServiceUnavailable, err, "the control root did not answer")
	}
	defer rc.Close()
	data, err := io.ReadAll(io.LimitReader(rc, 64<<20))
	if err != nil {
		return nil, nserr.Wrap(nserr.ServiceUnavailable, err, "the control root did not answer")
	}
	var stored []segmentEvent
	if err := json.Unmarshal(data, &stored); err != nil {
		// A segment nobody could have written this way: skip it rather than stall every reader.
		j.log.Warn("journal: unreadable segment skipped", slog.String("key", key), slog.String("error", err.Error()))
		return nil, nil
	}
	batch := make([]Event, len(stored))
	for i, e := range stored {
		batch[i] = Event{Type: e.Type, At: e.At, Actor: e.Actor, Object: e.Object, Attributes: e.Attributes}
	}
	return batch, nil
}

// Close flushes what is queued (bounded) and stops the flusher.
func (j *Journal) Close() {
	j.mu.Lock()
	if j.closed {
		j.mu.Unlock()
		<-j.done
		return
	}
	j.closed = true
	j.mu.Unlock()
	close(j.closing)
	<-j.done
}
