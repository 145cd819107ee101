package faults

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"
	"syscall"
	"time"

	toxiproxy "github.com/Shopify/toxiproxy/v2"
)

// Fault is one injected fault, for the report.
type Fault struct {
	Kind, Target string
	Start, End   time.Duration // since the campaign started
	Err          string
}

// Nemesis injects faults one at a time, each for a bounded while, then heals everything.
type Nemesis struct {
	c      *Cluster
	start  time.Time
	rng    *rand.Rand
	mu     sync.Mutex
	faults []Fault
	minio  bool // MinIO was restarted
	// Logf reports progress (the test's t.Logf).
	Logf func(format string, args ...any)
}

func NewNemesis(c *Cluster, start time.Time, seed uint64) *Nemesis {
	return &Nemesis{c: c, start: start, rng: rand.New(rand.NewPCG(seed, seed^0x5eed)), Logf: func(string, ...any) {}}
}

// Faults is what was injected.
func (n *Nemesis) Faults() []Fault {
	n.mu.Lock()
	defer n.mu.Unlock()
	return append([]Fault(nil), n.faults...)
}

func toxic(p *toxiproxy.Proxy, name, typ, stream string, attrs string) error {
	_, err := p.Toxics.AddToxicJson(strings.NewReader(fmt.Sprintf(
		`{"name":%q,"type":%q,"stream":%q,"toxicity":1,"attributes":%s}`, name, typ, stream, attrs)))
	return err
}

func heal(ps ...*toxiproxy.Proxy) {
	for _, p := range ps {
		p.Toxics.ResetToxics(context.Background())
	}
}

// Run injects faults until ctx ends: a fault every 1–3 s, held 1–4 s. MinIO is restarted once,
// at minioAt.
func (n *Nemesis) Run(ctx context.Context, minioAt time.Duration) {
	for ctx.Err() == nil {
		if !sleep(ctx, time.Duration(1000+n.rng.IntN(2000))*time.Millisecond) {
			return
		}
		if !n.minio && time.Since(n.start) >= minioAt {
			n.minio = true
			n.do(ctx, "minio-restart", "minio", func() (func(), error) {
				return func() {}, n.c.RestartMinIO(ctx)
			})
			continue
		}
		r := n.c.Replicas[n.rng.IntN(len(n.c.Replicas))]
		hold := time.Duration(1000+n.rng.IntN(3000)) * time.Millisecond
		both := func(f func(p *toxiproxy.Proxy) error) (func(), error) {
			for _, p := range []*toxiproxy.Proxy{r.S3, r.FGA} {
				if err := f(p); err != nil {
					heal(r.S3, r.FGA)
					return nil, err
				}
			}
			return func() { heal(r.S3, r.FGA) }, nil
		}
		one := func() *toxiproxy.Proxy {
			if n.rng.IntN(3) == 0 {
				return r.FGA
			}
			return r.S3
		}
		var kind, target string
		var inject func() (func(), error)
		switch k := n.rng.IntN(8); k {
		case 0:
			p := one()
			kind, target = "latency", p.Name
			inject = func() (func(), error) {
				return func() { heal(p) }, toxic(p, "lat", "latency", "downstream", `{"latency":300,"jitter":200}`)
			}
		case 1:
			p := one()
			kind, target = "timeout", p.Name
			inject = func() (func(), error) { // the data stops and the connection closes after 1.5 s
				return func() { heal(p) }, toxic(p, "to", "timeout", "upstream", `{"timeout":1500}`)
			}
		case 2:
			p := one()
			kind, target = "reset", p.Name
			inject = func() (func(), error) {
				return func() { heal(p) }, toxic(p, "rst", "reset_peer", "upstream", `{"timeout":50}`)
			}
		case 3:
			p := one()
			kind, target = "half-open", p.Name
			inject = func() (func(), error) { // an answer cut after a few hundred bytes
				return func() { heal(p) }, toxic(p, "lim", "limit_data", "downstream", fmt.Sprintf(`{"bytes":%d}`, 100+n.rng.IntN(2000)))
			}
		case 4:
			p := one()
			kind, target = "slicer", p.Name
			inject = func() (func(), error) {
				return func() { heal(p) }, toxic(p, "sl", "slicer", "downstream", `{"average_size":64,"size_variation":32,"delay":2000}`)
			}
		case 5:
			kind, target = "partition", r.Name
			inject = func() (func(), error) { // blackholed both ways, to MinIO and OpenFGA
				return both(func(p *toxiproxy.Proxy) error {
					if err := toxic(p, "bhu", "timeout", "upstream", `{"timeout":0}`); err != nil {
						return err
					}
					return toxic(p, "bhd", "timeout", "downstream", `{"timeout":0}`)
				})
			}
		default:
			kind, target = "kill", r.Name
			inject = func() (func(), error) {
				r.Kill(syscall.SIGKILL)
				return func() {
					if err := r.Start(); err != nil {
						n.Logf("restart %s: %v", r.Name, err)
						return
					}
					if err := r.WaitReady(context.Background(), time.Minute); err != nil {
						n.Logf("restart %s: %v", r.Name, err)
					}
				}, nil
			}
		}
		n.do(ctx, kind, target, func() (func(), error) {
			undo, err := inject()
			if err == nil {
				sleep(ctx, hold)
			}
			return undo, err
		})
	}
}

func (n *Nemesis) do(_ context.Context, kind, target string, f func() (func(), error)) {
	ft := Fault{Kind: kind, Target: target, Start: time.Since(n.start)}
	undo, err := f()
	if undo != nil {
		undo()
	}
	ft.End = time.Since(n.start)
	if err != nil {
		ft.Err = err.Error()
		n.Logf("fault %s on %s: %v", kind, target, err)
	}
	n.mu.Lock()
	n.faults = append(n.faults, ft)
	n.mu.Unlock()
}

func sleep(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}
