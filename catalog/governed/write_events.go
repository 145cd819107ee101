package governed

// The table writes beyond rows and columns (versions, refs, indices, metadata, and the commits
// package mview prepares): each records its event once it committed, as the data writes do
// (data_events.go). A write that failed records nothing.

import (
	"context"
	"slices"
	"strconv"
	"strings"

	"github.com/lancecat/lancecat/catalog"
	"github.com/lancecat/lancecat/governance"
	"github.com/lancecat/lancecat/lance"
	"github.com/lancecat/lancecat/registry"
)

// note records an event of a write that made no version of its own (a tag or branch deleted).
func (t *eventedTable) note(ctx context.Context, event string, attrs map[string]string) {
	t.g.changed(ctx, event, registry.KindTable, t.id, attrs)
}

func withBranch(attrs map[string]string, branch string) map[string]string {
	if branch != "" {
		attrs["branch"] = branch
	}
	return attrs
}

// preparedEvents are the events of the writes a PreparedCommit is.
var preparedEvents = map[string]string{
	catalog.PreparedColumnsDeclared: governance.EventTableColumnsAdded,
	catalog.PreparedColumnFilled:    governance.EventTableColumnBackfilled,
	catalog.PreparedViewRefreshed:   governance.EventTableViewRefreshed,
}

func (t *eventedTable) CommitPrepared(ctx context.Context, c catalog.PreparedCommit) (*lance.Version, error) {
	v, err := t.Table.CommitPrepared(ctx, c)
	if err != nil {
		return v, err
	}
	attrs := map[string]string{}
	for k, val := range c.Attrs {
		attrs[k] = val
	}
	switch c.What {
	case catalog.PreparedColumnsDeclared:
		attrs["columns"], attrs["computed"] = strings.Join(c.Columns, ","), "true"
	case catalog.PreparedColumnFilled:
		attrs["column"] = strings.Join(c.Columns, ",")
	}
	event, ok := preparedEvents[c.What]
	if !ok {
		event = "table_" + c.What // a prepared write this layer does not name yet is still recorded
	}
	t.record(ctx, event, "", v.Number(), attrs)
	return v, nil
}

func (t *eventedTable) Restore(ctx context.Context, branch string, version int64) (uint64, error) {
	v, err := t.Table.Restore(ctx, branch, version)
	if err == nil {
		t.record(ctx, governance.EventTableRestored, branch, v, map[string]string{"restored_from": strconv.FormatInt(version, 10)})
	}
	return v, err
}

func (t *eventedTable) CreateVersion(ctx context.Context, nv catalog.NewTableVersion) (catalog.TableVersion, error) {
	tv, err := t.Table.CreateVersion(ctx, nv)
	if err == nil {
		t.record(ctx, governance.EventTableVersionCreated, nv.Branch, tv.Version, nil)
	}
	return tv, err
}

func (t *eventedTable) DeleteVersions(ctx context.Context, branch string, ranges []lance.VersionRange) (int, error) {
	n, err := t.Table.DeleteVersions(ctx, branch, ranges)
	if err == nil {
		t.note(ctx, governance.EventTableVersionsDeleted, withBranch(map[string]string{"deleted": strconv.Itoa(n)}, branch))
	}
	return n, err
}

func (t *eventedTable) CreateTag(ctx context.Context, name string, version int64, branch string) (lance.Tag, error) {
	tag, err := t.Table.CreateTag(ctx, name, version, branch)
	if err == nil {
		t.record(ctx, governance.EventTableTagCreated, branch, tag.Version, map[string]string{"tag": name})
	}
	return tag, err
}

func (t *eventedTable) UpdateTag(ctx context.Context, name string, version int64, branch string) (lance.Tag, error) {
	tag, err := t.Table.UpdateTag(ctx, name, version, branch)
	if err == nil {
		t.record(ctx, governance.EventTableTagUpdated, branch, tag.Version, map[string]string{"tag": name})
	}
	return tag, err
}

func (t *eventedTable) DeleteTag(ctx context.Context, name string) error {
	err := t.Table.DeleteTag(ctx, name)
	if err == nil {
		t.note(ctx, governance.EventTableTagDeleted, map[string]string{"tag": name})
	}
	return err
}

func (t *eventedTable) CreateBranch(ctx context.Context, name, from string, version *int64) (lance.Branch, error) {
	b, err := t.Table.CreateBranch(ctx, name, from, version)
	if err == nil {
		attrs := map[string]string{"branch": name}
		if from != "" {
			attrs["from"] = from
		}
		if version != nil {
			attrs["version"] = strconv.FormatInt(*version, 10)
		}
		t.note(ctx, governance.EventTableBranchCreated, attrs)
	}
	return b, err
}

func (t *eventedTable) DeleteBranch(ctx context.Context, name string) error {
	err := t.Table.DeleteBranch(ctx, name)
	if err == nil {
		t.note(ctx, governance.EventTableBranchDeleted, map[string]string{"branch": name})
	}
	return err
}

func (t *eventedTable) UpdateSchemaMetadata(ctx context.Context, branch string, updates lance.MetadataUpdate) (map[string]string, error) {
	md, err := t.Table.UpdateSchemaMetadata(ctx, branch, updates)
	if err == nil {
		keys := make([]string, 0, len(updates))
		for k := range updates {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		t.note(ctx, governance.EventTableSchemaMetadataUpdate, withBranch(map[string]string{"keys": strings.Join(keys, ",")}, branch))
	}
	return md, err
}

func (t *eventedTable) UpdateFieldMetadata(ctx context.Context, branch string, updates []catalog.FieldMetadataUpdate) (uint64, map[string]map[string]string, error) {
	v, fields, err := t.Table.UpdateFieldMetadata(ctx, branch, updates)
	if err == nil {
		paths := make([]string, len(updates))
		for i, u := range updates {
			paths[i] = u.Path
		}
		t.record(ctx, governance.EventTableFieldMetadataUpdate, branch, v, map[string]string{"columns": strings.Join(paths, ",")})
	}
	return v, fields, err
}

func (t *eventedTable) CreateIndex(ctx context.Context, req catalog.CreateIndexRequest) (uint64, error) {
	v, err := t.Table.CreateIndex(ctx, req)
	if err == nil {
		name := req.Name
		if name == "" {
			name = req.Column + "_idx"
		}
		t.record(ctx, governance.EventTableIndexCreated, req.Branch, v, map[string]string{"index": name, "column": req.Column, "index_type": strings.ToUpper(req.IndexType)})
	}
	return v, err
}

func (t *eventedTable) DropIndex(ctx context.Context, branch string, name string) (uint64, error) {
	v, err := t.Table.DropIndex(ctx, branch, name)
	if err == nil {
		t.record(ctx, governance.EventTableIndexDropped, branch, v, map[string]string{"index": name})
	}
	return v, err
}
