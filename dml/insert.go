package dml

import (
	"context"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/lancecat/lancecat/lance"
)

// Insert appends rs (or, overwrite, replaces the table's data with it) as
// Lance's Append (or Overwrite) in the table's data storage version.
func Insert(ctx context.Context, ds *lance.Dataset, rs lance.RecordStream, overwrite bool) (Result, error) {
	c := &counting{RecordStream: rs}
	var ver *lance.Version
	var err error
	if overwrite {
		ver, err = ds.Overwrite(ctx, c, lance.WriteOptions{})
	} else {
		ver, err = ds.Append(ctx, c, lance.WriteOptions{})
	}
	if err != nil {
		return Result{}, err
	}
	return Result{Version: ver, Inserted: c.rows}, nil
}

// counting counts the rows a stream hands out.
type counting struct {
	lance.RecordStream
	rows uint64
}

func (c *counting) Next() bool {
	if !c.RecordStream.Next() {
		return false
	}
	c.rows += uint64(c.RecordStream.RecordBatch().NumRows())
	return true
}

func (c *counting) RecordBatch() arrow.RecordBatch { return c.RecordStream.RecordBatch() }
