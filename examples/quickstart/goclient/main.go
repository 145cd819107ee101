// The quickstart's Go client: the module github.com/lancecat/lancecat/client, which other Go
// services import without the server's dependencies.
package main

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log"
	"os"
	"time"

	"github.com/lancecat/lancecat/client"
)

func main() {
	url := cmp.Or(os.Getenv("LANCECAT_URL"), "http://127.0.0.1:2333")
	opts := []client.Option{client.WithRetries(3, 200*time.Millisecond)}
	if key := os.Getenv("LANCECAT_API_KEY"); key != "" {
		opts = append(opts, client.WithAPIKey(key))
	}
	c, err := client.New(url, opts...)
	if err != nil {
		log.Fatal(err)
	}
	ctx := context.Background()

	tables, err := c.ListTables(ctx, []string{"shop"})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("tables in shop:", tables)

	n, err := c.CountRows(ctx, []string{"shop", "items"}, "id > 2")
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("rows with id > 2:", n)

	// A failed answer is a *client.Problem carrying the spec's error code; errors.Is matches it.
	_, err = c.DescribeTable(ctx, []string{"shop", "missing"})
	var p *client.Problem
	if errors.Is(err, client.ErrTableNotFound) && errors.As(err, &p) {
		fmt.Println("shop$missing: code", int(p.Code), "-", p.Message)
	}
}
