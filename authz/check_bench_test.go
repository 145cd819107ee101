package authz_test

import (
	"context"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/lancecat/lancecat/authz"
)

// BenchmarkCheck measures what authorization adds to a request: one Check against the real
// OpenFGA (memory datastore, loopback) versus the Disabled authorizer, reported as p50/p99.
//
//	scripts/with-services.sh go test -run '^$' -bench BenchmarkCheck ./authz
func BenchmarkCheck(b *testing.B) {
	ctx := context.Background()
	b.Run("disabled", func(b *testing.B) {
		e := estate{tb: authz.TableObject([]string{"a", "b", "t"})}
		benchChecks(b, authz.Disabled{}, authz.Anonymous, authz.TableQuery, e.tb, true)
	})

	f := newFGA(b)
	e := seedEstate(b, f)
	member, stranger := authz.User("member"), authz.User("stranger")
	if err := f.Grant(ctx, member.Subject(), "member", e.project); err != nil {
		b.Fatal(err)
	}
	b.Run("openfga/owner-direct", func(b *testing.B) {
		owner := authz.User("table-owner")
		if err := f.Grant(ctx, owner.Subject(), "owner", e.tb); err != nil {
			b.Fatal(err)
		}
		benchChecks(b, f, owner, authz.TableDrop, e.tb, true)
	})
	// A project member reads a table two namespaces deep: the longest inheritance path.
	b.Run("openfga/reader-inherited-from-project", func(b *testing.B) {
		benchChecks(b, f, member, authz.TableQuery, e.tb, true)
	})
	b.Run("openfga/denied", func(b *testing.B) {
		benchChecks(b, f, stranger, authz.TableDrop, e.tb, false)
	})
	// Upward visibility: denial has to search the namespace's whole subtree.
	b.Run("openfga/namespace-describe-denied", func(b *testing.B) {
		benchChecks(b, f, stranger, authz.NamespaceDescribe, e.nsA, false)
	})
}

func benchChecks(b *testing.B, a authz.Authorizer, p authz.Principal, action authz.Action, o authz.Object, allow bool) {
	ctx := context.Background()
	lat := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for b.Loop() {
		start := time.Now()
		err := a.Check(ctx, p, action, o)
		lat = append(lat, time.Since(start))
		if (err == nil) != allow {
			b.Fatalf("check %s on %s: %v", action, o, err)
		}
	}
	b.StopTimer()
	slices.Sort(lat)
	pct := func(q float64) float64 {
		return float64(lat[int(q*float64(len(lat)-1))].Nanoseconds()) / 1e3
	}
	b.ReportMetric(pct(0.50), "p50-µs")
	b.ReportMetric(pct(0.99), "p99-µs")
}

// BenchmarkCreateBookkeeping measures what authorization adds to a create, step by step, against
// the real OpenFGA: the create door's Check on the namespace, PrepareSeed (the reads, which overlap
// the catalog commit) and the Commit after it (one write), against SeedCreate done after the
// commit as before (RevokeAll's reads, then SeedCreate's read and write).
//
//	scripts/with-services.sh go test -run '^$' -bench BenchmarkCreateBookkeeping ./authz
func BenchmarkCreateBookkeeping(b *testing.B) {
	ctx := context.Background()
	f := newFGA(b)
	e := seedEstate(b, f)
	n := 0
	next := func() authz.Object {
		n++
		return authz.TableObject([]string{"a", "b", "c" + strconv.Itoa(n)})
	}
	b.Run("door-check", func(b *testing.B) {
		for b.Loop() {
			if err := f.Check(ctx, e.creator, authz.TableCreate, e.nsAB); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("prepare", func(b *testing.B) {
		for b.Loop() {
			if _, err := f.PrepareSeed(ctx, e.creator, next(), e.nsAB); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("commit", func(b *testing.B) {
		plans := make([]*authz.SeedPlan, 0, b.N)
		for range b.N {
			p, err := f.PrepareSeed(ctx, e.creator, next(), e.nsAB)
			if err != nil {
				b.Fatal(err)
			}
			plans = append(plans, p)
		}
		b.ResetTimer()
		for _, p := range plans {
			if err := p.Commit(ctx); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("revokeall-then-seed", func(b *testing.B) {
		for b.Loop() {
			o := next()
			if _, err := f.RevokeAll(ctx, o); err != nil {
				b.Fatal(err)
			}
			if err := f.SeedCreate(ctx, e.creator, o, e.nsAB); err != nil {
				b.Fatal(err)
			}
		}
	})
}
