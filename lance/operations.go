package lance

import (
	"context"
	"maps"
	"slices"
	"strings"

	"google.golang.org/protobuf/proto"

	"github.com/lancecat/lancecat/lance/pb/filepb"
	"github.com/lancecat/lancecat/lance/pb/tablepb"
)

// MetadataUpdate is a merge into a string map: a non-nil value sets the key,
// a nil value deletes it, and keys not mentioned are kept. (Lance's UpdateMap
// can also replace a whole map; we never do.)
type MetadataUpdate map[string]*string

// Set is a convenience for building updates: Set("k", "v").
func Set(v string) *string { return &v }

func (u MetadataUpdate) toProto() *tablepb.Transaction_UpdateMap {
	if u == nil {
		return nil
	}
	m := &tablepb.Transaction_UpdateMap{}
	for _, k := range slices.Sorted(maps.Keys(u)) {
		e := &tablepb.Transaction_UpdateMapEntry{Key: k}
		if v := u[k]; v != nil {
			e.Value = proto.String(*v)
		}
		m.UpdateEntries = append(m.UpdateEntries, e)
	}
	return m
}

// applyUpdateMap applies a Lance UpdateMap to a map with values of type V.
func applyUpdateMap[V any](target map[string]V, u *tablepb.Transaction_UpdateMap, conv func(string) V) map[string]V {
	if u == nil {
		return target
	}
	if u.GetReplace() {
		target = nil
	}
	if target == nil {
		target = map[string]V{}
	}
	for _, e := range u.GetUpdateEntries() {
		if e.Value == nil {
			delete(target, e.GetKey())
		} else {
			target[e.GetKey()] = conv(e.GetValue())
		}
	}
	if len(target) == 0 {
		return nil
	}
	return target
}

// UpdateConfig is Lance's UpdateConfig operation: merges into the table
// config, the table metadata, the schema metadata and fields' metadata.
// Fields are named by their path ("a", "s.x"); FieldIDs may be used instead.
type UpdateConfig struct {
	Config         MetadataUpdate
	TableMetadata  MetadataUpdate
	SchemaMetadata MetadataUpdate
	// FieldMetadata is keyed by field path (dot-separated).
	FieldMetadata map[string]MetadataUpdate
	// FieldMetadataByID is keyed by field id.
	FieldMetadataByID map[int32]MetadataUpdate

	// resolved by build; what compatible compares.
	resolved *tablepb.Transaction_UpdateConfig
}

func (*UpdateConfig) Name() string { return "UpdateConfig" }

func (u *UpdateConfig) build(_ context.Context, c *buildContext) error {
	m := c.next.Manifest
	op := &tablepb.Transaction_UpdateConfig{
		ConfigUpdates:         u.Config.toProto(),
		TableMetadataUpdates:  u.TableMetadata.toProto(),
		SchemaMetadataUpdates: u.SchemaMetadata.toProto(),
	}
	byID := map[int32]MetadataUpdate{}
	maps.Copy(byID, u.FieldMetadataByID)
	for path, upd := range u.FieldMetadata {
		f, err := FieldByPath(m.GetFields(), path)
		if err != nil {
			return err
		}
		byID[f.GetId()] = upd
	}
	if len(byID) > 0 {
		op.FieldMetadataUpdates = map[int32]*tablepb.Transaction_UpdateMap{}
		for id, upd := range byID {
			f := FieldByID(m.GetFields(), id)
			if f == nil {
				return Errorf(ErrColumnNotFound, "lance: no field with id %d", id)
			}
			op.FieldMetadataUpdates[id] = upd.toProto()
			f.Metadata = applyUpdateMap(f.Metadata, op.FieldMetadataUpdates[id], func(s string) []byte { return []byte(s) })
		}
	}
	m.Config = applyUpdateMap(m.Config, op.ConfigUpdates, func(s string) string { return s })
	m.TableMetadata = applyUpdateMap(m.TableMetadata, op.TableMetadataUpdates, func(s string) string { return s })
	m.SchemaMetadata = applyUpdateMap(m.SchemaMetadata, op.SchemaMetadataUpdates, func(s string) []byte { return []byte(s) })
	u.resolved = op
	c.txn.Operation = &tablepb.Transaction_UpdateConfig_{UpdateConfig: op}
	return nil
}

