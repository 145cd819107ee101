package client_test

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"log"
	"os"
	"time"

	"github.com/apache/arrow-go/v18/arrow/array"
	"golang.org/x/oauth2/clientcredentials"

	"github.com/lancecat/lancecat/client"
	"github.com/lancecat/lancecat/client/nsclient"
)

// These examples compile with the tests but do not run here: they need a catalog, which this
// module cannot start (it does not depend on the server). The server's module runs the same
// calls against a real catalog (app/client_integration_test.go).

// A client with an API key, retries and a private CA.
func ExampleNew() {
	pool := x509.NewCertPool()
	pem, err := os.ReadFile("/etc/ssl/catalog-ca.pem")
	if err != nil {
		log.Fatal(err)
	}
	pool.AppendCertsFromPEM(pem)
	c, err := client.New("https://catalog.internal:2333",
		client.WithAPIKey(os.Getenv("LANCECAT_API_KEY")),
		client.WithRetries(4, 200*time.Millisecond),
		client.WithTLSConfig(&tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}),
		client.WithUserAgent("search-indexer/2.1"),
	)
	if err != nil {
		log.Fatal(err)
	}
	_ = c
}

// A client whose OIDC tokens come from the identity provider's client-credentials grant and are
// renewed before they expire.
func ExampleWithClientCredentials() {
	c, err := client.New("https://catalog.internal:2333", client.WithClientCredentials(clientcredentials.Config{
		ClientID:     "search-indexer",
		ClientSecret: os.Getenv("OIDC_CLIENT_SECRET"),
		TokenURL:     "https://idp.internal/oauth2/token",
		Scopes:       []string{"lancecat"},
	}))
	if err != nil {
		log.Fatal(err)
	}
	_ = c
}

// A query's result streamed batch by batch.
func ExampleClient_Query() {
	c, err := client.New("http://127.0.0.1:2333")
	if err != nil {
		log.Fatal(err)
	}
	filter := "price > 10"
	rr, err := c.Query(context.Background(), []string{"shop", "items"}, nsclient.QueryTableRequest{K: 1000, Filter: &filter})
	if err != nil {
		log.Fatal(err)
	}
	defer rr.Release()
	var rows int64
	for rr.Next() {
		rows += rr.RecordBatch().NumRows()
	}
	if err := rr.Err(); err != nil {
		log.Fatal(err) // the result was cut short
	}
	fmt.Println("rows:", rows)
}

// Rows merged on a key: matching rows updated, new ones inserted.
func ExampleClient_MergeInsert() {
	c, err := client.New("http://127.0.0.1:2333")
	if err != nil {
		log.Fatal(err)
	}
	var updates array.RecordReader // e.g. from ipc.NewReader or array.NewRecordReader
	res, err := c.MergeInsert(context.Background(), []string{"shop", "items"}, updates, client.Merge{
		On: []string{"id"}, WhenMatchedUpdateAll: true, WhenNotMatchedInsertAll: true,
	})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("updated", res.Updated, "inserted", res.Inserted, "at version", res.Version)
}

// Errors carry the spec's code; errors.Is matches each code's sentinel.
func ExampleProblem() {
	c, err := client.New("http://127.0.0.1:2333")
	if err != nil {
		log.Fatal(err)
	}
	_, err = c.DescribeTable(context.Background(), []string{"shop", "missing"})
	var p *client.Problem
	switch {
	case errors.Is(err, client.ErrTableNotFound) || errors.Is(err, client.ErrNamespaceNotFound):
		fmt.Println("no such table")
	case errors.As(err, &p):
		fmt.Println("refused:", p.Status, p.Code, p.Message)
	case err != nil:
		fmt.Println("could not ask:", err)
	}
}
