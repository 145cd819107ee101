package table

// Table operations served through the table layer (lance/): restore, stats, tags, schema
// evolution and version deletion. Each works on the dataset at the table's location; lance's
// sentinel errors become the spec's codes here, so the handlers never see them.

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"

	"github.com/lancecat/lancecat/catalog"
	nserr "github.com/lancecat/lancecat/errors"
	"github.com/lancecat/lancecat/lance"
)

// dataset is the table's dataset on branch ("" or "main": the main branch).
func (h *Table) dataset(branch string) (*lance.Dataset, error) {
	return OnBranch(h.root.Dataset(h.t), h.t, branch)
}

// OnBranch is the dataset of branch of ds, table t's dataset ("" or "main": ds itself).
func OnBranch(ds *lance.Dataset, t *catalog.Entry, branch string) (*lance.Dataset, error) {
	if branch == "" || branch == "main" {
		return ds, nil
	}
	b, err := ds.Branch(branch)
	if err != nil {
		return nil, Err(t, err)
	}
	return b, nil
}

// Err adds table t to an error of the table layer. The code is the errors table's
// (lance's sentinels map to spec codes there, not here); what this adds is the client's message:
// lance's own messages (a lance.Error, a typed error) pass as they are, and a bare sentinel
// (a version or dataset that is not there, a lost race) says which table it is about.
func Err(t *catalog.Entry, err error) error {
	var typed *nserr.Error
	var described *lance.Error
	switch {
	case err == nil:
		return nil
	case errors.As(err, &typed), errors.As(err, &described):
		return err
	case errors.Is(err, lance.ErrDatasetNotFound):
		return nserr.Describef(err, "table %s has no version yet: it is declared, and no client has written it", quoteID(t.ID))
	case errors.Is(err, lance.ErrInvalidRef):
		return nserr.Describef(err, "%v", err)
	case nserr.Coded(err):
		return nserr.Describef(err, "table %s: %v", quoteID(t.ID), err)
	}
	return fmt.Errorf("table %s: %w", quoteID(t.ID), err)
}

// Restore commits a copy of version as the newest version of t and returns its number.
func (h *Table) Restore(ctx context.Context, branch string, version int64) (uint64, error) {
	t := h.t
	if version <= 0 {
		return 0, nserr.InvalidInputf("version %d is not a table version", version)
	}
	ds, err := h.branchDataset(ctx, branch)
	if err != nil {
		return 0, err
	}
	ver, err := ds.RestoreVersion(ctx, uint64(version))
	if err != nil {
		return 0, Err(t, err)
	}
	return ver.Number(), nil
}

// Stats are the statistics of t's latest version, from its manifest alone.
func (h *Table) Stats(ctx context.Context, branch string) (lance.TableStats, error) {
	t := h.t
	ds, err := h.branchDataset(ctx, branch)
	if err != nil {
		return lance.TableStats{}, err
	}
	ver, err := h.latestOf(ctx, ds, branch)
	if err != nil {
		return lance.TableStats{}, Err(t, err)
	}
	st, err := ver.Stats()
	return st, Err(t, err)
}

// ListTags lists t's tags by name (after token, at most limit of them when limit > 0).
func (h *Table) ListTags(ctx context.Context, token string, limit int) ([]lance.Tag, string, error) {
	t := h.t
	tags, err := h.root.Dataset(t).ListTags(ctx)
	if err != nil {
		return nil, "", Err(t, err)
	}
	out, next := pageByName(tags, func(tag lance.Tag) string { return tag.Name }, token, limit)
	return out, next, nil
}

// pageByName is the page of items (one per name, the last of a name kept) after token, at most
// limit of them when limit > 0, in name order, and the token of the next page.
func pageByName[T any](items []T, name func(T) string, token string, limit int) ([]T, string) {
	byName := make(map[string]T, len(items))
	for _, it := range items {
		byName[name(it)] = it
	}
	page := catalog.PageOf(slices.Sorted(maps.Keys(byName)), token, limit)
	out := make([]T, len(page.Names))
	for i, n := range page.Names {
		out[i] = byName[n]
	}
	return out, page.NextToken
}

// GetTag reads one tag of t.
func (h *Table) GetTag(ctx context.Context, name string) (lance.Tag, error) {
	t := h.t
	tag, err := h.root.Dataset(t).GetTag(ctx, name)
	return tag, Err(t, err)
}

// CreateTag points a new tag at version of branch; TableTagAlreadyExists if it exists.
func (h *Table) CreateTag(ctx context.Context, name string, version int64, branch string) (lance.Tag, error) {
	t := h.t
	if version <= 0 {
		return lance.Tag{}, nserr.InvalidInputf("version %d is not a table version", version)
	}
	tag, err := h.root.Dataset(t).CreateTag(ctx, name, uint64(version), branch)
	return tag, Err(t, err)
}

