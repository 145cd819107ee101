// Command consumertest is a service that uses the lancecat Go client as any other service would:
// it imports github.com/lancecat/lancecat/client and nothing of the server. It lives in a module
// of its own so that building it proves the client builds without the server's dependencies
// (the client module's TestConsumerModule builds it and lists its dependencies).
//
// Run against a catalog: go run . -url http://127.0.0.1:2333 [-key KEY]
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log"
	"os"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/lancecat/lancecat/client"
	"github.com/lancecat/lancecat/client/nsclient"
)

func main() {
	url := flag.String("url", "http://127.0.0.1:2333", "the catalog's base URL")
	key := flag.String("key", os.Getenv("LANCECAT_API_KEY"), "an API key (none: an open catalog)")
	flag.Parse()
	opts := []client.Option{client.WithRetries(5, 100*time.Millisecond), client.WithUserAgent("consumertest/1")}
	if *key != "" {
		opts = append(opts, client.WithAPIKey(*key))
	}
	c, err := client.New(*url, opts...)
	if err != nil {
		log.Fatal(err)
	}
	if err := run(context.Background(), c); err != nil {
		log.Fatal(err)
	}
}

func run(ctx context.Context, c *client.Client) error {
	ns := []string{"consumer"}
	if err := c.CreateNamespace(ctx, ns, nil); err != nil && !errors.Is(err, client.ErrNamespaceAlreadyExists) {
		return err
	}
	table := []string{"consumer", "events"}
	schema := arrow.NewSchema([]arrow.Field{{Name: "id", Type: arrow.PrimitiveTypes.Int64}}, nil)
	b := array.NewRecordBuilder(memory.DefaultAllocator, schema)
	defer b.Release()
	b.Field(0).(*array.Int64Builder).AppendValues([]int64{1, 2, 3}, nil)
	rec := b.NewRecordBatch()
	defer rec.Release()
	rr, err := array.NewRecordReader(schema, []arrow.RecordBatch{rec})
	if err != nil {
		return err
	}
	defer rr.Release()
	if _, err := c.CreateTable(ctx, table, rr, client.Overwrite); err != nil {
		return err
	}
	res, err := c.Query(ctx, table, nsclient.QueryTableRequest{K: 10})
	if err != nil {
		return err
	}
	defer res.Release()
	var n int64
	for res.Next() {
		n += res.RecordBatch().NumRows()
	}
	if err := res.Err(); err != nil {
		return err
	}
	fmt.Println("rows:", n)
	return nil
}
