package registry_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"reflect"
	"strings"
	"testing"
	"time"

	"gotest.tools/v3/assert"

	"github.com/lancecat/lancecat/registry"
	"github.com/lancecat/lancecat/storage"
)

// newer is what a newer version of lancecat wrote into a record beside the fields this version
// knows: a flag like project's deleting tombstone, and a structured field.
const newer = `"retiring": true, "retiring_since": "2026-01-02T03:04:05Z", "handoff": {"to": "w2", "steps": [1, 2]}`

// rawRecord reads the stored JSON at key as fields.
func rawRecord(t *testing.T, b storage.Bucket, key string) map[string]json.RawMessage {
	t.Helper()
	rc, _, err := b.Get(context.Background(), key)
	assert.NilError(t, err)
	defer rc.Close()
	raw, err := io.ReadAll(rc)
	assert.NilError(t, err)
	var fields map[string]json.RawMessage
	assert.NilError(t, json.Unmarshal(raw, &fields), string(raw))
	return fields
}

func putRaw(t *testing.T, b storage.Bucket, key, body string) {
	t.Helper()
	_, err := b.Put(context.Background(), key, strings.NewReader(body), int64(len(body)))
	assert.NilError(t, err)
}

// assertNewerFieldsKept: the fields of newer are in the stored record at key, with their values.
func assertNewerFieldsKept(t *testing.T, b storage.Bucket, key string) {
	t.Helper()
	fields := rawRecord(t, b, key)
	var want map[string]json.RawMessage
	assert.NilError(t, json.Unmarshal([]byte("{"+newer+"}"), &want))
	for name, v := range want {
		got, ok := fields[name]
		assert.Assert(t, ok, "the newer field %q was dropped: %v", name, fields)
		var a, w any
		assert.NilError(t, json.Unmarshal(got, &a))
		assert.NilError(t, json.Unmarshal(v, &w))
		assert.DeepEqual(t, a, w)
	}
}

// mutateAndPut runs both read-modify-write paths over the record at key: Mutate with fn, and
// Read then Put of what was read (to key2: a record moved to a new key keeps them too).
func mutateAndPut[T registry.Record](t *testing.T, s *registry.Store, key, key2 string, fn func(*T)) T {
	t.Helper()
	ctx := context.Background()
	rec, err := registry.Mutate(ctx, s, key, func(r *T) error { fn(r); return nil })
	assert.NilError(t, err)
	read, _, err := registry.Read[T](ctx, s, key)
	assert.NilError(t, err)
	assert.NilError(t, registry.Put(ctx, s, key2, read))
	return rec
}

// TestReadModifyWriteKeepsUnknownFields: every record type a version rewrites keeps the fields a
// newer version added, through Mutate and through Read then Put, so a rolling upgrade's older
// replica does not erase what a newer one wrote (issue 12 item 9). The fields it knows are
// written as it changed them.
func TestReadModifyWriteKeepsUnknownFields(t *testing.T) {
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	for _, tc := range []struct {
		name string
		body string // the stored record's own fields
		// rewrite changes a field through both paths and checks the change is what was stored
		rewrite func(t *testing.T, s *registry.Store, key, key2 string)
	}{
		{"project", `"id": "p1", "created_at": "2026-01-01T00:00:00Z", "created_by": "user:a"`,
			func(t *testing.T, s *registry.Store, key, key2 string) {
				rec := mutateAndPut(t, s, key, key2, func(r *registry.Project) { r.Protected = true })
				assert.Assert(t, rec.Protected && rec.ID == "p1")
			}},
		{"warehouse", `"id": "w1", "project": "p1", "bucket": "b", "root_uri": "file:///b", "created_at": "2026-01-01T00:00:00Z"`,
			func(t *testing.T, s *registry.Store, key, key2 string) {
				rec := mutateAndPut(t, s, key, key2, func(r *registry.Warehouse) { r.Status = registry.StatusDeactivated })
				assert.Equal(t, rec.Status, registry.StatusDeactivated)
			}},
		{"protection", `"kind": "table", "id": ["a", "t"], "protected": true, "set_by": "user:a"`,
			func(t *testing.T, s *registry.Store, key, key2 string) {
				rec := mutateAndPut(t, s, key, key2, func(r *registry.Protection) { r.ID = []string{"a", "u"} })
				assert.DeepEqual(t, rec.ID, []string{"a", "u"})
			}},
		{"trash", `"kind": "table", "id": ["a", "t"], "location": "0000_a$t", "dropped_by": "user:a", "dropped_at": "2026-01-01T00:00:00Z", "expires_at": "2026-01-02T00:00:00Z", "binding": {"top_ns": "a", "warehouse_id": "w1", "root_uri": "file:///b"}`,
			func(t *testing.T, s *registry.Store, key, key2 string) {
				rec := mutateAndPut(t, s, key, key2, func(r *registry.Trash) { r.Purging, r.PurgingSince = true, &now })
				assert.Assert(t, rec.Purging && rec.Binding != nil && rec.Binding.WarehouseID == "w1")
			}},
		{"policy", `"kind": "table", "id": ["a", "t"], "retention_days": 3, "set_by": "user:a", "updated_at": "2026-01-01T00:00:00Z"`,
			func(t *testing.T, s *registry.Store, key, key2 string) {
				seven := 7
				rec := mutateAndPut(t, s, key, key2, func(r *registry.Policy) { r.RetainVersions = &seven })
				assert.Equal(t, *rec.RetentionDays, 3, "an embedded struct's fields are the record's own, not unknown")
				assert.Equal(t, *rec.RetainVersions, 7)
				assert.Equal(t, len(rec.Unknown), 3, "%v", rec.Unknown)
			}},
		{"revocation", `"kind": "namespace", "id": ["a"], "queued_at": "2026-01-01T00:00:00Z"`,
			func(t *testing.T, s *registry.Store, key, key2 string) {
				rec := mutateAndPut(t, s, key, key2, func(r *registry.Revocation) { r.Reason = "openfga down" })
				assert.Equal(t, rec.Reason, "openfga down")
			}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := storage.NewMemory()
			s := registry.NewStore(b)
			key, key2 := "_records/"+tc.name+".json", "_records/"+tc.name+"-moved.json"
			putRaw(t, b, key, "{"+tc.body+", "+newer+"}")
			tc.rewrite(t, s, key, key2)
			assertNewerFieldsKept(t, b, key)
			assertNewerFieldsKept(t, b, key2)
		})
	}
}