// compatible: an UpdateConfig survives anything that does not touch the
// same keys (or replace the table). It is finer than Rust, which refuses two
// concurrent schema-metadata updates outright: we merge key by key, so two
// writers setting different keys both land.
func (u *UpdateConfig) compatible(other *tablepb.Transaction) bool {
	switch o := other.GetOperation().(type) {
	case *tablepb.Transaction_Overwrite_:
		if u.SchemaMetadata != nil || len(u.FieldMetadata) > 0 || len(u.FieldMetadataByID) > 0 {
			return false
		}
		for k := range o.Overwrite.GetConfigUpsertValues() {
			if _, ok := u.Config[k]; ok {
				return false
			}
		}
		return true
	case *tablepb.Transaction_UpdateConfig_:
		oc := o.UpdateConfig
		if touchesSame(u.Config, oc.GetConfigUpdates()) || touchesSame(u.TableMetadata, oc.GetTableMetadataUpdates()) ||
			touchesSame(u.SchemaMetadata, oc.GetSchemaMetadataUpdates()) {
			return false
		}
		// Legacy (pre-UpdateMap) form: compare the keys it names.
		for k := range oc.GetUpsertValues() {
			if _, ok := u.Config[k]; ok {
				return false
			}
		}
		for _, k := range oc.GetDeleteKeys() {
			if _, ok := u.Config[k]; ok {
				return false
			}
		}
		if len(oc.GetSchemaMetadata()) > 0 && u.SchemaMetadata != nil {
			return false
		}
		otherFields := len(oc.GetFieldMetadataUpdates()) > 0 || len(oc.GetFieldMetadata()) > 0
		if u.resolved == nil && len(u.FieldMetadata) > 0 && otherFields {
			return false // paths not resolved to ids yet: be conservative
		}
		mineByID := map[int32]*tablepb.Transaction_UpdateMap{}
		for id, upd := range u.FieldMetadataByID {
			mineByID[id] = upd.toProto()
		}
		if u.resolved != nil {
			mineByID = u.resolved.GetFieldMetadataUpdates()
		}
		{
			for id, mine := range mineByID {
				if theirs, ok := oc.GetFieldMetadataUpdates()[id]; ok && mapsOverlap(mine, theirs) {
					return false
				}
				if _, ok := oc.GetFieldMetadata()[uint32(id)]; ok {
					return false
				}
			}
		}
		return true
	case *tablepb.Transaction_UpdateMemWalState_:
		return true
	}
	return true
}

// touchesSame: does the other update set or delete a key we update (or
// replace the whole map)?
func touchesSame(mine MetadataUpdate, theirs *tablepb.Transaction_UpdateMap) bool {
	if mine == nil || theirs == nil {
		return false
	}
	if theirs.GetReplace() {
		return true
	}
	for _, e := range theirs.GetUpdateEntries() {
		if _, ok := mine[e.GetKey()]; ok {
			return true
		}
	}
	return false
}

func mapsOverlap(a, b *tablepb.Transaction_UpdateMap) bool {
	if a.GetReplace() || b.GetReplace() {
		return true
	}
	keys := map[string]bool{}
	for _, e := range a.GetUpdateEntries() {
		keys[e.GetKey()] = true
	}
	for _, e := range b.GetUpdateEntries() {
		if keys[e.GetKey()] {
			return true
		}
	}
	return false
}

// UpdateSchemaMetadata merges updates into the schema metadata (nil values
// delete keys) and commits the result as a new version.
func (d *Dataset) UpdateSchemaMetadata(ctx context.Context, updates MetadataUpdate) (*Version, error) {
	return d.Commit(ctx, &UpdateConfig{SchemaMetadata: updates}, CommitOptions{})
}

// UpdateFieldMetadata merges updates into one field's metadata.
func (d *Dataset) UpdateFieldMetadata(ctx context.Context, path string, updates MetadataUpdate) (*Version, error) {
	return d.Commit(ctx, &UpdateConfig{FieldMetadata: map[string]MetadataUpdate{path: updates}}, CommitOptions{})
}

