package app

import (
	"context"
	"log/slog"
	"path/filepath"
	"testing"

	"github.com/lancecat/lancecat/authz"
	"github.com/lancecat/lancecat/client/nsclient"
	"github.com/lancecat/lancecat/handlers"
	"github.com/lancecat/lancecat/ident"
	"github.com/lancecat/lancecat/namespace"
	"github.com/lancecat/lancecat/registry"
	"github.com/lancecat/lancecat/server"
	"github.com/lancecat/lancecat/storage"
)

// BenchmarkAuthorizationOverhead measures what authorization adds to one spec request end to end:
// DescribeNamespace through HTTP (loopback, in-process server, the generated client) on a local
// catalog, with authorization off, and on with OpenFGA, where the request carries an API key
// (resolved from the control root on every request: a read and a SHA-256) and passes the
// namespace.describe door (one Check, can_get_metadata). Reports p50/p99 per request.
//
//	scripts/with-services.sh go test -run '^$' -bench BenchmarkAuthorizationOverhead -benchtime 2000x ./server
//
// With the gate, the request goes through the real spec-door gate (handlers.Server.Gate): after
// authentication, one Check of the operation's door on its object.
func BenchmarkAuthorizationOverhead(b *testing.B) {
	b.Run("off", func(b *testing.B) {
		benchDescribe(b, nil, "", false)
	})
	fga := newTestFGA(b)
	ctx := context.Background()
	nsObj := authz.NamespaceObject(ident.ID{"bench"})
	// The namespace hangs from the estate root, as a create would seed it.
	if err := fga.SeedCreate(ctx, authz.User("creator"), nsObj, authz.Catalog); err != nil {
		b.Fatal(err)
	}
	if err := fga.Grant(ctx, authz.User("rita").Subject(), "reader", nsObj); err != nil {
		b.Fatal(err)
	}
	// Identity alone: the API key is resolved, no Check is made.
	b.Run("apikey-only", func(b *testing.B) {
		benchDescribe(b, fga, authz.User("rita"), false)
	})
	b.Run("openfga/reader-direct", func(b *testing.B) {
		benchDescribe(b, fga, authz.User("rita"), true)
	})
	// An estate admin reaches the namespace through its parent edge to the estate root.
	b.Run("openfga/estate-admin-inherited", func(b *testing.B) {
		benchDescribe(b, fga, authz.User("alice"), true)
	})
}

func benchDescribe(b *testing.B, fga *authz.OpenFGA, p authz.Principal, gate bool) {
	ctx := context.Background()
	dir := b.TempDir()
	root, err := storage.NewFS(filepath.Join(dir, "catalog"))
	if err != nil {
		b.Fatal(err)
	}
	control, err := storage.NewFS(filepath.Join(dir, "control"))
	if err != nil {
		b.Fatal(err)
	}
	catalog := namespace.New(root, namespace.Options{RootURI: filepath.Join(dir, "catalog")})
	if _, err := catalog.CreateNamespace(ctx, ident.ID{"bench"}, map[string]string{"k": "v"}, "create"); err != nil {
		b.Fatal(err)
	}
	keys := authz.NewAPIKeys(registry.NewStore(control))
	hopts := handlers.Options{Catalog: catalog}
	if gate {
		hopts.Authorizer = fga
	}
	opts := server.Options{Handlers: specHandlers(hopts, nil), Logger: slog.New(slog.DiscardHandler)}
	key := ""
	if fga != nil {
		opts.Authn = &authz.Authenticator{Enabled: true, APIKeys: keys}
		if key, _, err = keys.Create(ctx, p, "bench"); err != nil {
			b.Fatal(err)
		}
	}
	client, err := nsclient.NewClientWithResponses(serveHTTP(b, opts), nsclient.WithRequestEditorFn(withAPIKey(key)))
	if err != nil {
		b.Fatal(err)
	}
	describe := func() {
		r, err := client.DescribeNamespaceWithResponse(ctx, "bench", nil, nsclient.DescribeNamespaceRequest{})
		if err != nil || r.StatusCode() != 200 {
			b.Fatalf("describe: %v %s", err, r.Body)
		}
	}
	lat := latencies(b, 20, describe) // warmed: the connection and the caches
	pct := func(q float64) float64 { return float64(lat[int(q*float64(len(lat)-1))].Nanoseconds()) / 1e3 }
	b.ReportMetric(pct(0.50), "p50-µs")
	b.ReportMetric(pct(0.99), "p99-µs")
}
