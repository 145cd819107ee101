package client

import (
	"context"
	"iter"
	"maps"
	"slices"

	"github.com/lancecat/lancecat/client/nsclient"
)

// CreateIndex builds an index on the table id as req says (req.Column and req.IndexType are
// required: e.g. "BTREE", "BITMAP", "LABEL_LIST", "FTS", "IVF_PQ"; req.Name defaults to the
// column's name with "_idx").
func (c *Client) CreateIndex(ctx context.Context, id []string, req nsclient.CreateTableIndexRequest) error {
	if err := c.checkID("table", id, 1); err != nil {
		return err
	}
	resp, err := c.Spec.CreateTableIndexWithResponse(ctx, c.routeID(id), nil, req)
	return check("create index", resp, err)
}

// Indices iterates over the indices of the table id.
func (c *Client) Indices(ctx context.Context, id []string) iter.Seq2[nsclient.IndexContent, error] {
	return pages(func(token *string) ([]nsclient.IndexContent, *string, error) {
		if err := c.checkID("table", id, 1); err != nil {
			return nil, nil, err
		}
		resp, err := c.Spec.ListTableIndicesWithResponse(Idempotent(ctx), c.routeID(id), nil, nsclient.ListTableIndicesRequest{PageToken: token, Limit: c.limit()})
		if err := check("list indices", resp, err); err != nil {
			return nil, nil, err
		}
		return resp.JSON200.Indexes, resp.JSON200.PageToken, nil
	})
}

// ListIndices is every index of the table id.
func (c *Client) ListIndices(ctx context.Context, id []string) ([]nsclient.IndexContent, error) {
	return collect(c.Indices(ctx, id))
}

// DescribeIndex is the statistics of the index name of the table id (ErrTableIndexNotFound when
// there is none).
func (c *Client) DescribeIndex(ctx context.Context, id []string, name string) (*nsclient.DescribeTableIndexStatsResponse, error) {
	if err := c.checkID("table", id, 1); err != nil {
		return nil, err
	}
	resp, err := c.Spec.DescribeTableIndexStatsWithResponse(Idempotent(ctx), c.routeID(id), name, nil, nsclient.DescribeTableIndexStatsRequest{})
	if err := check("describe index", resp, err); err != nil {
		return nil, err
	}
	return resp.JSON200, nil
}

// DropIndex drops the index name of the table id.
func (c *Client) DropIndex(ctx context.Context, id []string, name string) error {
	if err := c.checkID("table", id, 1); err != nil {
		return err
	}
	resp, err := c.Spec.DropTableIndexWithResponse(ctx, c.routeID(id), name, nil)
	return check("drop index", resp, err)
}

// Versions iterates over the versions of the table id, oldest first.
func (c *Client) Versions(ctx context.Context, id []string) iter.Seq2[nsclient.TableVersion, error] {
	return pages(func(token *string) ([]nsclient.TableVersion, *string, error) {
		if err := c.checkID("table", id, 1); err != nil {
			return nil, nil, err
		}
		resp, err := c.Spec.ListTableVersionsWithResponse(Idempotent(ctx), c.routeID(id), &nsclient.ListTableVersionsParams{PageToken: token, Limit: c.limit()})
		if err := check("list versions", resp, err); err != nil {
			return nil, nil, err
		}
		return resp.JSON200.Versions, resp.JSON200.PageToken, nil
	})
}

// ListVersions is every version of the table id, oldest first.
func (c *Client) ListVersions(ctx context.Context, id []string) ([]nsclient.TableVersion, error) {
	return collect(c.Versions(ctx, id))
}

// Restore makes version the latest of the table id again (a new version with its data).
func (c *Client) Restore(ctx context.Context, id []string, version int64) error {
	if err := c.checkID("table", id, 1); err != nil {
		return err
	}
	resp, err := c.Spec.RestoreTableWithResponse(ctx, c.routeID(id), nil, nsclient.RestoreTableRequest{Version: version})
	return check("restore", resp, err)
}

// CreateTag names version of the table id tag.
func (c *Client) CreateTag(ctx context.Context, id []string, tag string, version int64) error {
	if err := c.checkID("table", id, 1); err != nil {
		return err
	}
	resp, err := c.Spec.CreateTableTagWithResponse(ctx, c.routeID(id), nil, nsclient.CreateTableTagRequest{Tag: tag, Version: version})
	return check("create tag", resp, err)
}

// Tag is a table's tag and the version it names.
type Tag struct {
	Name    string
	Version int64
}

// ListTags is every tag of the table id, by name, all pages read.
func (c *Client) ListTags(ctx context.Context, id []string) ([]Tag, error) {
	if err := c.checkID("table", id, 1); err != nil {
		return nil, err
	}
	all := map[string]nsclient.TagContents{}
	seq := pages(func(token *string) ([]map[string]nsclient.TagContents, *string, error) {
		resp, err := c.Spec.ListTableTagsWithResponse(Idempotent(ctx), c.routeID(id), &nsclient.ListTableTagsParams{PageToken: token, Limit: c.limit()})
		if err := check("list tags", resp, err); err != nil {
			return nil, nil, err
		}
		return []map[string]nsclient.TagContents{resp.JSON200.Tags}, resp.JSON200.PageToken, nil
	})
	for page, err := range seq {
		if err != nil {
			return nil, err
		}
		maps.Copy(all, page)
	}
	out := make([]Tag, 0, len(all))
	for _, name := range slices.Sorted(maps.Keys(all)) {
		out = append(out, Tag{Name: name, Version: all[name].Version})
	}
	return out, nil
}

// DeleteTag deletes the tag of the table id (ErrTableTagNotFound when there is none).
func (c *Client) DeleteTag(ctx context.Context, id []string, tag string) error {
	if err := c.checkID("table", id, 1); err != nil {
		return err
	}
	resp, err := c.Spec.DeleteTableTagWithResponse(ctx, c.routeID(id), nil, nsclient.DeleteTableTagRequest{Tag: tag})
	return check("delete tag", resp, err)
}
