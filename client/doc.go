// Package client is the Go client of a lancecat catalog: the Lance Namespace REST spec and
// lancecat's control plane (projects, warehouses, grants), for services that read and write
// tables without embedding the server.
//
// It is a module of its own, github.com/lancecat/lancecat/client, versioned apart from the
// server: it depends on the generated typed clients (its packages nsclient and controlclient),
// oapi-codegen's runtime, arrow-go and golang.org/x/oauth2, and on none of the server's
// dependencies (no Echo, MinIO, OpenFGA, browser driver or code generator; a test in the module
// builds a consumer and checks `go list -deps`).
//
//	go get github.com/lancecat/lancecat/client
//
// # Connecting
//
// New takes the catalog's base URL and functional options:
//
//	c, err := client.New("https://catalog.internal:2333",
//		client.WithAPIKey(os.Getenv("LANCECAT_API_KEY")), // or WithBearerToken, WithOAuth2, WithClientCredentials
//		client.WithRetries(4, 200*time.Millisecond),
//		client.WithTLSConfig(&tls.Config{RootCAs: pool}),
//	)
//
// Authentication is one of: WithAPIKey (an `x-api-key` lancecat issued: `lancecat apikey create`),
// WithBearerToken (a fixed OIDC token), WithOAuth2 (any oauth2.TokenSource; tokens are cached and
// renewed when they expire) or WithClientCredentials (the OAuth2 client-credentials grant against
// your identity provider's token URL). WithHeaders, WithUserAgent, WithTransport (instrumentation,
// proxies) and WithHTTPClient (timeouts) shape the requests; WithDelimiter must match the
// server's `--delimiter` when it is not "$".
//
// # Retries
//
// WithRetries sends a request again only when the server did not act on it: an answer 503
// (ServiceUnavailable; the spec says to wait and retry) or 429 (Throttling), honouring
// Retry-After, and a connection that could not be made. A connection lost after the request was
// sent is retried for idempotent requests only: GET, PUT, DELETE, and the spec's reads (describe,
// list, exists, count, query), which the helpers mark with Idempotent — a write is never sent
// twice on a guess. Streamed bodies (CreateTable, Insert, MergeInsert) are replayed from memory
// up to RetryBufferSize; a larger one is sent once. The context bounds all of it.
//
// # Objects and data
//
// Ids are the parts of a namespace or table name from the root down: []string{"prod"} is a
// namespace, []string{"prod", "items"} a table in it, nil the root namespace.
//
//	err = c.CreateNamespace(ctx, []string{"prod"}, map[string]string{"team": "search"})
//	_, err = c.CreateTable(ctx, []string{"prod", "items"}, reader, client.Create) // any array.RecordReader
//	_, err = c.Insert(ctx, []string{"prod", "items"}, more, client.Append)
//	n, err := c.CountRows(ctx, []string{"prod", "items"}, "price > 10")
//
//	filter := "price > 10"
//	rr, err := c.Query(ctx, []string{"prod", "items"}, nsclient.QueryTableRequest{K: 100, Filter: &filter})
//	if err != nil { … }
//	defer rr.Release()
//	for rr.Next() {
//		batch := rr.RecordBatch() // valid until the next Next
//		…
//	}
//	if err := rr.Err(); err != nil { … } // the result was cut short: never a silently shorter one
//
// Query, Insert, MergeInsert and CreateTable stream Arrow IPC: a result is decoded batch by batch
// as it arrives, and a write's body is encoded from the reader while it is sent, so neither is
// held whole in memory. Listings come as iterators that page (Namespaces, Tables, Versions,
// Indices, Projects, Warehouses) and as List… functions that read every page. Indices, versions
// (Restore), tags, table registration and the control plane (CreateProject, CreateWarehouse,
// GrantAccess, RevokeAccess, ListAccess) have helpers too.
//
// # Errors
//
// A failed answer is a *Problem: the HTTP status, the spec's error code (Code) and the server's
// message. Every code has a sentinel that errors.Is matches, however the error was wrapped:
//
//	_, err := c.DescribeTable(ctx, []string{"prod", "missing"})
//	switch {
//	case errors.Is(err, client.ErrTableNotFound): …
//	case errors.Is(err, client.ErrPermissionDenied): …
//	}
//	var p *client.Problem
//	if errors.As(err, &p) { log.Print(p.Status, p.Code, p.Message, p.RequestID) }
//
// # The raw typed calls
//
// Client.Spec and Client.Control are the typed clients generated from the specs (every
// operation, every field), configured with the same options; pass their answers to Check:
//
//	resp, err := c.Spec.ListTableBranchesWithResponse(ctx, c.ID("prod", "items"), nil)
//	if err := client.Check(resp, err); err != nil { … }
package client
