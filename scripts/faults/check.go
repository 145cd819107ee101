package faults

import (
	"fmt"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/anishathalye/porcupine"

	"github.com/lancecat/lancecat/client"
	"github.com/lancecat/lancecat/client/controlclient"
)

// Anomaly is one thing the history shows could not have happened.
type Anomaly struct {
	Checker string
	What    string
	Ops     []Op // the excerpt of the history that shows it
}

func (a Anomaly) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s: %s", a.Checker, a.What)
	for _, o := range a.Ops {
		b.WriteString("\n    " + o.String())
	}
	return b.String()
}

// objState is the model's state of one object: a namespace (Exists) or a table (Exists, its
// latest Version, -1 while unknown, and its Tags, "name=version" sorted and comma-joined).
type objState struct {
	Exists    bool
	Version   int64
	Tags      string // "?" while unknown (a table registered or undropped)
	Protected bool
	Trash     int // tables dropped into the trash under this name, not yet undropped
}

func tagsOf(s string) map[string]int64 {
	m := map[string]int64{}
	if s == "" {
		return m
	}
	for _, kv := range strings.Split(s, ",") {
		k, v, _ := strings.Cut(kv, "=")
		n, _ := strconv.ParseInt(v, 10, 64)
		m[k] = n
	}
	return m
}

func tagsString(m map[string]int64) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = k + "=" + strconv.FormatInt(m[k], 10)
	}
	return strings.Join(parts, ",")
}

// step is the catalog's sequential specification of one object.
func step(s objState, o Op) (bool, objState) {
	unknown := o.Outcome == Unknown
	ok := o.Outcome == OK
	notFound := o.Outcome == Refused && (o.Code == client.CodeNamespaceNotFound || o.Code == client.CodeTableNotFound)
	if o.F == "undrop" {
		return stepUndrop(s, o)
	}
	if notFound {
		return !s.Exists, s
	}
	if o.Outcome == Refused && !slices.Contains([]client.Code{client.CodeNamespaceAlreadyExists, client.CodeTableAlreadyExists,
		client.CodeTableTagAlreadyExists, client.CodeTableTagNotFound, client.CodeNamespaceNotEmpty, client.CodeInvalidTableState}, o.Code) {
		// Any other refusal (ConcurrentModification, InvalidInput, a version that is not there…)
		// changed nothing and says nothing checkable here.
		return true, s
	}
	switch o.F {
	case "create":
		if unknown {
			if !s.Exists {
				return true, objState{Exists: true, Version: -1, Trash: s.Trash}
			}
			return true, s
		}
		if ok {
			return !s.Exists, objState{Exists: true, Version: o.Version, Trash: s.Trash}
		}
		return s.Exists, s // AlreadyExists
	case "drop", "deregister":
		gone := objState{Trash: s.Trash}
		if o.F == "drop" && strings.HasPrefix(o.Obj, "table/") {
			gone.Trash++
		}
		if unknown {
			if s.Exists && !s.Protected {
				return true, gone
			}
			return true, s
		}
		if ok {
			return s.Exists && !s.Protected, gone
		}
		if o.Code == client.CodeInvalidTableState {
			return s.Protected, s
		}
		return s.Exists, s // NotEmpty
	case "register":
		back := objState{Exists: true, Version: -1, Tags: "?", Trash: s.Trash}
		if unknown {
			if !s.Exists {
				return true, back
			}
			return true, s
		}
		if ok {
			return !s.Exists, back
		}
		return s.Exists, s // AlreadyExists
	case "protect", "unprotect":
		if unknown {
			if s.Exists || o.F == "unprotect" {
				s.Protected = o.F == "protect"
			}
			return true, s
		}
		if !ok {
			return true, s
		}
		if o.F == "protect" {
			if !s.Exists {
				return false, s
			}
			s.Protected = true
			return true, s
		}
		s.Protected = false
		return true, s
	case "describe":
		if unknown {
			return true, s
		}
		if !s.Exists {
			return false, s
		}
		if strings.HasPrefix(o.Obj, "ns/") {
			return true, s
		}
		if s.Version != -1 && s.Version != o.Version {
			return false, s
		}
		s.Version = o.Version
		return true, s
	case "insert":
		if unknown {
			if s.Exists && s.Version != -1 {
				s.Version++
			}
			return true, s
		}
		if !s.Exists || (s.Version != -1 && o.Version != s.Version+1) {
			return false, s
		}
		s.Version = o.Version
		return true, s
	case "tag-create", "tag-delete":
		if s.Tags == "?" {
			return unknown || !ok || s.Exists, s
		}
	}
	switch o.F {
	case "tag-create":
		tags := tagsOf(s.Tags)
		_, has := tags[o.Tag]
		if unknown {
			if s.Exists && !has && (s.Version == -1 || o.Arg <= s.Version) {
				tags[o.Tag] = o.Arg
				s.Tags = tagsString(tags)
			}
			return true, s
		}
		if !ok {
			return s.Exists && has, s
		}
		if !s.Exists || has || (s.Version != -1 && o.Arg > s.Version) {
			return false, s
		}
		tags[o.Tag] = o.Arg
		s.Tags = tagsString(tags)
		return true, s
	case "tag-delete":
		tags := tagsOf(s.Tags)
		_, has := tags[o.Tag]
		if unknown {
			delete(tags, o.Tag)
			s.Tags = tagsString(tags)
			return true, s
		}
		if !ok {
			return s.Exists && !has, s
		}
		if !s.Exists || !has {
			return false, s
		}
		delete(tags, o.Tag)
		s.Tags = tagsString(tags)
		return true, s
	case "tags":
		if unknown {
			return true, s
		}
		if !s.Exists || (s.Tags != "?" && s.Tags != o.Tags) {
			return false, s
		}
		s.Tags = o.Tags
		return true, s
	}
	return true, s
}

