package lance

import (
	"context"
	"maps"
	"slices"

	"google.golang.org/protobuf/proto"

	"github.com/lancecat/lancecat/lance/pb/filepb"
	"github.com/lancecat/lancecat/lance/pb/tablepb"
)

// The operations that change data: Append, Overwrite and Delete, recorded
// as the transactions Lance writes for them, so that Rust writers can
// check and rebase their own commits over ours (and we over theirs).
// Their fragments come from WriteFragments (data files already written);
// committing only publishes the manifest.

// Append is Lance's Append operation: new fragments after the existing
// ones. Fragments with id 0 get fresh ids above the dataset's
// max_fragment_id when committed (as Lance assigns them); on a dataset
// with stable row ids they also get their row ids.
type Append struct {
	Fragments []*tablepb.DataFragment
}

// NewAppend is the Append of fragments (written by WriteFragments).
func NewAppend(fragments ...*tablepb.DataFragment) *Append {
	return &Append{Fragments: fragments}
}

func (*Append) Name() string { return "Append" }

func (a *Append) build(_ context.Context, c *buildContext) error {
	m := c.next.Manifest
	if len(m.GetFields()) == 0 {
		return Errorf(ErrInvalidTableState, "lance: cannot append to a dataset without a schema")
	}
	next := nextFragmentID(m)
	added, err := newFragments(m, a.Fragments, &next, c.head.Number()+1)
	if err != nil {
		return err
	}
	m.Fragments = append(m.Fragments, added...)
	slices.SortStableFunc(m.Fragments, func(x, y *tablepb.DataFragment) int { return cmpUint(x.GetId(), y.GetId()) })
	c.txn.Operation = &tablepb.Transaction_Append_{Append: &tablepb.Transaction_Append{Fragments: cloneFragments(added)}}
	return nil
}

// compatible follows Lance's resolver: an Append survives everything but
// an Overwrite, a Restore or a MemWAL change (a concurrent schema change
// leaves our files readable: extra fields are ignored, missing ones null).
func (a *Append) compatible(other *tablepb.Transaction) bool {
	switch other.GetOperation().(type) {
	case *tablepb.Transaction_Overwrite_, *tablepb.Transaction_Restore_, *tablepb.Transaction_UpdateMemWalState_:
		return false
	}
	return true
}

// Overwrite is Lance's Overwrite operation: the next version has Schema
// and Fragments only (indices are dropped); history, table metadata and
// config stay, ConfigUpsert is merged into the config. As in Lance,
// fragment ids restart at 0 while max_fragment_id never goes down.
type Overwrite struct {
	Fragments []*tablepb.DataFragment
	// Schema is the flattened Lance schema (lancefile.LanceFields).
	Schema         []*filepb.Field
	SchemaMetadata map[string][]byte
	ConfigUpsert   map[string]string
	// DataStorageVersion is the data file format of Fragments ("2.1"
	// when empty), recorded in the manifest.
	DataStorageVersion string
}

// NewOverwrite replaces a dataset's schema and data with fragments.
func NewOverwrite(schema []*filepb.Field, schemaMetadata map[string][]byte, fragments ...*tablepb.DataFragment) *Overwrite {
	return &Overwrite{Fragments: fragments, Schema: schema, SchemaMetadata: schemaMetadata}
}

func (*Overwrite) Name() string { return "Overwrite" }

func (o *Overwrite) build(_ context.Context, c *buildContext) error {
	if len(o.Schema) == 0 {
		return Errorf(ErrInvalidInput, "lance: overwrite without a schema")
	}
	m := c.next.Manifest
	m.Fields = make([]*filepb.Field, len(o.Schema))
	for i, f := range o.Schema {
		m.Fields[i] = proto.CloneOf(f)
	}
	m.SchemaMetadata = maps.Clone(o.SchemaMetadata)
	var next uint64 // an overwrite numbers its fragments from 0
	frags, err := newFragments(m, o.Fragments, &next, c.head.Number()+1)
	if err != nil {
		return err
	}
	slices.SortStableFunc(frags, func(x, y *tablepb.DataFragment) int { return cmpUint(x.GetId(), y.GetId()) })
	m.Fragments = frags
	if len(o.ConfigUpsert) > 0 {
		if m.Config == nil {
			m.Config = map[string]string{}
		}
		maps.Copy(m.Config, o.ConfigUpsert)
	}
	// The manifest must name the version of the data files, or a Rust
	// writer would add files of another version next to them.
	version := o.DataStorageVersion
	if version == "" {
		version = "2.1"
	}
	m.DataFormat = &tablepb.Manifest_DataStorageFormat{FileFormat: "lance", Version: version}
	c.next.Indices = nil
	c.txn.Operation = &tablepb.Transaction_Overwrite_{Overwrite: &tablepb.Transaction_Overwrite{
		Fragments:          cloneFragments(frags),
		Schema:             cloneFields(o.Schema),
		SchemaMetadata:     maps.Clone(o.SchemaMetadata),
		ConfigUpsertValues: maps.Clone(o.ConfigUpsert),
	}}
	return nil
}

