package faults

import (
	"context"
	"fmt"
	"math/rand/v2"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/lancecat/lancecat/client"
	"github.com/lancecat/lancecat/client/controlclient"
	"github.com/lancecat/lancecat/client/nsclient"
)

// The objects the workers share: few, so they contend.
var (
	nsKeys    = []string{"fa", "fb", "fc"}
	tableKeys = []string{"t0", "t1", "t2"}
	tagNames  = []string{"g0", "g1"}
)

const (
	tablesNS = "tbl"  // holds the tables of tableKeys; never dropped
	dataNS   = "data" // holds the data table
	dataTab  = "rows"
	secNS    = "sec" // holds the table the authorization workload grants on
	secTab   = "t"
)

var schema = arrow.NewSchema([]arrow.Field{{Name: "id", Type: arrow.PrimitiveTypes.Int64}}, nil)

func rows(ids []int64) array.RecordReader {
	b := array.NewInt64Builder(memory.DefaultAllocator)
	defer b.Release()
	b.AppendValues(ids, nil)
	col := b.NewArray()
	defer col.Release()
	rec := array.NewRecordBatch(schema, []arrow.Array{col}, int64(len(ids)))
	defer rec.Release()
	rr, _ := array.NewRecordReader(schema, []arrow.RecordBatch{rec})
	return rr
}

// Workers run the workload against the cluster.
type Workers struct {
	c       *Cluster
	h       *History
	clients []*client.Client // one per replica
	readers []*client.Client // one per replica, as reader
	nextID  atomic.Int64
	locMu   sync.Mutex
	locs    map[string]string // table → the location it was last deregistered from
}

// NewWorkers makes a client per replica: the typed Go client with its retries.
func NewWorkers(c *Cluster, h *History) (*Workers, error) {
	w := &Workers{c: c, h: h, locs: map[string]string{}}
	for _, r := range c.Replicas {
		cl, err := client.New(r.URL(), client.WithAPIKey(c.Key), client.WithRetries(3, 100*time.Millisecond),
			client.WithHTTPClient(&http.Client{Timeout: 8 * time.Second}))
		if err != nil {
			return nil, err
		}
		w.clients = append(w.clients, cl)
		rd, err := client.New(r.URL(), client.WithAPIKey(c.ReaderKey), client.WithRetries(3, 100*time.Millisecond),
			client.WithHTTPClient(&http.Client{Timeout: 8 * time.Second}))
		if err != nil {
			return nil, err
		}
		w.readers = append(w.readers, rd)
	}
	w.nextID.Store(1000)
	return w, nil
}

// Setup creates the fixed namespaces and the data table (retrying: faults are not on yet, but a
// replica may still be warming up).
func (w *Workers) Setup(ctx context.Context) error {
	cl := w.clients[0]
	for _, ns := range []string{tablesNS, dataNS, secNS} {
		if err := retry(ctx, func() error { return cl.CreateNamespace(ctx, []string{ns}, nil) }, client.ErrNamespaceAlreadyExists); err != nil {
			return fmt.Errorf("create namespace %s: %w", ns, err)
		}
	}
	for _, id := range [][]string{{dataNS, dataTab}, {secNS, secTab}} {
		if err := retry(ctx, func() error {
			_, err := cl.CreateTable(ctx, id, rows([]int64{1}), client.Create)
			return err
		}, client.ErrTableAlreadyExists); err != nil {
			return fmt.Errorf("create table %v: %w", id, err)
		}
	}
	return nil
}

func retry(ctx context.Context, f func() error, okErr error) error {
	var err error
	for range 20 {
		if err = f(); err == nil || (okErr != nil && strings.Contains(err.Error(), okErr.Error()[len("lancecat: "):])) {
			return nil
		}
		if !sleep(ctx, 250*time.Millisecond) {
			break
		}
	}
	return err
}

// Run runs n workers until ctx ends or the history is full.
func (w *Workers) Run(ctx context.Context, n int, seed uint64) {
	done := make(chan struct{})
	for i := range n {
		go func() {
			defer func() { done <- struct{}{} }()
			w.worker(ctx, i, rand.New(rand.NewPCG(seed, uint64(i))))
		}()
	}
	for range n {
		<-done
	}
}

func (w *Workers) ids(k int) []int64 {
	hi := w.nextID.Add(int64(k))
	out := make([]int64, k)
	for i := range out {
		out[i] = hi - int64(k) + int64(i) + 1
	}
	return out
}