// UpdateTag moves an existing tag to version of branch.
func (h *Table) UpdateTag(ctx context.Context, name string, version int64, branch string) (lance.Tag, error) {
	t := h.t
	if version <= 0 {
		return lance.Tag{}, nserr.InvalidInputf("version %d is not a table version", version)
	}
	tag, err := h.root.Dataset(t).UpdateTag(ctx, name, uint64(version), branch)
	return tag, Err(t, err)
}

// DeleteTag removes a tag of t (the version stays).
func (h *Table) DeleteTag(ctx context.Context, name string) error {
	t := h.t
	return Err(t, h.root.Dataset(t).DeleteTag(ctx, name))
}

// UpdateSchemaMetadata merges updates into t's schema metadata (nil deletes a key) and returns
// the metadata the new version holds.
func (h *Table) UpdateSchemaMetadata(ctx context.Context, branch string, updates lance.MetadataUpdate) (map[string]string, error) {
	t := h.t
	ds, err := h.branchDataset(ctx, branch)
	if err != nil {
		return nil, err
	}
	if updates == nil {
		updates = lance.MetadataUpdate{}
	}
	ver, err := ds.UpdateSchemaMetadata(ctx, updates)
	if err != nil {
		return nil, Err(t, err)
	}
	out := map[string]string{}
	for k, v := range ver.Manifest().GetSchemaMetadata() {
		out[k] = string(v)
	}
	return out, nil
}

// UpdateFieldMetadata applies updates in one commit and returns the new version with the
// resulting metadata of each updated field, keyed by path.
func (h *Table) UpdateFieldMetadata(ctx context.Context, branch string, updates []catalog.FieldMetadataUpdate) (uint64, map[string]map[string]string, error) {
	t := h.t
	if len(updates) == 0 {
		return 0, nil, nserr.InvalidInputf("updates must name at least one field")
	}
	ds, err := h.branchDataset(ctx, branch)
	if err != nil {
		return 0, nil, err
	}
	op := &lance.UpdateConfig{FieldMetadata: map[string]lance.MetadataUpdate{}}
	var head *lance.Version
	for _, u := range updates {
		if u.Path == "" {
			return 0, nil, nserr.InvalidInputf("a field metadata update needs a path")
		}
		if _, dup := op.FieldMetadata[u.Path]; dup {
			return 0, nil, nserr.InvalidInputf("field %q is updated twice", u.Path)
		}
		upd := lance.MetadataUpdate{}
		maps.Copy(upd, u.Metadata)
		if u.Replace {
			// Replace = delete every current key the new map does not set. The keys are read
			// from the head now; a key another writer adds before this commit survives.
			if head == nil {
				if head, err = ds.OpenLatest(ctx); err != nil {
					return 0, nil, Err(t, err)
				}
			}
			f, err := fieldAt(head, u.Path)
			if err != nil {
				return 0, nil, err
			}
			for k := range f.GetMetadata() {
				if v, ok := upd[k]; !ok || v == nil {
					upd[k] = nil
				}
			}
		}
		op.FieldMetadata[u.Path] = upd
	}
	ver, err := ds.Commit(ctx, op, lance.CommitOptions{})
	if err != nil {
		return 0, nil, Err(t, err)
	}
	out := map[string]map[string]string{}
	for _, u := range updates {
		f, err := fieldAt(ver, u.Path)
		if err != nil {
			return 0, nil, err
		}
		md := map[string]string{}
		for k, v := range f.GetMetadata() {
			md[k] = string(v)
		}
		out[u.Path] = md
	}
	return ver.Number(), out, nil
}

// DropColumns removes columns (dot paths) from t's schema and returns the new version.
func (h *Table) DropColumns(ctx context.Context, branch string, paths []string) (uint64, error) {
	t := h.t
	if len(paths) == 0 {
		return 0, nserr.InvalidInputf("columns must name at least one column")
	}
	ds, err := h.branchDataset(ctx, branch)
	if err != nil {
		return 0, err
	}
	ver, err := ds.DropColumns(ctx, paths...)
	if err != nil {
		return 0, Err(t, err)
	}
	return ver.Number(), nil
}

// fieldAt finds a field of ver by dot path; TableColumnNotFound if there is none.
func fieldAt(ver *lance.Version, path string) (interface{ GetMetadata() map[string][]byte }, error) {
	fields := ver.Fields()
	for _, f := range fields {
		if lance.FieldPath(fields, f.GetId()) == path {
			return f, nil
		}
	}
	return nil, nserr.TableColumnNotFoundf("column %q not found", path)
}
