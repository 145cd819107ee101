package client

import (
	"context"
	"errors"
	"iter"

	"github.com/lancecat/lancecat/client/nsclient"
)

// routeID is id as a route's {id}: the root namespace (no parts) travels as the delimiter itself.
func (c *Client) routeID(id []string) string {
	if len(id) == 0 {
		if dotSegment(c.delimiter) {
			return rootPlaceholder // fixDotRoot spells it in the URL
		}
		return c.delimiter
	}
	return c.ID(id...)
}

// CreateNamespace creates the namespace id (its parent must exist) with properties (may be nil).
func (c *Client) CreateNamespace(ctx context.Context, id []string, properties map[string]string) error {
	if err := c.checkID("namespace", id, 1); err != nil {
		return err
	}
	req := nsclient.CreateNamespaceRequest{}
	if properties != nil {
		req.Properties = &properties
	}
	resp, err := c.Spec.CreateNamespaceWithResponse(ctx, c.routeID(id), nil, req)
	return check("create namespace", resp, err)
}

// Namespace is what DescribeNamespace answers.
type Namespace struct {
	ID         []string
	Properties map[string]string
}

// DescribeNamespace describes the namespace id (ErrNamespaceNotFound when there is none).
func (c *Client) DescribeNamespace(ctx context.Context, id []string) (*Namespace, error) {
	if err := c.checkID("namespace", id, 0); err != nil {
		return nil, err
	}
	resp, err := c.Spec.DescribeNamespaceWithResponse(Idempotent(ctx), c.routeID(id), nil, nsclient.DescribeNamespaceRequest{})
	if err := check("describe namespace", resp, err); err != nil {
		return nil, err
	}
	return &Namespace{ID: append([]string(nil), id...), Properties: deref(resp.JSON200.Properties)}, nil
}

// NamespaceExists reports whether the namespace id exists.
func (c *Client) NamespaceExists(ctx context.Context, id []string) (bool, error) {
	if err := c.checkID("namespace", id, 0); err != nil {
		return false, err
	}
	resp, err := c.Spec.NamespaceExistsWithResponse(Idempotent(ctx), c.routeID(id), nil, nsclient.NamespaceExistsRequest{})
	err = check("namespace exists", resp, err)
	if errors.Is(err, ErrNamespaceNotFound) {
		return false, nil
	}
	return err == nil, err
}

// DropBehavior is what dropping a namespace that holds objects does.
type DropBehavior string

const (
	// Restrict refuses to drop a namespace that holds tables or namespaces (ErrNamespaceNotEmpty).
	Restrict DropBehavior = "Restrict"
	// Cascade drops what the namespace holds with it.
	Cascade DropBehavior = "Cascade"
)

// DropNamespace drops the namespace id (ErrNamespaceNotFound when there is none).
func (c *Client) DropNamespace(ctx context.Context, id []string, behavior DropBehavior) error {
	if err := c.checkID("namespace", id, 1); err != nil {
		return err
	}
	req := nsclient.DropNamespaceRequest{}
	if behavior != "" {
		req.Behavior = ptr(string(behavior))
	}
	resp, err := c.Spec.DropNamespaceWithResponse(ctx, c.routeID(id), nil, req)
	return check("drop namespace", resp, err)
}

// Namespaces iterates over the names of the child namespaces of parent (nil: the root), a page
// at a time as the server pages them; an error ends the iteration.
func (c *Client) Namespaces(ctx context.Context, parent []string) iter.Seq2[string, error] {
	return pages(func(token *string) ([]string, *string, error) {
		if err := c.checkID("namespace", parent, 0); err != nil {
			return nil, nil, err
		}
		resp, err := c.Spec.ListNamespacesWithResponse(Idempotent(ctx), c.routeID(parent), &nsclient.ListNamespacesParams{PageToken: token, Limit: c.limit()})
		if err := check("list namespaces", resp, err); err != nil {
			return nil, nil, err
		}
		return resp.JSON200.Namespaces, resp.JSON200.PageToken, nil
	})
}

// ListNamespaces is every child namespace name of parent, all pages read.
func (c *Client) ListNamespaces(ctx context.Context, parent []string) ([]string, error) {
	return collect(c.Namespaces(ctx, parent))
}

// pages iterates over paged answers: page fetches the page after token (nil: the first) and
// answers its items and the next token (nil or empty: the last page).
func pages[T any](page func(token *string) ([]T, *string, error)) iter.Seq2[T, error] {
	return func(yield func(T, error) bool) {
		var token *string
		seen := map[string]bool{}
		for {
			items, next, err := page(token)
			if err != nil {
				var zero T
				yield(zero, err)
				return
			}
			for _, it := range items {
				if !yield(it, nil) {
					return
				}
			}
			if next == nil || *next == "" {
				return
			}
			// A server answering the same token again would page forever.
			if seen[*next] {
				var zero T
				yield(zero, errors.New("lancecat: the server answered a page token it had answered before"))
				return
			}
			seen[*next] = true
			token = next
		}
	}
}

func collect[T any](seq iter.Seq2[T, error]) ([]T, error) {
	out := []T{}
	for v, err := range seq {
		if err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	return out, nil
}
