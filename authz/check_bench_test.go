package authz_test

import (
	"context"
	"slices"
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
