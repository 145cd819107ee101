package main

import (
	"bytes"
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"gotest.tools/v3/assert"

	"github.com/lancecat/lancecat/app"
	"github.com/lancecat/lancecat/maintenance"
	"github.com/lancecat/lancecat/registry"
)

func TestTrashCommand(t *testing.T) {
	root := filepath.Join(t.TempDir(), "data")
	run := func(args ...string) (int, string, string) {
		var out, errb bytes.Buffer
		full := append([]string{"trash", args[0], "--root", root}, args[1:]...)
		code := run(full, &out, &errb)
		return code, out.String(), errb.String()
	}
	cfg := app.DefaultConfig()
	cfg.Root = root
	ctx := context.Background()
	bucket, _, err := app.OpenControlRoot(ctx, cfg)
	assert.NilError(t, err)
	store := registry.NewStore(bucket)
	now := time.Now().UTC()
	key := func(id ...string) string { return registry.ObjectKey(registry.TrashPrefix, registry.KindTable, id) }
	for _, rec := range []registry.Trash{
		{Kind: registry.KindTable, ID: []string{"a", "old"}, Location: "0000_a$old", DroppedAt: now.Add(-48 * time.Hour), ExpiresAt: now.Add(-time.Hour), Placed: true},
		{Kind: registry.KindTable, ID: []string{"a", "new"}, Location: "0000_a$new", DroppedAt: now, ExpiresAt: now.Add(24 * time.Hour), Placed: true},
	} {
		assert.NilError(t, registry.Put(ctx, store, key(rec.ID...), rec))
	}

	code, out, errs := run("list")
	assert.Equal(t, code, 0, errs)
	assert.Assert(t, strings.Contains(out, "a$old") && strings.Contains(out, "a$new") && strings.Contains(out, "expired"), out)
	code, out, errs = run("list", "--expired", "--json")
	assert.Equal(t, code, 0, errs)
	var listed []map[string]any
	assert.NilError(t, json.Unmarshal([]byte(out), &listed), out)
	assert.Equal(t, len(listed), 1)
	assert.Equal(t, listed[0]["expired"], true)

	code, out, errs = run("purge", "--dry-run")
	assert.Equal(t, code, 0, errs)
	assert.Assert(t, strings.Contains(out, "would_purge") && strings.Contains(out, "dry run: 1 would be purged"), out)
	_, _, err = registry.Read[registry.Trash](ctx, store, key("a", "old"))
	assert.NilError(t, err, "a dry run keeps the record")

	code, out, errs = run("purge", "--json")
	assert.Equal(t, code, 0, errs)
	var rep maintenance.PurgeReport
	assert.NilError(t, json.Unmarshal([]byte(out), &rep), out)
	assert.Equal(t, rep.Count(maintenance.PurgePurged), 1)
	assert.Equal(t, rep.Pending, 1)
	_, _, err = registry.Read[registry.Trash](ctx, store, key("a", "old"))
	assert.ErrorIs(t, err, registry.ErrNotFound)

	for _, tc := range []struct {
		name string
		args []string
		code int
	}{
		{"unknown subcommand", []string{"empty"}, 2},
		{"stray argument", []string{"purge", "now"}, 2},
		{"negative limit", []string{"purge", "--limit", "-1"}, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, _, _ := run(tc.args...)
			assert.Equal(t, code, tc.code)
		})
	}
}