// stepUndrop: an undrop answers ok only when a table dropped under this name is in the trash and
// none exists; it brings one back (its version and tags are then learned from the reads).
func stepUndrop(s objState, o Op) (bool, objState) {
	back := objState{Exists: true, Version: -1, Tags: "?", Trash: s.Trash - 1}
	switch o.Outcome {
	case Unknown:
		if !s.Exists && s.Trash > 0 {
			return true, back
		}
		return true, s
	case OK:
		return !s.Exists && s.Trash > 0, back
	}
	return true, s // refused: nothing to undrop, or a table is there
}

// catalogModel is porcupine's model: objects are independent, so the history is partitioned by
// object and each partition starts from "absent".
var catalogModel = porcupine.Model{
	Partition: func(history []porcupine.Operation) [][]porcupine.Operation {
		by := map[string][]porcupine.Operation{}
		var keys []string
		for _, op := range history {
			k := op.Input.(Op).Obj
			if _, seen := by[k]; !seen {
				keys = append(keys, k)
			}
			by[k] = append(by[k], op)
		}
		out := make([][]porcupine.Operation, 0, len(keys))
		for _, k := range keys {
			out = append(out, by[k])
		}
		return out
	},
	Init: func() any { return objState{} },
	Step: func(state, input, _ any) (bool, any) {
		return step(state.(objState), input.(Op))
	},
	DescribeOperation: func(input, _ any) string { return input.(Op).String() },
	DescribeState:     func(state any) string { return fmt.Sprintf("%+v", state.(objState)) },
}

// CheckLinearizable runs porcupine over the catalog objects' operations (the data table's are
// checked by CheckData). An object whose check times out is reported as such, not as an anomaly.
func CheckLinearizable(ops []Op, timeout time.Duration) (anomalies []Anomaly, timedOut bool) {
	byObj := map[string][]porcupine.Operation{}
	for _, o := range ops {
		if o.Obj == "data" || o.Obj == "grant" || (o.Outcome == Unknown && (o.F == "describe" || o.F == "tags")) {
			continue // unknown reads say nothing
		}
		byObj[o.Obj] = append(byObj[o.Obj], porcupine.Operation{ClientId: o.Client, Input: o, Call: o.Call, Return: o.Return})
	}
	keys := make([]string, 0, len(byObj))
	for k := range byObj {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		res, info := porcupine.CheckOperationsVerbose(catalogModel, byObj[k], timeout)
		switch res {
		case porcupine.Ok:
		case porcupine.Unknown:
			timedOut = true
		default:
			anomalies = append(anomalies, Anomaly{Checker: "linearizability", What: k + " has no linearization", Ops: excerpt(info, byObj[k])})
		}
	}
	return anomalies, timedOut
}

