package maintenance

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"strings"
	"testing"
	"time"

	"gotest.tools/v3/assert"

	"github.com/lancecat/lancecat/registry"
)

// TestPurgeSummary: the last line of a printed purge says every way the run fell short of done,
// so an operator reading only it knows to run again or to look at OpenFGA.
func TestPurgeSummary(t *testing.T) {
	items := []PurgeItem{{Action: PurgePurged}, {Action: PurgeKept}, {Action: PurgeSkipped}}
	for _, tc := range []struct {
		name      string
		rep       PurgeReport
		queuedWhy string
		want      []string
	}{
		{"a run", PurgeReport{Items: items, Pending: 4}, "", []string{"1 purged, 1 kept (in use), 1 skipped, 4 not expired yet"}},
		{"a dry run", PurgeReport{DryRun: true, Items: []PurgeItem{{Action: PurgeWouldPurge}, {Action: PurgeWouldKeep}}},
			"", []string{"dry run: 1 would be purged, 1 would be kept (in use), 0 skipped, 0 not expired yet"}},
		{"cut short", PurgeReport{Truncated: true, Unreadable: []string{"k1", "k2"}}, "",
			[]string{"--limit reached, run again for the rest", "2 unreadable records left alone"}},
		{"revocations", PurgeReport{RevocationsDone: 2, RevocationsQueued: 3}, "openfga unreachable",
			[]string{"2 queued grant revocations done", "the grants of 3 purged objects are QUEUED for revocation, not revoked (openfga unreachable)",
				"revoked by the next purge that reaches OpenFGA"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := summary(tc.rep, tc.queuedWhy)
			for _, w := range tc.want {
				assert.Assert(t, strings.Contains(got, w), "%q lacks %q", got, w)
			}
		})
	}
}

// TestListAndRunTrashPurge: what `lancecat trash list|purge` print, in both forms, over a trash
// with one expired and one recoverable table.
func TestListAndRunTrashPurge(t *testing.T) {
	ctx := context.Background()
	e := newPurgeEnv(t)
	e.file(t, registry.KindTable, true, "a", "old")
	e.file(t, registry.KindTable, false, "a", "new")
	var out, errs bytes.Buffer
	o := Output{Delimiter: "$", Stdout: &out, Stderr: &errs}

	assert.NilError(t, ListTrash(ctx, e.trash, false, o))
	assert.Assert(t, strings.Contains(out.String(), "a$old") && strings.Contains(out.String(), "a$new") && strings.Contains(out.String(), "expired"), out.String())
	out.Reset()
	o.JSON = true
	assert.NilError(t, ListTrash(ctx, e.trash, true, o))
	var listed []map[string]any
	assert.NilError(t, json.Unmarshal(out.Bytes(), &listed), out.String())
	assert.Equal(t, len(listed), 1)
	assert.Equal(t, listed[0]["expired"], true)
	_, hasUnknown := listed[0]["Unknown"]
	assert.Assert(t, !hasUnknown, "a record's kept fields are not listed as a field: %v", listed[0])

	out.Reset()
	o.JSON = false
	logger := slog.New(slog.DiscardHandler)
	assert.NilError(t, RunTrashPurge(ctx, e.trash, logger, PurgeOptions{DryRun: true, Now: e.now}, o))
	assert.Assert(t, strings.Contains(out.String(), "would_purge") && strings.Contains(out.String(), "dry run: 1 would be purged"), out.String())
	out.Reset()
	o.JSON = true
	assert.NilError(t, RunTrashPurge(ctx, e.trash, logger, PurgeOptions{Now: e.now.Add(time.Second)}, o))
	var rep PurgeReport
	assert.NilError(t, json.Unmarshal(out.Bytes(), &rep), out.String())
	assert.Equal(t, rep.Count(PurgePurged), 1)
	assert.Equal(t, rep.Pending, 1)
	assert.Equal(t, rep.Items[0].Grants, "", "authorization is off: no grants to revoke")
	assert.Equal(t, errs.String(), "")
}