// compatible: an Overwrite replaces everything, so only a change of the
// same config keys (or a MemWAL change) conflicts, as in Lance.
func (o *Overwrite) compatible(other *tablepb.Transaction) bool {
	switch op := other.GetOperation().(type) {
	case *tablepb.Transaction_UpdateMemWalState_:
		return false
	case *tablepb.Transaction_Overwrite_:
		for k := range op.Overwrite.GetConfigUpsertValues() {
			if _, ok := o.ConfigUpsert[k]; ok {
				return false
			}
		}
	case *tablepb.Transaction_UpdateConfig_:
		for _, e := range op.UpdateConfig.GetConfigUpdates().GetUpdateEntries() {
			if _, ok := o.ConfigUpsert[e.GetKey()]; ok {
				return false
			}
		}
		for k := range op.UpdateConfig.GetUpsertValues() {
			if _, ok := o.ConfigUpsert[k]; ok {
				return false
			}
		}
	}
	return true
}

// Delete is Lance's Delete operation: UpdatedFragments replace the
// fragments of the same id (typically with a new deletion file, see
// MergeDeletions), DeletedFragmentIDs are removed. Predicate records what
// was deleted (informational).
type Delete struct {
	UpdatedFragments   []*tablepb.DataFragment
	DeletedFragmentIDs []uint64
	Predicate          string
}

// NewDelete builds a Delete.
func NewDelete(updated []*tablepb.DataFragment, deleted []uint64, predicate string) *Delete {
	return &Delete{UpdatedFragments: updated, DeletedFragmentIDs: deleted, Predicate: predicate}
}

func (*Delete) Name() string { return "Delete" }

func (d *Delete) build(_ context.Context, c *buildContext) error {
	m := c.next.Manifest
	have := map[uint64]bool{}
	for _, f := range m.GetFragments() {
		have[f.GetId()] = true
	}
	for _, id := range d.DeletedFragmentIDs {
		if !have[id] {
			return conflictError("Delete: fragment %d no longer exists", id)
		}
	}
	updated := map[uint64]*tablepb.DataFragment{}
	for _, f := range d.UpdatedFragments {
		if !have[f.GetId()] {
			return conflictError("Delete: fragment %d no longer exists", f.GetId())
		}
		updated[f.GetId()] = f
	}
	kept := m.Fragments[:0:0]
	for _, f := range m.GetFragments() {
		if slices.Contains(d.DeletedFragmentIDs, f.GetId()) {
			continue
		}
		if u, ok := updated[f.GetId()]; ok {
			f = proto.CloneOf(u)
		}
		kept = append(kept, f)
	}
	m.Fragments = kept
	c.txn.Operation = &tablepb.Transaction_Delete_{Delete: &tablepb.Transaction_Delete{
		UpdatedFragments:   cloneFragments(d.UpdatedFragments),
		DeletedFragmentIds: slices.Clone(d.DeletedFragmentIDs),
		Predicate:          d.Predicate,
	}}
	return nil
}

