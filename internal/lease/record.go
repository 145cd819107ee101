package lease

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/lancecat/lancecat/storage"
)

// Record is what a lease object holds. On disk it is one JSON object: the protocol's fields
// below, and beside them the caller's payload fields (so each user's older record shape, whose
// own fields sat at the top level, is still the shape written).
type Record struct {
	// Holder names the replica holding the lease (host:pid by default in every user).
	Holder string
	// Task is the holder's task id, when its work is recorded as one ("" while it starts).
	Task string
	// Token is random per acquisition: a holder recognises its own write after a conditional
	// put that failed ambiguously (a timeout after the store applied it). Records of older
	// replicas have none.
	Token string
	// AcquiredAt is when this holder took the lease (zero in older records).
	AcquiredAt time.Time
	// RenewedAt is when the holder last renewed it (key "updated_at", as the refresh lease and
	// the index-build claim named it). Staleness counts from here. For an unreadable record
	// answered in a HeldError it is the object's modification time.
	RenewedAt time.Time
	// ExpiresAt is RenewedAt+StaleAfter as the writer saw it, zero once released. It is written
	// for replicas of the maintenance service from before this package, which judge a lease by
	// it alone; records they wrote have no updated_at and are judged by it here.
	ExpiresAt time.Time
	// Released: the holder gave the lease up; anyone may take it at once.
	Released bool
	// Payload is the caller's fields, a JSON object (nil: none). Its keys may not be the
	// protocol's.
	Payload json.RawMessage
}

// The protocol's keys in a record object; a payload may not use them.
var reserved = []string{"holder", "task", "token", "acquired_at", "updated_at", "expires_at", "released"}

// wire is the protocol's part of a record as JSON.
type wire struct {
	Holder     string    `json:"holder"`
	Task       string    `json:"task,omitempty"`
	Token      string    `json:"token,omitempty"`
	AcquiredAt time.Time `json:"acquired_at,omitzero"`
	UpdatedAt  time.Time `json:"updated_at,omitzero"`
	// ExpiresAt is always written, zero when released: an old maintenance replica reads a
	// missing or zero expiry as expired, which is right only for a released lease.
	ExpiresAt time.Time `json:"expires_at"`
	Released  bool      `json:"released,omitempty"`
}

// maxRecord bounds what is read of a lease object: records are a few hundred bytes; a larger
// object is not one of ours (judged unreadable).
const maxRecord = 64 << 10

// errUnreadable marks a lease object that does not decode as a record.
var errUnreadable = errors.New("lease: unreadable record")

// payloadFields checks that payload marshals to a JSON object with no protocol key.
func payloadFields(payload any) (json.RawMessage, error) {
	if payload == nil {
		return nil, nil
	}
	raw, err := json.Marshal(payload)
	if err != nil {
		return nil, fmt.Errorf("lease: payload: %w", err)
	}
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(raw, &fields); err != nil || fields == nil {
		return nil, fmt.Errorf("lease: payload must be a JSON object, not %s", raw)
	}
	for _, k := range reserved {
		if _, ok := fields[k]; ok {
			return nil, fmt.Errorf("lease: payload field %q is the protocol's", k)
		}
	}
	if len(fields) == 0 {
		return nil, nil
	}
	return raw, nil
}

// encode is r as its lease object: one JSON object, keys sorted.
func (r Record) encode() []byte {
	fields := map[string]json.RawMessage{}
	if len(r.Payload) > 0 {
		// Checked by payloadFields when the lease was taken; a decoded record's payload is an
		// object by construction.
		_ = json.Unmarshal(r.Payload, &fields)
	}
	proto, _ := json.Marshal(r.wire())
	var pf map[string]json.RawMessage
	_ = json.Unmarshal(proto, &pf)
	for k, v := range pf {
		fields[k] = v
	}
	out, _ := json.Marshal(fields)
	return out
}

// wire is r's protocol fields as written (times in UTC).
func (r Record) wire() wire {
	return wire{Holder: r.Holder, Task: r.Task, Token: r.Token, AcquiredAt: r.AcquiredAt.UTC(),
		UpdatedAt: r.RenewedAt.UTC(), ExpiresAt: r.ExpiresAt.UTC(), Released: r.Released}
}

// decode reads a lease object: any JSON object with a holder is a record (unknown keys are the
// payload); anything else is errUnreadable.
func decode(data []byte) (Record, error) {
	if len(data) > maxRecord {
		return Record{}, fmt.Errorf("%w: %d bytes", errUnreadable, len(data))
	}
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(data, &fields); err != nil || fields == nil {
		return Record{}, fmt.Errorf("%w: not a JSON object", errUnreadable)
	}
	var w wire
	if err := json.Unmarshal(data, &w); err != nil {
		return Record{}, fmt.Errorf("%w: %v", errUnreadable, err)
	}
	if w.Holder == "" {
		return Record{}, fmt.Errorf("%w: no holder", errUnreadable)
	}
	r := Record{Holder: w.Holder, Task: w.Task, Token: w.Token, AcquiredAt: w.AcquiredAt,
		RenewedAt: w.UpdatedAt, ExpiresAt: w.ExpiresAt, Released: w.Released}
	if _, err := json.Marshal(r.wire()); err != nil {
		// A time that parses but cannot be written back (a year past 9999 in UTC).
		return Record{}, fmt.Errorf("%w: %v", errUnreadable, err)
	}
	for _, k := range reserved {
		delete(fields, k)
	}
	if len(fields) > 0 {
		r.Payload, _ = json.Marshal(fields)
	}
	return r, nil
}

// current is a lease object as read: its record (or why it is unreadable) and its ETag.
type current struct {
	rec  Record
	bad  error // errUnreadable, wrapped: rec is zero
	info storage.ObjectInfo
}

// read reads the lease object at key (storage.ErrNotFound when there is none).
func read(ctx context.Context, store storage.Bucket, key string) (current, error) {
	rc, info, err := store.Get(ctx, key)
	if err != nil {
		return current{}, err
	}
	defer rc.Close()
	data, err := io.ReadAll(io.LimitReader(rc, maxRecord+1))
	if err != nil {
		return current{}, err
	}
	rec, bad := decode(data)
	return current{rec: rec, bad: bad, info: info}, nil
}

// until is when the record at c goes stale, by a reader's clock: staleAfter+margin after it was
// last renewed. Zero means it is free now (released).
//
//   - A record with updated_at counts from it.
//   - One with only expires_at (a maintenance replica from before this package) counts from its
//     expiry; with a zero expiry it was released.
//   - An unreadable object (not JSON, no holder, too large) is not known to be anyone's: it is
//     never deleted and not taken at once (a replica of a newer version may be writing a shape
//     this one cannot read), but judged by its modification time as if renewed then: while
//     something keeps rewriting it, it is held; once it has sat still for staleAfter+margin it
//     is taken over by a conditional put on its ETag, like any stale record.
func (c current) until(staleAfter, margin time.Duration) time.Time {
	switch {
	case c.bad != nil:
		return c.info.ModTime.Add(staleAfter + margin)
	case c.rec.Released:
		return time.Time{}
	case !c.rec.RenewedAt.IsZero():
		return c.rec.RenewedAt.Add(staleAfter + margin)
	case !c.rec.ExpiresAt.IsZero():
		return c.rec.ExpiresAt.Add(margin)
	default:
		return time.Time{}
	}
}

// heldBy is the record a HeldError names for c.
func (c current) heldBy() Record {
	if c.bad != nil {
		return Record{RenewedAt: c.info.ModTime}
	}
	return c.rec
}