func (w *Workers) worker(ctx context.Context, id int, rng *rand.Rand) {
	lastVersion := map[string]int64{}
	var acked []int64 // data rows this worker wrote and saw acknowledged
	for ctx.Err() == nil && !w.h.Full() {
		ri := rng.IntN(len(w.clients))
		cl := w.clients[ri]
		// Each call is bounded by the client's timeout; ctx only stops the loop.
		cctx := context.Background()
		switch p := rng.IntN(100); {
		case p < 8: // authorization: grants and revokes of reader on one table, reader's reads
			sid := []string{secNS, secTab}
			op := Op{Client: id, Replica: ri, Obj: "grant"}
			g := client.Grant{Subject: reader, Relation: "reader"}
			switch rng.IntN(4) {
			case 0:
				op.F = "grant"
				w.h.Record(op, func(*Op) error { return cl.GrantAccess(cctx, client.OnTable, sid, g) })
			case 1:
				op.F = "revoke"
				w.h.Record(op, func(*Op) error { return cl.RevokeAccess(cctx, client.OnTable, sid, g) })
			default:
				op.F = "read"
				rd := w.readers[ri]
				w.h.Record(op, func(*Op) error { _, err := rd.DescribeTable(cctx, sid); return err })
			}
		case p < 20: // namespaces
			ns := nsKeys[rng.IntN(len(nsKeys))]
			op := Op{Client: id, Replica: ri, Obj: "ns/" + ns}
			switch rng.IntN(3) {
			case 0:
				op.F = "create"
				w.h.Record(op, func(*Op) error { return cl.CreateNamespace(cctx, []string{ns}, nil) })
			case 1:
				op.F = "drop"
				w.h.Record(op, func(*Op) error { return cl.DropNamespace(cctx, []string{ns}, client.Restrict) })
			default:
				op.F = "describe"
				w.h.Record(op, func(*Op) error { _, err := cl.DescribeNamespace(cctx, []string{ns}); return err })
			}
		case p < 60: // tables: existence, versions, tags
			t := tableKeys[rng.IntN(len(tableKeys))]
			tid := []string{tablesNS, t}
			op := Op{Client: id, Replica: ri, Obj: "table/" + t}
			switch q := rng.IntN(15); q {
			case 0:
				op.F = "create"
				op.IDs = w.ids(1)
				w.h.Record(op, func(o *Op) error { return wrote(o)(cl.CreateTable(cctx, tid, rows(o.IDs), client.Create)) })
			case 1:
				op.F = "drop"
				w.h.Record(op, func(*Op) error { return cl.DropTable(cctx, tid) })
			case 2, 3:
				op.F = "describe"
				got := w.h.Record(op, func(o *Op) error { return described(o)(cl.DescribeTable(cctx, tid)) })
				if got.Outcome == OK {
					lastVersion[t] = got.Version
				}
			case 4, 5:
				op.F = "insert"
				op.IDs = w.ids(1)
				got := w.h.Record(op, func(o *Op) error { return wrote(o)(cl.Insert(cctx, tid, rows(o.IDs), client.Append)) })
				if got.Outcome == OK {
					lastVersion[t] = got.Version
				}
			case 6:
				op.F = "tag-create"
				op.Tag = tagNames[rng.IntN(len(tagNames))]
				op.Arg = max(lastVersion[t], 1)
				w.h.Record(op, func(o *Op) error { return cl.CreateTag(cctx, tid, o.Tag, o.Arg) })
			case 7:
				op.F = "tag-delete"
				op.Tag = tagNames[rng.IntN(len(tagNames))]
				w.h.Record(op, func(o *Op) error { return cl.DeleteTag(cctx, tid, o.Tag) })
			case 10, 11:
				op.F = map[bool]string{true: "protect", false: "unprotect"}[q == 10]
				w.h.Record(op, func(o *Op) error { _, err := cl.SetTableProtection(cctx, tid, o.F == "protect"); return err })
			case 12:
				op.F = "deregister"
				got := w.h.Record(op, func(o *Op) error {
					loc, err := cl.DeregisterTable(cctx, tid)
					o.Tag = loc
					return err
				})
				if got.Outcome == OK && got.Tag != "" {
					w.locMu.Lock()
					w.locs[t] = got.Tag
					w.locMu.Unlock()
				}
			case 13:
				w.locMu.Lock()
				loc := w.locs[t]
				w.locMu.Unlock()
				if loc == "" {
					continue
				}
				op.F, op.Tag = "register", loc
				w.h.Record(op, func(o *Op) error { _, err := cl.RegisterTable(cctx, tid, o.Tag); return err })
			case 14:
				op.F = "undrop"
				w.h.Record(op, func(o *Op) error { _, err := cl.UndropTable(cctx, tid); return err })
			default:
				op.F = "tags"
				w.h.Record(op, func(o *Op) error {
					tags, err := cl.ListTags(cctx, tid)
					var parts []string
					for _, tg := range tags {
						parts = append(parts, fmt.Sprintf("%s=%d", tg.Name, tg.Version))
					}
					o.Tags = strings.Join(parts, ",")
					return err
				})
			}
		default: // data writes with unique row ids, and a reader of the data table's version
			did := []string{dataNS, dataTab}
			op := Op{Client: id, Replica: ri, Obj: "data"}
			switch q := rng.IntN(10); {
			case q < 4:
				op.F = "insert"
				op.IDs = w.ids(3)
				got := w.h.Record(op, func(o *Op) error { return wrote(o)(cl.Insert(cctx, did, rows(o.IDs), client.Append)) })
				if got.Outcome == OK {
					acked = append(acked, got.IDs...)
				}
			case q < 6:
				op.F = "merge"
				op.IDs = w.ids(3)
				got := w.h.Record(op, func(o *Op) error {
					return wrote(o)(cl.MergeInsert(cctx, did, rows(o.IDs), client.Merge{On: []string{"id"}, WhenMatchedUpdateAll: true, WhenNotMatchedInsertAll: true}))
				})
				if got.Outcome == OK {
					acked = append(acked, got.IDs...)
				}
			case q < 7 && len(acked) > 0:
				op.F = "delete"
				k := rng.IntN(len(acked))
				op.IDs = []int64{acked[k]}
				acked = append(acked[:k], acked[k+1:]...)
				w.h.Record(op, func(o *Op) error {
					resp, err := cl.Spec.DeleteFromTableWithResponse(cctx, cl.ID(did...), nil,
						nsclient.DeleteFromTableRequest{Predicate: fmt.Sprintf("id = %d", o.IDs[0])})
					return client.Check(resp, err)
				})
			default:
				op.F = "describe"
				w.h.Record(op, func(o *Op) error { return described(o)(cl.DescribeTable(cctx, did)) })
			}
		}
	}
}