// compatible follows Lance's resolver for deletes: another change to the
// same fragments conflicts (we do not re-apply deletion vectors computed
// on an older version), as do Overwrite, Restore, Merge and MemWAL changes.
func (d *Delete) compatible(other *tablepb.Transaction) bool {
	mine := map[uint64]bool{}
	for _, f := range d.UpdatedFragments {
		mine[f.GetId()] = true
	}
	for _, id := range d.DeletedFragmentIDs {
		mine[id] = true
	}
	touches := func(frags []*tablepb.DataFragment, ids []uint64) bool {
		for _, f := range frags {
			if mine[f.GetId()] {
				return true
			}
		}
		for _, id := range ids {
			if mine[id] {
				return true
			}
		}
		return false
	}
	switch op := other.GetOperation().(type) {
	case *tablepb.Transaction_Overwrite_, *tablepb.Transaction_Restore_, *tablepb.Transaction_Merge_,
		*tablepb.Transaction_UpdateMemWalState_:
		return false
	case *tablepb.Transaction_Delete_:
		return !touches(op.Delete.GetUpdatedFragments(), op.Delete.GetDeletedFragmentIds())
	case *tablepb.Transaction_Update_:
		return !touches(op.Update.GetUpdatedFragments(), op.Update.GetRemovedFragmentIds())
	case *tablepb.Transaction_Rewrite_:
		old := slices.Clone(op.Rewrite.GetOldFragments())
		for _, g := range op.Rewrite.GetGroups() {
			old = append(old, g.GetOldFragments()...)
		}
		return !touches(old, nil)
	case *tablepb.Transaction_DataReplacement_:
		for _, r := range op.DataReplacement.GetReplacements() {
			if mine[r.GetFragmentId()] {
				return false
			}
		}
	}
	return true
}

// nextFragmentID is the id Lance gives the next new fragment:
// max_fragment_id + 1 (or above every fragment when it is not recorded).
func nextFragmentID(m *tablepb.Manifest) uint64 {
	var next uint64
	if m.MaxFragmentId != nil {
		next = uint64(m.GetMaxFragmentId()) + 1
	}
	for _, f := range m.GetFragments() {
		next = max(next, f.GetId()+1)
	}
	return next
}

// claimFragmentIDs clones frags, giving each that has no id yet (0) the
// next one from *next, in order, as Lance numbers the fragments a
// transaction adds.
func claimFragmentIDs(frags []*tablepb.DataFragment, next *uint64) []*tablepb.DataFragment {
	out := make([]*tablepb.DataFragment, len(frags))
	for i, f := range frags {
		f = proto.CloneOf(f)
		if f.GetId() == 0 {
			f.Id = *next
			*next++
		}
		out[i] = f
	}
	return out
}

// newFragments is claimFragmentIDs then assignRowIDs: the fragments an
// append, overwrite or update adds to m in the version being built.
func newFragments(m *tablepb.Manifest, frags []*tablepb.DataFragment, next *uint64, version uint64) ([]*tablepb.DataFragment, error) {
	out := claimFragmentIDs(frags, next)
	if err := assignRowIDs(m, out, version); err != nil {
		return nil, err
	}
	return out, nil
}

// assignRowIDs gives new fragments of a dataset with stable row ids their
// row id sequence (the next physical_rows ids) and their created/updated
// version sequences, as Lance does on commit.
func assignRowIDs(m *tablepb.Manifest, frags []*tablepb.DataFragment, version uint64) error {
	if m.GetReaderFeatureFlags()&FlagStableRowIDs == 0 {
		return nil
	}
	for _, f := range frags {
		if f.GetRowIdSequence() != nil {
			continue
		}
		n := f.GetPhysicalRows()
		if n == 0 && len(f.GetFiles()) > 0 {
			return Errorf(ErrInvalidInput, "lance: fragment %d has no physical_rows; cannot assign row ids", f.GetId())
		}
		seq, err := encodeRowIDRange(m.GetNextRowId(), m.GetNextRowId()+n)
		if err != nil {
			return err
		}
		f.RowIdSequence = &tablepb.DataFragment_InlineRowIds{InlineRowIds: seq}
		m.NextRowId += n
		if n > 0 {
			vs, err := encodeVersionRun(n, version)
			if err != nil {
				return err
			}
			f.LastUpdatedAtVersionSequence = &tablepb.DataFragment_InlineLastUpdatedAtVersions{InlineLastUpdatedAtVersions: vs}
			f.CreatedAtVersionSequence = &tablepb.DataFragment_InlineCreatedAtVersions{InlineCreatedAtVersions: slices.Clone(vs)}
		}
	}
	return nil
}

func cloneFragments(frags []*tablepb.DataFragment) []*tablepb.DataFragment {
	out := make([]*tablepb.DataFragment, len(frags))
	for i, f := range frags {
		out[i] = proto.CloneOf(f)
	}
	return out
}

func cloneFields(fields []*filepb.Field) []*filepb.Field {
	out := make([]*filepb.Field, len(fields))
	for i, f := range fields {
		out[i] = proto.CloneOf(f)
	}
	return out
}

func cmpUint(a, b uint64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}
