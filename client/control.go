package client

import (
	"context"
	"iter"

	"github.com/lancecat/lancecat/client/controlclient"
)

// The control plane (spec/control.yaml): projects, their warehouses (a bucket each), and grants.

// Projects iterates over the projects the caller may see.
func (c *Client) Projects(ctx context.Context) iter.Seq2[controlclient.Project, error] {
	return pages(func(token *string) ([]controlclient.Project, *string, error) {
		resp, err := c.Control.ListProjectsWithResponse(ctx, &controlclient.ListProjectsParams{PageToken: token, Limit: c.limit32()})
		if err := check("list projects", resp, err); err != nil {
			return nil, nil, err
		}
		return resp.JSON200.Projects, resp.JSON200.PageToken, nil
	})
}

// ListProjects is every project the caller may see.
func (c *Client) ListProjects(ctx context.Context) ([]controlclient.Project, error) {
	return collect(c.Projects(ctx))
}

// CreateProject creates the project id (the caller becomes its admin).
func (c *Client) CreateProject(ctx context.Context, id string) (*controlclient.Project, error) {
	resp, err := c.Control.CreateProjectWithResponse(ctx, controlclient.CreateProjectRequest{Id: id})
	if err := check("create project", resp, err); err != nil {
		return nil, err
	}
	return resp.JSON200, nil
}

// DescribeProject describes the project id.
func (c *Client) DescribeProject(ctx context.Context, id string) (*controlclient.Project, error) {
	resp, err := c.Control.DescribeProjectWithResponse(ctx, id)
	if err := check("describe project", resp, err); err != nil {
		return nil, err
	}
	return resp.JSON200, nil
}

// DeleteProject deletes the project id, which must hold no warehouse.
func (c *Client) DeleteProject(ctx context.Context, id string) error {
	resp, err := c.Control.DeleteProjectWithResponse(ctx, id, nil)
	return check("delete project", resp, err)
}

// Warehouses iterates over the warehouses of project ("": of every project) the caller may see.
func (c *Client) Warehouses(ctx context.Context, project string) iter.Seq2[controlclient.Warehouse, error] {
	return pages(func(token *string) ([]controlclient.Warehouse, *string, error) {
		params := &controlclient.ListWarehousesParams{PageToken: token, Limit: c.limit32()}
		if project != "" {
			params.Project = &project
		}
		resp, err := c.Control.ListWarehousesWithResponse(ctx, params)
		if err := check("list warehouses", resp, err); err != nil {
			return nil, nil, err
		}
		return resp.JSON200.Warehouses, resp.JSON200.PageToken, nil
	})
}

// ListWarehouses is every warehouse of project ("": of every project) the caller may see.
func (c *Client) ListWarehouses(ctx context.Context, project string) ([]controlclient.Warehouse, error) {
	return collect(c.Warehouses(ctx, project))
}

// CreateWarehouse creates the warehouse id in project over bucket ("": the server names one).
func (c *Client) CreateWarehouse(ctx context.Context, project, id, bucket string) (*controlclient.Warehouse, error) {
	req := controlclient.CreateWarehouseRequest{Id: id, Project: project}
	if bucket != "" {
		req.Bucket = &bucket
	}
	resp, err := c.Control.CreateWarehouseWithResponse(ctx, req)
	if err := check("create warehouse", resp, err); err != nil {
		return nil, err
	}
	return resp.JSON200, nil
}

// DescribeWarehouse describes the warehouse id.
func (c *Client) DescribeWarehouse(ctx context.Context, id string) (*controlclient.Warehouse, error) {
	resp, err := c.Control.DescribeWarehouseWithResponse(ctx, id)
	if err := check("describe warehouse", resp, err); err != nil {
		return nil, err
	}
	return resp.JSON200, nil
}

// DeleteWarehouse deletes the warehouse id. cascade drops its namespaces and tables with it;
// otherwise it must be empty. Its bucket and data stay unless the raw call asks for purge_bucket.
func (c *Client) DeleteWarehouse(ctx context.Context, id string, cascade bool) error {
	resp, err := c.Control.DeleteWarehouseWithResponse(ctx, id, &controlclient.DeleteWarehouseParams{Cascade: &cascade})
	return check("delete warehouse", resp, err)
}

// ObjectType is what a grant is on.
type ObjectType = controlclient.AccessGrantObjectType

// The objects grants are on.
const (
	OnProject   = controlclient.AccessGrantObjectTypeProject
	OnWarehouse = controlclient.AccessGrantObjectTypeWarehouse
	OnNamespace = controlclient.AccessGrantObjectTypeNamespace
	OnTable     = controlclient.AccessGrantObjectTypeTable
)

// Grant is a relation a subject holds on an object: subject is "user:<id>", "team:<id>#member",
// "role:<id>#assignee" or "user:*"; relation is owner, writer, reader, validator, maintainer,
// manage_grants or pass_grants (admin or member on a project).
type Grant struct {
	Subject  string
	Relation string
}

// objectID is a grant's object id: a project's or warehouse's as given, a namespace's or table's
// parts joined by the client's delimiter.
func (c *Client) objectID(typ ObjectType, id []string) (string, error) {
	switch typ {
	case OnNamespace:
		return c.routeID(id), c.checkID("namespace", id, 0)
	case OnTable:
		return c.ID(id...), c.checkID("table", id, 1)
	}
	return c.ID(id...), c.checkID(string(typ), id, 1)
}

// GrantAccess gives g on the object (typ, id).
func (c *Client) GrantAccess(ctx context.Context, typ ObjectType, id []string, g Grant) error {
	oid, err := c.objectID(typ, id)
	if err != nil {
		return err
	}
	resp, err := c.Control.GrantAccessWithResponse(ctx, controlclient.AccessGrant{
		ObjectType: typ, ObjectId: oid, Delimiter: &c.delimiter, Subject: g.Subject, Relation: g.Relation,
	})
	return check("grant", resp, err)
}

// RevokeAccess takes g on the object (typ, id) back.
func (c *Client) RevokeAccess(ctx context.Context, typ ObjectType, id []string, g Grant) error {
	oid, err := c.objectID(typ, id)
	if err != nil {
		return err
	}
	resp, err := c.Control.RevokeAccessWithResponse(ctx, controlclient.AccessGrant{
		ObjectType: typ, ObjectId: oid, Delimiter: &c.delimiter, Subject: g.Subject, Relation: g.Relation,
	})
	return check("revoke", resp, err)
}

// ListAccess is the grants held directly on the object (typ, id).
func (c *Client) ListAccess(ctx context.Context, typ ObjectType, id []string) ([]Grant, error) {
	oid, err := c.objectID(typ, id)
	if err != nil {
		return nil, err
	}
	t := string(typ)
	resp, err := c.Control.ListAccessWithResponse(ctx, &controlclient.ListAccessParams{ObjectType: &t, ObjectId: &oid, Delimiter: &c.delimiter})
	if err := check("list access", resp, err); err != nil {
		return nil, err
	}
	out := make([]Grant, 0, len(resp.JSON200.Grants))
	for _, g := range resp.JSON200.Grants {
		out = append(out, Grant{Subject: g.Subject, Relation: g.Relation})
	}
	return out, nil
}