// TestUnknownFieldsAreOnlyTheUnknown: the fields a version knows are never kept as unknown, in
// whatever case the stored JSON spells them (encoding/json decodes names case-insensitively),
// and a record without unknown fields reads with none.
func TestUnknownFieldsAreOnlyTheUnknown(t *testing.T) {
	ctx := context.Background()
	b := storage.NewMemory()
	s := registry.NewStore(b)
	putRaw(t, b, "p.json", `{"ID": "p1", "created_at": "2026-01-01T00:00:00Z", "created_by": "user:a", "Retiring": 1}`)
	rec, _, err := registry.Read[registry.Project](ctx, s, "p.json")
	assert.NilError(t, err)
	assert.Equal(t, rec.ID, "p1")
	assert.DeepEqual(t, rec.Unknown, map[string]json.RawMessage{"Retiring": json.RawMessage("1")})

	assert.NilError(t, registry.Put(ctx, s, "q.json", registry.Project{ID: "q1", CreatedBy: "user:a"}))
	plain, _, err := registry.Read[registry.Project](ctx, s, "q.json")
	assert.NilError(t, err)
	assert.Assert(t, plain.Unknown == nil)
	raw := rawRecord(t, b, "q.json")
	_, hasUnknown := raw["Unknown"]
	assert.Assert(t, !hasUnknown, "the kept fields are not a field of their own: %v", raw)

	// A record written with kept fields is still indented JSON ending in a newline.
	_, err = registry.Mutate(ctx, s, "p.json", func(r *registry.Project) error { r.Protected = true; return nil })
	assert.NilError(t, err)
	rc, _, err := b.Get(ctx, "p.json")
	assert.NilError(t, err)
	body, err := io.ReadAll(rc)
	assert.NilError(t, err)
	assert.NilError(t, rc.Close())
	assert.Assert(t, bytes.HasSuffix(body, []byte("}\n")) && bytes.Contains(body, []byte("\n  \"Retiring\": 1")), string(body))
}

// TestEveryRewrittenRecordKeepsUnknownFields: each record type this package defines embeds
// registry.Extra, except Binding (created once and never rewritten; see its comment). A new
// record type must be added here, and so decide.
func TestEveryRewrittenRecordKeepsUnknownFields(t *testing.T) {
	for _, rec := range []any{registry.Project{}, registry.Warehouse{}, registry.Protection{}, registry.Trash{},
		registry.Policy{}, registry.Revocation{}} {
		ty := reflect.TypeOf(rec)
		f, ok := ty.FieldByName("Extra")
		assert.Assert(t, ok && f.Anonymous && f.Type == reflect.TypeOf(registry.Extra{}), "%s does not embed registry.Extra", ty)
	}
}
