package client_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"strings"

	"github.com/lancecat/lancecat/app"
	"github.com/lancecat/lancecat/client"
	"github.com/lancecat/lancecat/gen/nsclient"
)

// startCatalog runs a lancecat on a temporary local root and a free loopback port, as
// `lancecat serve` would, and returns its base URL and how to stop it.
func startCatalog() (string, func()) {
	dir, err := os.MkdirTemp("", "lancecat-client-example-")
	if err != nil {
		panic(err)
	}
	cfg := app.DefaultConfig()
	cfg.Listen = "127.0.0.1:0"
	cfg.Root = dir
	ctx, cancel := context.WithCancel(context.Background())
	ready := make(chan net.Addr, 1)
	done := make(chan error, 1)
	go func() { done <- app.Run(ctx, cfg, nil, ready) }()
	select {
	case addr := <-ready:
		return "http://" + addr.String(), func() { cancel(); <-done; os.RemoveAll(dir) }
	case err := <-done:
		panic(err)
	}
}

func must(err error) {
	if err != nil {
		panic(err)
	}
}

// Example: a namespace and a declared table, listed, described and dropped, through the typed
// client; every answer goes through client.Check.
func Example() {
	url, stop := startCatalog()
	defer stop()

	c, err := client.New(url, client.Options{Retries: 2})
	must(err)
	ctx := context.Background()

	ns, err := c.Spec.CreateNamespaceWithResponse(ctx, c.ID("prod"), nil, nsclient.CreateNamespaceRequest{})
	must(client.Check(ns, err))

	decl, err := c.Spec.DeclareTableWithResponse(ctx, c.ID("prod", "items"), nil, nsclient.DeclareTableRequest{})
	must(client.Check(decl, err))

	list, err := c.Spec.ListTablesWithResponse(ctx, c.ID("prod"), nil)
	must(client.Check(list, err))
	fmt.Println("tables in prod:", list.JSON200.Tables)

	desc, err := c.Spec.DescribeTableWithResponse(ctx, c.ID("prod", "items"), nil, nsclient.DescribeTableRequest{})
	must(client.Check(desc, err))
	fmt.Println("described:", *desc.JSON200.Namespace, *desc.JSON200.Table, "at a location of its own:", strings.Contains(*desc.JSON200.Location, "items"))

	drop, err := c.Spec.DropTableWithResponse(ctx, c.ID("prod", "items"), nil)
	must(client.Check(drop, err))

	list, err = c.Spec.ListTablesWithResponse(ctx, c.ID("prod"), nil)
	must(client.Check(list, err))
	fmt.Println("tables after the drop:", list.JSON200.Tables)
	// Output:
	// tables in prod: [items]
	// described: [prod] items at a location of its own: true
	// tables after the drop: []
}

// ExampleProblem: a failed answer is a *client.Problem with the spec's error code.
func ExampleProblem() {
	url, stop := startCatalog()
	defer stop()
	c, err := client.New(url, client.Options{})
	must(err)

	resp, err := c.Spec.DescribeTableWithResponse(context.Background(), c.ID("prod", "missing"), nil, nsclient.DescribeTableRequest{})
	err = client.Check(resp, err)
	var p *client.Problem
	if errors.As(err, &p) {
		fmt.Println(p.Status, p.Code == client.CodeNamespaceNotFound) // no namespace "prod" yet
	}
	// Output:
	// 404 true
}
