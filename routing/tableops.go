package routing

// The operations on one table's dataset, each sent to the root the table lives in (its
// quarantine checked like every other routed request).

import (
	"context"

	"github.com/lancecat/lancecat/lance"
	"github.com/lancecat/lancecat/namespace"
)

// RestoreTable runs in the table's root.
func (r *Router) RestoreTable(ctx context.Context, t *namespace.Table, branch string, version int64) (uint64, error) {
	n, err := r.ofTable(ctx, t)
	if err != nil {
		return 0, err
	}
	return n.RestoreTable(ctx, t, branch, version)
}

// TableStats runs in the table's root.
func (r *Router) TableStats(ctx context.Context, t *namespace.Table, branch string) (lance.TableStats, error) {
	n, err := r.ofTable(ctx, t)
	if err != nil {
		return lance.TableStats{}, err
	}
	return n.TableStats(ctx, t, branch)
}

// ListTableVersions runs in the table's root.
func (r *Router) ListTableVersions(ctx context.Context, t *namespace.Table, q namespace.VersionQuery) ([]namespace.TableVersion, string, error) {
	n, err := r.ofTable(ctx, t)
	if err != nil {
		return nil, "", err
	}
	return n.ListTableVersions(ctx, t, q)
}

// DescribeTableVersion runs in the table's root.
func (r *Router) DescribeTableVersion(ctx context.Context, t *namespace.Table, branch string, version *int64) (namespace.TableVersion, error) {
	n, err := r.ofTable(ctx, t)
	if err != nil {
		return namespace.TableVersion{}, err
	}
	return n.DescribeTableVersion(ctx, t, branch, version)
}

// CreateTableVersion runs in the table's root.
func (r *Router) CreateTableVersion(ctx context.Context, t *namespace.Table, nv namespace.NewTableVersion) (namespace.TableVersion, error) {
	n, err := r.ofTable(ctx, t)
	if err != nil {
		return namespace.TableVersion{}, err
	}
	return n.CreateTableVersion(ctx, t, nv)
}

// DeleteTableVersions runs in the table's root.
func (r *Router) DeleteTableVersions(ctx context.Context, t *namespace.Table, branch string, ranges []lance.VersionRange) (int, error) {
	n, err := r.ofTable(ctx, t)
	if err != nil {
		return 0, err
	}
	return n.DeleteTableVersions(ctx, t, branch, ranges)
}

// ListTags runs in the table's root.
func (r *Router) ListTags(ctx context.Context, t *namespace.Table, token string, limit int) ([]lance.Tag, string, error) {
	n, err := r.ofTable(ctx, t)
	if err != nil {
		return nil, "", err
	}
	return n.ListTags(ctx, t, token, limit)
}

// GetTag runs in the table's root.
func (r *Router) GetTag(ctx context.Context, t *namespace.Table, name string) (lance.Tag, error) {
	n, err := r.ofTable(ctx, t)
	if err != nil {
		return lance.Tag{}, err
	}
	return n.GetTag(ctx, t, name)
}

// CreateTag runs in the table's root.
func (r *Router) CreateTag(ctx context.Context, t *namespace.Table, name string, version int64, branch string) (lance.Tag, error) {
	n, err := r.ofTable(ctx, t)
	if err != nil {
		return lance.Tag{}, err
	}
	return n.CreateTag(ctx, t, name, version, branch)
}

// UpdateTag runs in the table's root.
func (r *Router) UpdateTag(ctx context.Context, t *namespace.Table, name string, version int64, branch string) (lance.Tag, error) {
	n, err := r.ofTable(ctx, t)
	if err != nil {
		return lance.Tag{}, err
	}
	return n.UpdateTag(ctx, t, name, version, branch)
}

// DeleteTag runs in the table's root.
func (r *Router) DeleteTag(ctx context.Context, t *namespace.Table, name string) error {
	n, err := r.ofTable(ctx, t)
	if err != nil {
		return err
	}
	return n.DeleteTag(ctx, t, name)
}

// UpdateSchemaMetadata runs in the table's root.
func (r *Router) UpdateSchemaMetadata(ctx context.Context, t *namespace.Table, branch string, updates lance.MetadataUpdate) (map[string]string, error) {
	n, err := r.ofTable(ctx, t)
	if err != nil {
		return nil, err
	}
	return n.UpdateSchemaMetadata(ctx, t, branch, updates)
}

// UpdateFieldMetadata runs in the table's root.
func (r *Router) UpdateFieldMetadata(ctx context.Context, t *namespace.Table, branch string, updates []namespace.FieldMetadataUpdate) (uint64, map[string]map[string]string, error) {
	n, err := r.ofTable(ctx, t)
	if err != nil {
		return 0, nil, err
	}
	return n.UpdateFieldMetadata(ctx, t, branch, updates)
}

// DropColumns runs in the table's root.
func (r *Router) DropColumns(ctx context.Context, t *namespace.Table, branch string, paths []string) (uint64, error) {
	n, err := r.ofTable(ctx, t)
	if err != nil {
		return 0, err
	}
	return n.DropColumns(ctx, t, branch, paths)
}

// AlterColumns runs in the table's root.
func (r *Router) AlterColumns(ctx context.Context, t *namespace.Table, branch string, alts []lance.ColumnAlteration) (uint64, error) {
	n, err := r.ofTable(ctx, t)
	if err != nil {
		return 0, err
	}
	return n.AlterColumns(ctx, t, branch, alts)
}