// UpdateTableMetadata merges updates into the manifest's table_metadata.
func (d *Dataset) UpdateTableMetadata(ctx context.Context, updates MetadataUpdate) (*Version, error) {
	return d.Commit(ctx, &UpdateConfig{TableMetadata: updates}, CommitOptions{})
}

// ColumnAlteration changes one column without rewriting data.
type ColumnAlteration struct {
	// Path names the column ("a", or "s.x" for a struct child).
	Path string
	// Rename, when set, is the column's new name (the last path segment).
	Rename *string
	// Nullable, when set, is the new nullability. Lance only allows making
	// a column nullable; the reverse would need a data scan.
	Nullable *bool
}

// Project is Lance's Project operation: the schema changes without data
// being rewritten. DropColumns and AlterColumns build it.
type Project struct {
	Drop  []string
	Alter []ColumnAlteration
}

func (*Project) Name() string { return "Project" }

func (p *Project) build(_ context.Context, c *buildContext) error {
	m := c.next.Manifest
	fields := m.GetFields()
	if len(p.Drop) > 0 {
		drop := map[int32]bool{}
		for _, path := range p.Drop {
			f, err := FieldByPath(fields, path)
			if err != nil {
				return err
			}
			for _, id := range subtreeIDs(fields, f.GetId()) {
				drop[id] = true
			}
		}
		kept := fields[:0:0]
		for _, f := range fields {
			if !drop[f.GetId()] {
				kept = append(kept, f)
			}
		}
		if !slices.ContainsFunc(kept, func(f *filepb.Field) bool { return f.GetParentId() == -1 }) {
			return Errorf(ErrInvalidInput, "lance: cannot drop every column of the table")
		}
		fields = kept
	}
	for _, alt := range p.Alter {
		f, err := FieldByPath(fields, alt.Path)
		if err != nil {
			return err
		}
		if alt.Rename != nil {
			name := *alt.Rename
			if name == "" || strings.Contains(name, ".") {
				return Errorf(ErrInvalidInput, "lance: invalid column name %q", name)
			}
			for _, s := range fields {
				if s != f && s.GetParentId() == f.GetParentId() && s.GetName() == name {
					return Errorf(ErrInvalidInput, "lance: column %q already exists", name)
				}
			}
			f.Name = name
		}
		if alt.Nullable != nil {
			if f.GetNullable() && !*alt.Nullable {
				return Errorf(ErrInvalidInput, "lance: column %q is nullable and cannot be made non-nullable", alt.Path)
			}
			f.Nullable = *alt.Nullable
		}
	}
	m.Fields = fields
	live := map[int32]bool{}
	for _, f := range fields {
		live[f.GetId()] = true
	}
	// Data files left without any live field are no longer part of the
	// table; indices on a dropped field go too (system indices stay).
	for _, frag := range m.GetFragments() {
		frag.Files = slices.DeleteFunc(frag.Files, func(df *tablepb.DataFile) bool {
			return !slices.ContainsFunc(df.GetFields(), func(id int32) bool { return live[id] })
		})
	}
	if c.next.Indices != nil {
		c.next.Indices.Indices = slices.DeleteFunc(c.next.Indices.Indices, func(idx *tablepb.IndexMetadata) bool {
			if IsSystemIndex(idx) {
				return false
			}
			return slices.ContainsFunc(idx.GetFields(), func(id int32) bool { return !live[id] })
		})
	}
	schema := make([]*filepb.Field, len(fields))
	for i, f := range fields {
		schema[i] = proto.CloneOf(f)
	}
	c.txn.Operation = &tablepb.Transaction_Project_{Project: &tablepb.Transaction_Project{Schema: schema}}
	return nil
}

// compatible follows Lance's resolver: another schema change (Merge,
// Project), an Overwrite, a Restore or a MemWAL change conflicts; data
// changes do not.
func (p *Project) compatible(other *tablepb.Transaction) bool {
	switch other.GetOperation().(type) {
	case *tablepb.Transaction_Merge_, *tablepb.Transaction_Project_, *tablepb.Transaction_Overwrite_,
		*tablepb.Transaction_Restore_, *tablepb.Transaction_UpdateMemWalState_:
		return false
	}
	return true
}