// excerpt is the operations around where porcupine's longest partial linearization stopped.
func excerpt(info porcupine.LinearizationInfo, ops []porcupine.Operation) []Op {
	parts := info.PartialLinearizationsOperations()
	var longest []porcupine.Operation
	for _, p := range parts {
		for _, l := range p {
			if len(l) > len(longest) {
				longest = l
			}
		}
	}
	in := map[int64]bool{}
	var last int64
	for _, o := range longest {
		in[o.Call] = true
		last = max(last, o.Call)
	}
	var out []Op
	// The tail of the linearized prefix, then the first operations that could not follow it.
	for _, o := range longest[max(0, len(longest)-6):] {
		out = append(out, o.Input.(Op))
	}
	n := 0
	for _, o := range ops {
		if !in[o.Call] && n < 6 && o.Call >= last-int64(2*time.Second) {
			out = append(out, o.Input.(Op))
			n++
		}
	}
	return out
}

// CheckData checks the data table: every acknowledged commit has its own version; every row of an
// acknowledged write is there exactly once (unless an acknowledged delete took it); no row of a
// refused write is there; a row of an unknown write at most once; and a reader never sees the
// table's version go backwards.
func CheckData(ops []Op, final []int64) []Anomaly {
	var out []Anomaly
	count := map[int64]int{}
	for _, id := range final {
		count[id]++
	}
	byVersion := map[int64][]Op{}
	writeOf := map[int64]Op{}
	deleted := map[int64]Outcome{}
	lastSeen := map[int]Op{}
	for _, o := range ops {
		if o.Obj != "data" {
			continue
		}
		switch o.F {
		case "insert", "merge":
			for _, id := range o.IDs {
				writeOf[id] = o
			}
			if o.Outcome == OK {
				byVersion[o.Version] = append(byVersion[o.Version], o)
			}
		case "delete":
			if o.Outcome != Refused {
				deleted[o.IDs[0]] = o.Outcome
			}
		}
		if o.Outcome == OK && o.F != "delete" {
			if prev, ok := lastSeen[o.Client]; ok && o.Version < prev.Version {
				out = append(out, Anomaly{Checker: "monotonic reads", What: fmt.Sprintf("client %d saw the data table go from v%d back to v%d", o.Client, prev.Version, o.Version), Ops: []Op{prev, o}})
			}
			lastSeen[o.Client] = o
		}
	}
	for v, w := range byVersion {
		if len(w) > 1 {
			out = append(out, Anomaly{Checker: "lost update", What: fmt.Sprintf("%d acknowledged commits answered the same version %d", len(w), v), Ops: w})
		}
	}
	ids := make([]int64, 0, len(writeOf))
	for id := range writeOf {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	for _, id := range ids {
		w, n := writeOf[id], count[id]
		del, wasDeleted := deleted[id]
		switch {
		case n > 1:
			out = append(out, Anomaly{Checker: "data", What: fmt.Sprintf("row %d is there %d times", id, n), Ops: []Op{w}})
		case w.Outcome == Refused && n > 0:
			out = append(out, Anomaly{Checker: "data", What: fmt.Sprintf("row %d of a refused write is there", id), Ops: []Op{w}})
		case w.Outcome == OK && n == 0 && !wasDeleted:
			out = append(out, Anomaly{Checker: "data", What: fmt.Sprintf("row %d of an acknowledged write is missing", id), Ops: []Op{w}})
		case wasDeleted && del == OK && n > 0:
			out = append(out, Anomaly{Checker: "data", What: fmt.Sprintf("row %d is there after an acknowledged delete", id), Ops: []Op{w}})
		}
	}
	return out
}

// CheckAuthz checks reader's reads against the grants and revokes: no read answered from a
// revoked grant later than bound after the revoke completed (unless a grant may have come after
// it), and no read refused while a grant that completed before it still stands. Denied is
// PermissionDenied or TableNotFound (a table reader may not see is not there for them).
func CheckAuthz(ops []Op, bound time.Duration) []Anomaly {
	var grants, revokes, reads []Op
	for _, o := range ops {
		if o.Obj != "grant" {
			continue
		}
		switch o.F {
		case "grant":
			grants = append(grants, o)
		case "revoke":
			revokes = append(revokes, o)
		default:
			reads = append(reads, o)
		}
	}
	// mayFollow: an op that was not refused and did not end before from began.
	mayFollow := func(list []Op, from Op, until int64) (Op, bool) {
		for _, x := range list {
			if x.Outcome != Refused && x.Return >= from.Call && x.Call <= until {
				return x, true
			}
		}
		return Op{}, false
	}
	var out []Anomaly
	for _, rd := range reads {
		switch {
		case rd.Outcome == OK:
			if _, ok := mayFollow(grants, Op{Call: math.MinInt64}, rd.Return); !ok {
				out = append(out, Anomaly{Checker: "authorization", What: "a read allowed before any grant", Ops: []Op{rd}})
				continue
			}
			for _, rv := range revokes {
				if rv.Outcome != OK || rv.Return+int64(bound) >= rd.Call {
					continue
				}
				if _, ok := mayFollow(grants, rv, rd.Return); ok {
					continue
				}
				out = append(out, Anomaly{Checker: "authorization", What: fmt.Sprintf("a read allowed %v after its grant was revoked (bound %v)",
					time.Duration(rd.Call-rv.Return), bound), Ops: []Op{rv, rd}})
				break
			}
		case rd.Outcome == Refused && (rd.Code == client.CodePermissionDenied || rd.Code == client.CodeTableNotFound):
			for _, g := range grants {
				if g.Outcome != OK || g.Return >= rd.Call {
					continue
				}
				if _, ok := mayFollow(revokes, g, rd.Return); ok {
					continue
				}
				out = append(out, Anomaly{Checker: "authorization", What: "a read denied after a grant completed and while nothing revoked it", Ops: []Op{g, rd}})
				break
			}
		}
	}
	return out
}

// CheckJournal checks the data table's events in the journal: each committed version once, in
// commit (version) order, and every acknowledged insert or merge there, unless the replica that
// answered it was killed afterwards (the journal documents that a crash between the commit and
// the flush loses the event).
//
// Order across replicas is reported apart (inversions), not as an anomaly: each replica queues its
// events and flushes them after its commits, so a replica whose flush is delayed (a slow or
// partitioned store) appends an older version after another replica's newer one. The journal
// documents that delivery as asynchronous; a consumer needing commit order sorts a table's events
// by version.
func CheckJournal(ops []Op, events []controlclient.Event, faults []Fault) (out []Anomaly, inversions []string) {
	seen := map[int64]controlclient.Event{}
	var last int64
	var lastEv controlclient.Event
	for _, e := range events {
		if e.Object == nil || !strings.Contains(*e.Object, dataNS) || !strings.Contains(*e.Object, dataTab) || e.Attributes == nil {
			continue
		}
		vs, ok := (*e.Attributes)["version"]
		if !ok {
			continue
		}
		v, _ := strconv.ParseInt(vs, 10, 64)
		if prev, dup := seen[v]; dup {
			out = append(out, Anomaly{Checker: "journal", What: fmt.Sprintf("version %d of the data table is in the journal twice: %s %s and %s %s", v, prev.Cursor, prev.Type, e.Cursor, e.Type)})
		}
		seen[v] = e
		if v < last {
			inversions = append(inversions, fmt.Sprintf("version %d (%s, at %s) after version %d (%s, at %s)",
				v, e.Cursor, e.At.Format("15:04:05.000"), last, lastEv.Cursor, lastEv.At.Format("15:04:05.000")))
		}
		if v > last {
			last, lastEv = v, e
		}
	}
	killedAfter := func(replica int, t int64) bool {
		name := fmt.Sprintf("r%d", replica+1)
		for _, f := range faults {
			if f.Kind == "kill" && f.Target == name && int64(f.End) >= t {
				return true
			}
		}
		return false
	}
	for _, o := range ops {
		if o.Obj != "data" || o.Outcome != OK || (o.F != "insert" && o.F != "merge") {
			continue
		}
		if _, ok := seen[o.Version]; !ok && !killedAfter(o.Replica, o.Return) {
			out = append(out, Anomaly{Checker: "journal", What: fmt.Sprintf("acknowledged commit of version %d is not in the journal (its replica was not killed)", o.Version), Ops: []Op{o}})
		}
	}
	return out, inversions
}
