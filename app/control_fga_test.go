package app

import (
	"context"
	"strings"
	"testing"

	"gotest.tools/v3/assert"

	"github.com/lancecat/lancecat/authz"
	"github.com/lancecat/lancecat/client/controlclient"
	nserr "github.com/lancecat/lancecat/errors"
)

// newFGAControlEnv is a control env authorized by the test OpenFGA (a fresh store); audit lines go
// to the returned buffer. alice is an estate admin.
func newFGAControlEnv(t *testing.T) (*controlEnv, *syncBuffer) {
	t.Helper()
	audit := &syncBuffer{}
	return newControlEnv(t, newAuditedTestFGA(t, audit)), audit
}

// TestControlAuthorization runs the control doors against a real OpenFGA: estate admins mint
// projects, project admins own their warehouses, readers read and cannot destroy, and an outsider
// gets byte-identical answers for "missing" and "not yours".
func TestControlAuthorization(t *testing.T) {
	e, audit := newFGAControlEnv(t)
	ctx := context.Background()
	alice := e.as(t, authz.User("alice")) // estate admin
	bob := e.as(t, authz.User("bob"))     // outsider
	carol := e.as(t, authz.User("carol")) // reader of w

	// Estate admins mint tenants; nobody else does.
	r, err := bob.CreateProjectWithResponse(ctx, controlclient.CreateProjectRequest{Id: "p"})
	assert.NilError(t, err)
	expect(t, r.StatusCode(), r.Body, 403, nserr.PermissionDenied)
	r, err = alice.CreateProjectWithResponse(ctx, controlclient.CreateProjectRequest{Id: "p"})
	assert.NilError(t, err)
	expect(t, r.StatusCode(), r.Body, 200, 0)
	assert.Equal(t, *r.JSON200.CreatedBy, "user:alice")

	// A create door names the fix for everyone, before authorization.
	w, err := bob.CreateWarehouseWithResponse(ctx, controlclient.CreateWarehouseRequest{Id: "w", Project: "nope"})
	assert.NilError(t, err)
	expect(t, w.StatusCode(), w.Body, 404, nserr.NamespaceNotFound, "POST /v1/projects")
	w, err = bob.CreateWarehouseWithResponse(ctx, controlclient.CreateWarehouseRequest{Id: "w", Project: "p"})
	assert.NilError(t, err)
	expect(t, w.StatusCode(), w.Body, 403, nserr.PermissionDenied)
	w, err = alice.CreateWarehouseWithResponse(ctx, controlclient.CreateWarehouseRequest{Id: "w", Project: "p"})
	assert.NilError(t, err)
	expect(t, w.StatusCode(), w.Body, 200, 0)
	w, err = alice.CreateWarehouseWithResponse(ctx, controlclient.CreateWarehouseRequest{Id: "w2", Project: "p"})
	assert.NilError(t, err)
	expect(t, w.StatusCode(), w.Body, 200, 0)
	assert.NilError(t, e.authz.Grant(ctx, authz.User("carol").Subject(), "reader", authz.WarehouseObject("w")))

	t.Run("listings are filtered per item", func(t *testing.T) {
		for _, tc := range []struct {
			name   string
			client *controlclient.ClientWithResponses
			want   []string
		}{
			{"owner", alice, []string{"w", "w2"}},
			{"reader", carol, []string{"w"}},
			{"outsider", bob, nil},
		} {
			l, err := tc.client.ListWarehousesWithResponse(ctx, &controlclient.ListWarehousesParams{Limit: ptr(int32(1))})
			assert.NilError(t, err)
			expect(t, l.StatusCode(), l.Body, 200, 0)
			var got []string
			for _, w := range l.JSON200.Warehouses {
				got = append(got, w.Id)
			}
			if len(tc.want) > 0 {
				assert.DeepEqual(t, got, tc.want[:1])
			} else {
				assert.Equal(t, len(got), 0, tc.name)
				assert.Assert(t, l.JSON200.PageToken == nil, "hidden warehouses leave no cursor")
			}
		}
		p, err := bob.ListProjectsWithResponse(ctx, nil)
		assert.NilError(t, err)
		expect(t, p.StatusCode(), p.Body, 403, nserr.PermissionDenied)
	})

	t.Run("a reader reads and cannot destroy", func(t *testing.T) {
		d, err := carol.DescribeWarehouseWithResponse(ctx, "w")
		assert.NilError(t, err)
		expect(t, d.StatusCode(), d.Body, 200, 0)
		del, err := carol.DeleteWarehouseWithResponse(ctx, "w", &controlclient.DeleteWarehouseParams{Force: ptr(true)})
		assert.NilError(t, err)
		expect(t, del.StatusCode(), del.Body, 404, nserr.NamespaceNotFound)
		q, err := carol.DeactivateWarehouseWithResponse(ctx, "w")
		assert.NilError(t, err)
		expect(t, q.StatusCode(), q.Body, 404, nserr.NamespaceNotFound)
		g, err := bob.DescribeWarehouseWithResponse(ctx, "w")
		assert.NilError(t, err)
		expect(t, g.StatusCode(), g.Body, 403, nserr.PermissionDenied)
	})

	// The outsider's answers about w2 while it exists...
	type answer struct {
		Status int
		Body   string
	}
	outsider := func() map[string]answer {
		out := map[string]answer{}
		d, err := bob.DeleteWarehouseWithResponse(ctx, "w2", nil)
		assert.NilError(t, err)
		out["delete"] = answer{d.StatusCode(), string(d.Body)}
		d, err = bob.DeleteWarehouseWithResponse(ctx, "w2", &controlclient.DeleteWarehouseParams{Force: ptr(true), Cascade: ptr(true), PurgeBucket: ptr(true)})
		assert.NilError(t, err)
		out["delete force"] = answer{d.StatusCode(), string(d.Body)}
		q, err := bob.DeactivateWarehouseWithResponse(ctx, "w2")
		assert.NilError(t, err)
		out["deactivate"] = answer{q.StatusCode(), string(q.Body)}
		a, err := bob.ActivateWarehouseWithResponse(ctx, "w2")
		assert.NilError(t, err)
		out["activate"] = answer{a.StatusCode(), string(a.Body)}
		pr, err := bob.SetWarehouseProtectionWithResponse(ctx, "w2", controlclient.SetProtectionRequest{Protected: true})
		assert.NilError(t, err)
		out["protect"] = answer{pr.StatusCode(), string(pr.Body)}
		return out
	}
	notYours := outsider()
	for door, a := range notYours {
		assert.Equal(t, a.Status, 404, door)
	}
	// The owner can.
	d, err := alice.DeleteWarehouseWithResponse(ctx, "w2", nil)
	assert.NilError(t, err)
	expect(t, d.StatusCode(), d.Body, 200, 0)
	assert.Assert(t, *d.JSON200.TuplesRevoked >= 2, "owner and project edge revoked")
	// ...are byte-identical to its answers once w2 is gone.
	assert.DeepEqual(t, outsider(), notYours)

	t.Run("project doors hide too", func(t *testing.T) {
		before, err := bob.DeleteProjectWithResponse(ctx, "p", &controlclient.DeleteProjectParams{Force: ptr(true)})
		assert.NilError(t, err)
		missing, err := bob.DeleteProjectWithResponse(ctx, "gone", &controlclient.DeleteProjectParams{Force: ptr(true)})
		assert.NilError(t, err)
		expect(t, before.StatusCode(), before.Body, 404, nserr.NamespaceNotFound)
		assert.Equal(t, strings.ReplaceAll(string(missing.Body), "gone", "p"), string(before.Body))
	})

	t.Run("me", func(t *testing.T) {
		m, err := alice.DescribeMeWithResponse(ctx)
		assert.NilError(t, err)
		expect(t, m.StatusCode(), m.Body, 200, 0)
		assert.Equal(t, m.JSON200.Principal, "user:alice")
		assert.Assert(t, m.JSON200.EstateAdmin)
		assert.DeepEqual(t, *m.JSON200.Projects, []string{"p"})
		assert.Equal(t, string(m.JSON200.Authorization), "openfga")
		m, err = bob.DescribeMeWithResponse(ctx)
		assert.NilError(t, err)
		assert.Assert(t, !m.JSON200.EstateAdmin)
		assert.DeepEqual(t, *m.JSON200.Projects, []string{})
		ev, err := bob.ListEventsWithResponse(ctx, nil)
		assert.NilError(t, err)
		expect(t, ev.StatusCode(), ev.Body, 403, nserr.PermissionDenied)
	})

	// The owner deletes the rest; the project then goes.
	d, err = alice.DeleteWarehouseWithResponse(ctx, "w", nil)
	assert.NilError(t, err)
	expect(t, d.StatusCode(), d.Body, 200, 0)
	dp, err := alice.DeleteProjectWithResponse(ctx, "p", nil)
	assert.NilError(t, err)
	expect(t, dp.StatusCode(), dp.Body, 200, 0)

	// Every decision left an audit line, denials included.
	logs := audit.String()
	assert.Assert(t, strings.Contains(logs, `"decision":"DENY","principal":"user:bob","action":"project.create"`), logs)
	assert.Assert(t, strings.Contains(logs, `"decision":"ALLOW","principal":"user:alice","action":"warehouse.delete"`), logs)
}
