package dml

import (
	"context"
	"strings"

	"github.com/lancecat/lancecat/lance"
)

// Delete deletes the rows matching predicate as Lance's Delete: the
// predicate's columns are scanned with _rowaddr, the matching rows added
// to their fragments' deletion vectors, and fragments left without a live
// row removed. A predicate that is the literal true deletes every
// fragment without a scan, as Lance does; an empty predicate is
// InvalidInput (Lance requires one).
func Delete(ctx context.Context, ds *lance.Dataset, predicate string) (Result, error) {
	if strings.TrimSpace(predicate) == "" {
		return Result{}, invalid("delete needs a predicate (use 'true' to delete every row)")
	}
	return withRetry(ctx, func() (Result, error) { return deleteOnce(ctx, ds, predicate) })
}

func deleteOnce(ctx context.Context, ds *lance.Dataset, src string) (Result, error) {
	ver, schema, err := head(ctx, ds)
	if err != nil {
		return Result{}, err
	}
	p, err := compilePredicate(src, schema)
	if err != nil {
		return Result{}, err
	}
	op := &lance.DeleteRows{Predicate: src, Read: readFragments(ver), Rows: lance.RowDeletes{}}
	var deleted uint64
	if strings.EqualFold(strings.TrimSpace(src), "true") {
		op.DeleteAll = true
		if deleted, err = ver.CountRows(); err != nil {
			return Result{}, err
		}
	} else {
		if p, err = p.forColumns(schema); err != nil {
			return Result{}, err
		}
		s, err := ds.Scan(ctx, lance.ScanOptions{At: ver, Columns: p.cols, WithRowAddress: true})
		if err != nil {
			return Result{}, err
		}
		defer s.Release()
		for s.Next() {
			rec := s.RecordBatch()
			m, err := p.mask(ctx, rec)
			if err != nil {
				return Result{}, err
			}
			addrs := rowAddresses(rec)
			for i, hit := range m {
				if hit {
					addRow(op.Rows, addrs.Value(i))
				}
			}
		}
		if err := s.Err(); err != nil {
			return Result{}, err
		}
		deleted = op.Rows.Len()
	}
	v, err := ds.Commit(ctx, op, lance.CommitOptions{ReadVersion: ver.Number()})
	if err != nil {
		return Result{}, err
	}
	return Result{Version: v, Deleted: deleted}, nil
}
