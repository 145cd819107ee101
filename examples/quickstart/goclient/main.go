// The quickstart's Go client: package client sets up the typed clients generated from the spec
// (gen/nsclient) and from lancecat's control plane (gen/controlclient).
package main

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log"
	"os"

	"github.com/lancecat/lancecat/client"
	"github.com/lancecat/lancecat/gen/nsclient"
)

func main() {
	url := cmp.Or(os.Getenv("LANCECAT_URL"), "http://127.0.0.1:2333")
	c, err := client.New(url, client.Options{APIKey: os.Getenv("LANCECAT_API_KEY"), Retries: 3})
	if err != nil {
		log.Fatal(err)
	}
	ctx := context.Background()

	tables, err := c.Spec.ListTablesWithResponse(ctx, c.ID("shop"), nil)
	if err := client.Check(tables, err); err != nil {
		log.Fatal(err)
	}
	fmt.Println("tables in shop:", tables.JSON200.Tables)

	predicate := "id > 2"
	count, err := c.Spec.CountTableRowsWithResponse(ctx, c.ID("shop", "items"), nil,
		nsclient.CountTableRowsRequest{Predicate: &predicate})
	if err := client.Check(count, err); err != nil {
		log.Fatal(err)
	}
	fmt.Println("rows with id > 2:", *count.JSON200)

	// A failed answer is a *client.Problem carrying the spec's error code.
	missing, err := c.Spec.DescribeTableWithResponse(ctx, c.ID("shop", "missing"), nil, nsclient.DescribeTableRequest{})
	err = client.Check(missing, err)
	var p *client.Problem
	if errors.As(err, &p) && p.Code == client.CodeTableNotFound {
		fmt.Println("shop$missing: code", p.Code, "-", p.Message)
	}
}
