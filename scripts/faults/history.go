package faults

import (
	"errors"
	"fmt"
	"math"
	"sync"
	"time"

	"github.com/lancecat/lancecat/client"
)

// Outcome is what a call's answer says happened.
type Outcome int

const (
	// OK: the call took effect (or, for a read, answered).
	OK Outcome = iota
	// Refused: a 4xx answer with a code: the call did not take effect.
	Refused
	// Unknown: a timeout, a 5xx, a connection lost: it may or may not have taken effect.
	Unknown
)

func (o Outcome) String() string { return [...]string{"ok", "refused", "unknown"}[o] }

// Op is one recorded call.
type Op struct {
	Client  int
	Replica int    // the replica the call went to (0-based)
	Obj     string // the object (porcupine's partition): "ns/a", "table/t0", "data"
	F       string // what was called
	Tag     string
	Arg     int64   // a version asked for
	IDs     []int64 // the rows a data write carries
	Call    int64   // ns since the campaign started
	Return  int64   // ns since the campaign started; math.MaxInt64 when Unknown
	Outcome Outcome
	Code    client.Code
	Version int64  // a version answered
	Tags    string // the tags answered ("g0=3,g1=5")
	Err     string
}

func (o Op) String() string {
	ret := "∞"
	if o.Return != math.MaxInt64 {
		ret = fmt.Sprintf("%.3fs", float64(o.Return)/1e9)
	}
	s := fmt.Sprintf("[c%d %.3fs–%s] %s %s", o.Client, float64(o.Call)/1e9, ret, o.Obj, o.F)
	if o.Tag != "" {
		s += " " + o.Tag
	}
	if o.Arg != 0 {
		s += fmt.Sprintf(" @%d", o.Arg)
	}
	if len(o.IDs) > 0 {
		s += fmt.Sprintf(" ids %d..%d", o.IDs[0], o.IDs[len(o.IDs)-1])
	}
	switch o.Outcome {
	case OK:
		s += fmt.Sprintf(" → ok v%d", o.Version)
		if o.F == "tags" {
			s += " {" + o.Tags + "}"
		}
	case Refused:
		s += fmt.Sprintf(" → refused %s", o.Code)
		if o.Code == client.CodePermissionDenied {
			s += " (" + o.Err + ")"
		}
	default:
		s += " → unknown (" + o.Err + ")"
	}
	return s
}

// History records every call.
type History struct {
	start time.Time
	mu    sync.Mutex
	ops   []Op
	// Max bounds the history (calls beyond it are not made).
	Max int
}

func NewHistory(start time.Time, max int) *History { return &History{start: start, Max: max} }

func (h *History) now() int64 { return int64(time.Since(h.start)) }

// Full reports whether the history reached its bound.
func (h *History) Full() bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	return len(h.ops) >= h.Max
}

// Record runs call and records it: op carries what was asked; call fills the answer's fields
// and returns the call's error, which is classified.
func (h *History) Record(op Op, call func(*Op) error) Op {
	op.Call = h.now()
	err := call(&op)
	op.Return = h.now()
	op.Outcome, op.Code = classify(err)
	if err != nil {
		op.Err = err.Error()
	}
	if op.Outcome == Unknown {
		op.Return = math.MaxInt64
	}
	h.mu.Lock()
	h.ops = append(h.ops, op)
	h.mu.Unlock()
	return op
}

// Ops is the history so far.
func (h *History) Ops() []Op {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]Op(nil), h.ops...)
}

func classify(err error) (Outcome, client.Code) {
	if err == nil {
		return OK, 0
	}
	var p *client.Problem
	if errors.As(err, &p) && p.Status < 500 && p.Status != 408 && !p.Committed() {
		return Refused, p.Code
	}
	return Unknown, 0
}
