package client

import (
	"context"
	"errors"
	"iter"

	"github.com/lancecat/lancecat/client/nsclient"
)

// Table is what DescribeTable answers. Raw is the whole answer (schema, stats, storage options).
type Table struct {
	ID       []string
	Location string
	// Version is the table's latest version (0 for a declared table with no data yet).
	Version  int64
	Declared bool
	Raw      *nsclient.DescribeTableResponse
}

// DescribeTable describes the table id (ErrTableNotFound when there is none).
func (c *Client) DescribeTable(ctx context.Context, id []string) (*Table, error) {
	if err := c.checkID("table", id, 1); err != nil {
		return nil, err
	}
	resp, err := c.Spec.DescribeTableWithResponse(Idempotent(ctx), c.routeID(id), nil, nsclient.DescribeTableRequest{})
	if err := check("describe table", resp, err); err != nil {
		return nil, err
	}
	r := resp.JSON200
	return &Table{
		ID: append([]string(nil), id...), Location: deref(r.Location), Version: deref(r.Version),
		Declared: deref(r.IsOnlyDeclared), Raw: r,
	}, nil
}

// TableExists reports whether the table id exists.
func (c *Client) TableExists(ctx context.Context, id []string) (bool, error) {
	if err := c.checkID("table", id, 1); err != nil {
		return false, err
	}
	resp, err := c.Spec.TableExistsWithResponse(Idempotent(ctx), c.routeID(id), nil, nsclient.TableExistsRequest{})
	err = check("table exists", resp, err)
	if errors.Is(err, ErrTableNotFound) {
		return false, nil
	}
	return err == nil, err
}

// DeclareTable records the table id without data (its location is reserved; a first Insert
// creates it).
func (c *Client) DeclareTable(ctx context.Context, id []string) (*Table, error) {
	if err := c.checkID("table", id, 1); err != nil {
		return nil, err
	}
	resp, err := c.Spec.DeclareTableWithResponse(ctx, c.routeID(id), nil, nsclient.DeclareTableRequest{})
	if err := check("declare table", resp, err); err != nil {
		return nil, err
	}
	return &Table{ID: append([]string(nil), id...), Location: deref(resp.JSON200.Location), Declared: true}, nil
}

// DropTable drops the table id (ErrTableNotFound when there is none).
func (c *Client) DropTable(ctx context.Context, id []string) error {
	if err := c.checkID("table", id, 1); err != nil {
		return err
	}
	resp, err := c.Spec.DropTableWithResponse(ctx, c.routeID(id), nil)
	return check("drop table", resp, err)
}

// RegisterTable records an existing Lance dataset at location as the table id.
func (c *Client) RegisterTable(ctx context.Context, id []string, location string) (*Table, error) {
	if err := c.checkID("table", id, 1); err != nil {
		return nil, err
	}
	resp, err := c.Spec.RegisterTableWithResponse(ctx, c.routeID(id), nil, nsclient.RegisterTableRequest{Location: location})
	if err := check("register table", resp, err); err != nil {
		return nil, err
	}
	return &Table{ID: append([]string(nil), id...), Location: deref(resp.JSON200.Location)}, nil
}

// DeregisterTable removes the table id from the catalog and leaves its data where it is; it
// answers the location, for a RegisterTable later.
func (c *Client) DeregisterTable(ctx context.Context, id []string) (string, error) {
	if err := c.checkID("table", id, 1); err != nil {
		return "", err
	}
	resp, err := c.Spec.DeregisterTableWithResponse(ctx, c.routeID(id), nil, nsclient.DeregisterTableRequest{})
	if err := check("deregister table", resp, err); err != nil {
		return "", err
	}
	return deref(resp.JSON200.Location), nil
}

// Tables iterates over the names of the tables in namespace ns (nil: the root), a page at a time.
func (c *Client) Tables(ctx context.Context, ns []string) iter.Seq2[string, error] {
	return pages(func(token *string) ([]string, *string, error) {
		if err := c.checkID("namespace", ns, 0); err != nil {
			return nil, nil, err
		}
		resp, err := c.Spec.ListTablesWithResponse(Idempotent(ctx), c.routeID(ns), &nsclient.ListTablesParams{PageToken: token, Limit: c.limit()})
		if err := check("list tables", resp, err); err != nil {
			return nil, nil, err
		}
		return resp.JSON200.Tables, resp.JSON200.PageToken, nil
	})
}

// ListTables is every table name in namespace ns, all pages read.
func (c *Client) ListTables(ctx context.Context, ns []string) ([]string, error) {
	return collect(c.Tables(ctx, ns))
}