// DropColumns removes columns (and their children) from the schema.
func (d *Dataset) DropColumns(ctx context.Context, paths ...string) (*Version, error) {
	return d.Commit(ctx, &Project{Drop: paths}, CommitOptions{})
}

// AlterColumns renames columns or makes them nullable.
func (d *Dataset) AlterColumns(ctx context.Context, alts ...ColumnAlteration) (*Version, error) {
	return d.Commit(ctx, &Project{Alter: alts}, CommitOptions{})
}

// Restore is Lance's Restore operation: the next version is a copy of an
// older one (schema, fragments, indices).
type Restore struct {
	Version uint64
}

func (*Restore) Name() string { return "Restore" }

func (r *Restore) build(ctx context.Context, c *buildContext) error {
	old, err := c.ds.OpenVersion(ctx, r.Version)
	if err != nil {
		return err
	}
	if err := CheckWritable(old.Manifest()); err != nil {
		return err
	}
	head := c.head.Manifest()
	m := proto.CloneOf(old.File.Manifest)
	// Fragment ids and row ids are never reused, even across a restore.
	if head.MaxFragmentId != nil {
		m.MaxFragmentId = proto.Uint32(max(head.GetMaxFragmentId(), m.GetMaxFragmentId()))
	}
	m.NextRowId = max(head.GetNextRowId(), m.GetNextRowId())
	c.next.Manifest = m
	c.next.Indices = nil
	if old.File.Indices != nil {
		c.next.Indices = proto.CloneOf(old.File.Indices)
	}
	c.txn.Operation = &tablepb.Transaction_Restore_{Restore: &tablepb.Transaction_Restore{Version: r.Version}}
	return nil
}

func (r *Restore) compatible(other *tablepb.Transaction) bool {
	_, memwal := other.GetOperation().(*tablepb.Transaction_UpdateMemWalState_)
	return !memwal
}

// RestoreVersion commits a copy of version as the newest version.
func (d *Dataset) RestoreVersion(ctx context.Context, version uint64) (*Version, error) {
	return d.Commit(ctx, &Restore{Version: version}, CommitOptions{})
}

// IsSystemIndex: Lance's internal indices (fragment reuse, MemWAL) are
// named __lance_…; they are not user indices.
func IsSystemIndex(idx *tablepb.IndexMetadata) bool {
	return strings.HasPrefix(idx.GetName(), "__lance")
}

// FieldByID finds a field of the flattened schema.
func FieldByID(fields []*filepb.Field, id int32) *filepb.Field {
	for _, f := range fields {
		if f.GetId() == id {
			return f
		}
	}
	return nil
}

// FieldByPath resolves "a.b.c" through struct (and list item) children.
func FieldByPath(fields []*filepb.Field, path string) (*filepb.Field, error) {
	parent := int32(-1)
	var found *filepb.Field
	for seg := range strings.SplitSeq(path, ".") {
		found = nil
		for _, f := range fields {
			if f.GetParentId() == parent && f.GetName() == seg {
				found = f
				break
			}
		}
		if found == nil {
			return nil, Errorf(ErrColumnNotFound, "lance: column %q not found", path)
		}
		parent = found.GetId()
	}
	return found, nil
}

// subtreeIDs is id and the ids of all its descendants.
func subtreeIDs(fields []*filepb.Field, id int32) []int32 {
	ids := []int32{id}
	in := map[int32]bool{id: true}
	for changed := true; changed; {
		changed = false
		for _, f := range fields {
			if in[f.GetParentId()] && !in[f.GetId()] {
				in[f.GetId()] = true
				ids = append(ids, f.GetId())
				changed = true
			}
		}
	}
	return ids
}

// FieldPath is the dotted path of field id ("s.x"), or "" if unknown.
func FieldPath(fields []*filepb.Field, id int32) string {
	var parts []string
	for f := FieldByID(fields, id); f != nil; f = FieldByID(fields, f.GetParentId()) {
		parts = append(parts, f.GetName())
		if f.GetParentId() == -1 {
			break
		}
	}
	slices.Reverse(parts)
	return strings.Join(parts, ".")
}
