package governed

import (
	"context"
	"strconv"
	"strings"

	"github.com/lancecat/lancecat/catalog"
	"github.com/lancecat/lancecat/dml"
	"github.com/lancecat/lancecat/governance"
	"github.com/lancecat/lancecat/ident"
	"github.com/lancecat/lancecat/lance"
	"github.com/lancecat/lancecat/registry"
)

// LoadTable returns the inner catalog's handle; when the records keep events, wrapped so that
// the data writes (insert, merge, update, delete, column changes) record one each, as the
// lifecycle doors do. The event follows the commit: a write that failed recorded nothing, and
// a write that committed is never undone because its event could not be kept.
func (g *Catalog) LoadTable(ctx context.Context, id ident.ID) (catalog.Table, error) {
	t, err := g.Inner.LoadTable(ctx, id)
	if err != nil {
		return nil, err
	}
	if _, ok := g.records.(ChangeRecorder); !ok {
		return t, nil
	}
	return &eventedTable{Table: t, g: g, id: id}, nil
}

// eventedTable is a table handle whose data writes record their events; every other method is
// the inner handle's.
type eventedTable struct {
	catalog.Table
	g  *Catalog
	id ident.ID
}

func (t *eventedTable) record(ctx context.Context, event, branch string, version uint64, attrs map[string]string) {
	if attrs == nil {
		attrs = map[string]string{}
	}
	attrs["version"] = strconv.FormatUint(version, 10)
	if branch != "" {
		attrs["branch"] = branch
	}
	t.g.changed(ctx, event, registry.KindTable, t.id, attrs)
}

func counts(r catalog.WriteResult) map[string]string {
	return map[string]string{
		"inserted": strconv.FormatUint(r.Inserted, 10),
		"updated":  strconv.FormatUint(r.Updated, 10),
		"deleted":  strconv.FormatUint(r.Deleted, 10),
	}
}

func (t *eventedTable) Insert(ctx context.Context, branch string, rs lance.RecordStream, overwrite bool) (catalog.WriteResult, error) {
	r, err := t.Table.Insert(ctx, branch, rs, overwrite)
	if err == nil {
		event := governance.EventTableRowsInserted
		if overwrite {
			event = governance.EventTableOverwritten
		}
		t.record(ctx, event, branch, r.Version, counts(r))
	}
	return r, err
}

func (t *eventedTable) Merge(ctx context.Context, branch string, rs lance.RecordStream, m dml.MergeInsert) (catalog.WriteResult, error) {
	r, err := t.Table.Merge(ctx, branch, rs, m)
	if err == nil {
		t.record(ctx, governance.EventTableRowsMerged, branch, r.Version, counts(r))
	}
	return r, err
}

func (t *eventedTable) Update(ctx context.Context, branch, predicate string, set []dml.Assignment) (catalog.WriteResult, error) {
	r, err := t.Table.Update(ctx, branch, predicate, set)
	if err == nil {
		t.record(ctx, governance.EventTableRowsUpdated, branch, r.Version, counts(r))
	}
	return r, err
}

func (t *eventedTable) Delete(ctx context.Context, branch, predicate string) (catalog.WriteResult, error) {
	r, err := t.Table.Delete(ctx, branch, predicate)
	if err == nil {
		t.record(ctx, governance.EventTableRowsDeleted, branch, r.Version, counts(r))
	}
	return r, err
}

func (t *eventedTable) AddColumns(ctx context.Context, branch string, cols []dml.NewColumn) (uint64, error) {
	v, err := t.Table.AddColumns(ctx, branch, cols)
	if err == nil {
		names := make([]string, len(cols))
		for i, c := range cols {
			names[i] = c.Name
		}
		t.record(ctx, governance.EventTableColumnsAdded, branch, v, map[string]string{"columns": strings.Join(names, ",")})
	}
	return v, err
}

func (t *eventedTable) AlterColumns(ctx context.Context, branch string, alts []dml.Alteration) (uint64, error) {
	v, err := t.Table.AlterColumns(ctx, branch, alts)
	if err == nil {
		paths := make([]string, len(alts))
		for i, a := range alts {
			paths[i] = a.Path
		}
		t.record(ctx, governance.EventTableColumnsAltered, branch, v, map[string]string{"columns": strings.Join(paths, ",")})
	}
	return v, err
}

func (t *eventedTable) DropColumns(ctx context.Context, branch string, paths []string) (uint64, error) {
	v, err := t.Table.DropColumns(ctx, branch, paths)
	if err == nil {
		t.record(ctx, governance.EventTableColumnsDropped, branch, v, map[string]string{"columns": strings.Join(paths, ",")})
	}
	return v, err
}