// ReadData reads every id of the data table once faults are healed (through a retrying client).
func (w *Workers) ReadData(ctx context.Context) ([]int64, error) {
	var out []int64
	err := retry(ctx, func() error {
		out = out[:0]
		rr, err := w.clients[0].Query(ctx, []string{dataNS, dataTab}, nsclient.QueryTableRequest{K: 1 << 30})
		if err != nil {
			return err
		}
		defer rr.Release()
		for rr.Next() {
			rec := rr.RecordBatch()
			col := rec.Column(int(rec.Schema().FieldIndices("id")[0])).(*array.Int64)
			out = append(out, col.Int64Values()...)
		}
		return rr.Err()
	}, nil)
	return out, err
}

// Journal reads the whole control event log through replica 1, oldest first (bounded: 500
// pages). ok is false when the catalog keeps no shared journal (cursors not "j…").
func (w *Workers) Journal(ctx context.Context) (events []controlclient.Event, ok bool, err error) {
	cl := w.clients[0]
	since := ""
	limit := controlclient.Limit(1000)
	for range 500 {
		params := &controlclient.ListEventsParams{Limit: &limit}
		if since != "" {
			params.Since = &since
		}
		var page *controlclient.EventList
		err = retry(ctx, func() error {
			resp, err := cl.Control.ListEventsWithResponse(client.Idempotent(ctx), params)
			if err := client.Check(resp, err); err != nil {
				return err
			}
			page = resp.JSON200
			return nil
		}, nil)
		if err != nil {
			return nil, false, err
		}
		if len(page.Events) == 0 {
			break
		}
		events = append(events, page.Events...)
		since = page.Cursor
	}
	return events, len(events) > 0 && strings.HasPrefix(events[0].Cursor, "j"), nil
}

// wrote records in o the version a successful write answers.
func wrote(o *Op) func(*client.WriteResult, error) error {
	return func(res *client.WriteResult, err error) error {
		if err == nil {
			o.Version = res.Version
		}
		return err
	}
}

// described records in o the version a successful describe answers.
func described(o *Op) func(*client.Table, error) error {
	return func(d *client.Table, err error) error {
		if err == nil {
			o.Version = d.Version
		}
		return err
	}
}
