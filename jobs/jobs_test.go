package jobs

import (
	"context"
	"testing"
	"time"

	"gotest.tools/v3/assert"

	"github.com/lancecat/lancecat/authz"
	nserr "github.com/lancecat/lancecat/errors"
	"github.com/lancecat/lancecat/ident"
	"github.com/lancecat/lancecat/maintenance/tasks"
)

type fakeSource struct{ recs []tasks.Record }

func (f fakeSource) NamespaceTasks(context.Context, ident.ID) ([]tasks.Record, error) {
	return f.recs, nil
}
func (f fakeSource) TableTasks(_ context.Context, id ident.ID) ([]tasks.Record, error) {
	var out []tasks.Record
	for _, r := range f.recs {
		if ident.ID(r.Table).String() == id.String() {
			out = append(out, r)
		}
	}
	return out, nil
}

// onlyTable lets its callers list the tasks of one table.
type onlyTable struct {
	authz.Authorizer
	allowed authz.Object
}

func (onlyTable) Enabled() bool { return true }
func (a onlyTable) Check(_ context.Context, _ authz.Principal, _ authz.Action, o authz.Object) error {
	if o == a.allowed {
		return nil
	}
	return nserr.PermissionDeniedf("no")
}
func (a onlyTable) Filter(_ context.Context, _ authz.Principal, _ authz.Action, objs []authz.Object) ([]authz.Object, error) {
	var out []authz.Object
	for _, o := range objs {
		if o == a.allowed {
			out = append(out, o)
		}
	}
	return out, nil
}

func TestJobsAreSeenThroughTheirTable(t *testing.T) {
	now := time.Now()
	src := fakeSource{recs: []tasks.Record{
		{ID: "3", Kind: "backfill", Table: []string{"ns", "b"}, State: tasks.StateRunning, StartedAt: now},
		{ID: "2", Kind: "create_index", Table: []string{"ns", "a"}, State: tasks.StateSucceeded, StartedAt: now},
		{ID: "1", Kind: "maintenance", Table: []string{"ns", "a"}, State: tasks.StateAbandoned, StartedAt: now},
	}}
	ctx := context.Background()
	open := &Service{Tasks: src}
	page, next, err := open.List(ctx, authz.User("u"), "", 2)
	assert.NilError(t, err)
	assert.Equal(t, len(page), 2)
	assert.Equal(t, page[0].State, StateInProgress)
	assert.Equal(t, next, "2")
	page, next, err = open.List(ctx, authz.User("u"), next, 2)
	assert.NilError(t, err)
	assert.Equal(t, len(page), 1)
	assert.Equal(t, page[0].State, StateFailed) // abandoned
	assert.Assert(t, page[0].Failure() != "")
	assert.Equal(t, next, "")

	gov := &Service{Tasks: src, Authorizer: onlyTable{allowed: authz.TableObject(ident.ID{"ns", "a"})}}
	page, _, err = gov.List(ctx, authz.User("u"), "", 0)
	assert.NilError(t, err)
	assert.Equal(t, len(page), 2, "only the jobs of table ns$a")
	j, err := gov.Describe(ctx, authz.User("u"), "2")
	assert.NilError(t, err)
	assert.Equal(t, j.State, StateDone)
	// A job on a table the caller may not see is answered like one that does not exist.
	_, hidden := gov.Describe(ctx, authz.User("u"), "3")
	_, missing := gov.Describe(ctx, authz.User("u"), "9")
	assert.Equal(t, nserr.ProblemFor(hidden, "", "").Status, 404)
	assert.Equal(t, nserr.ProblemFor(missing, "", "").Status, 404)
	// Cancel: a finished job is left as it is; a running one cannot be stopped (406).
	_, err = open.Cancel(ctx, authz.User("u"), "2")
	assert.NilError(t, err)
	_, err = open.Cancel(ctx, authz.User("u"), "3")
	assert.Equal(t, nserr.CodeOf(err), nserr.Unsupported)
}
