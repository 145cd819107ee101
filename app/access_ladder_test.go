package app

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	"gotest.tools/v3/assert"

	"github.com/lancecat/lancecat/authz"
	"github.com/lancecat/lancecat/client/controlclient"
	"github.com/lancecat/lancecat/client/nsclient"
	nserr "github.com/lancecat/lancecat/errors"
	"github.com/lancecat/lancecat/ident"
)

// ladderRungs are the rungs the access doors grant and revoke.
var ladderRungs = []string{"owner", "writer", "reader", "validator", "maintainer", "manage_grants", "pass_grants"}

// ladderCaller is what a caller holds: rungs on the object itself, rungs on its parent namespace
// (inherited, so effective on the object), and whether that parent has managed access on.
type ladderCaller struct {
	name     string
	holds    []string
	onParent []string
	managed  bool
}

// effective is what the caller holds on the object: its own grants plus the parent's.
func (c ladderCaller) effective() []string { return append(slices.Clone(c.holds), c.onParent...) }

// holdsRung says whether the caller stands at rung or above on the object, as the issue words it:
// an owner holds every rung of the ladder, a writer also reads, a maintainer counts an owner.
func (c ladderCaller) holdsRung(rung string) bool {
	eff := c.effective()
	has := func(r string) bool { return slices.Contains(eff, r) }
	switch rung {
	case "owner":
		return has("owner")
	case "writer":
		return has("owner") || has("writer")
	case "reader":
		return has("owner") || has("writer") || has("reader")
	case "validator":
		return has("owner") || has("validator")
	case "maintainer":
		return has("owner") || has("maintainer")
	}
	return false
}

// managesGrants: an explicit manage_grants, or owning outside managed access.
func (c ladderCaller) managesGrants() bool {
	eff := c.effective()
	return slices.Contains(eff, "manage_grants") || (slices.Contains(eff, "owner") && !c.managed)
}

// mayGrant is the rule the issue states: a caller grants only rungs it holds itself, never owner
// unless it is one; pass_grants lets a holder pass writer, reader and validator on.
func (c ladderCaller) mayGrant(rung string) bool {
	switch rung {
	case "manage_grants", "pass_grants":
		return c.managesGrants()
	case "writer", "reader", "validator":
		return c.holdsRung(rung) && (c.managesGrants() || slices.Contains(c.effective(), "pass_grants"))
	}
	return c.holdsRung(rung) && c.managesGrants()
}

// mayRevoke: nobody revokes a rung above their own, so an owner's tuple falls only to an owner.
func (c ladderCaller) mayRevoke(rung string) bool {
	if !c.managesGrants() {
		return false
	}
	return rung == "manage_grants" || rung == "pass_grants" || c.holdsRung(rung)
}

// TestGrantLadder is the rung × relation matrix of the access doors against a real OpenFGA, for
// grants and revokes, on a table, a namespace and a warehouse: every caller may grant and revoke exactly
// the rungs it holds itself (effectively, inherited ones included), so manage_grants alone
// elevates nobody (the dave granted himself owner, then revoked the real owner).
func TestGrantLadder(t *testing.T) {
	e := newSpecEnv(t, fgaSpecConfig(t))
	ctx := context.Background()
	fga, ok := e.gov.authorizer.(*authz.OpenFGA)
	assert.Assert(t, ok)
	alice := e.as(t, authz.User("alice")) // estate admin: owns every top-level namespace
	aliceCtl := e.ctlAs(t, authz.User("alice"))
	pr, err := aliceCtl.CreateProjectWithResponse(ctx, controlclient.CreateProjectRequest{Id: "p"})
	assert.NilError(t, err)
	expect(t, pr.StatusCode(), pr.Body, 200, 0)

	var callers []ladderCaller
	for _, r := range ladderRungs {
		callers = append(callers, ladderCaller{name: r, holds: []string{r}})
	}
	for _, r := range []string{"owner", "writer", "reader", "validator", "maintainer"} {
		callers = append(callers, ladderCaller{name: "manage_grants+" + r, holds: []string{"manage_grants", r}})
	}
	for _, r := range []string{"writer", "reader", "validator"} {
		callers = append(callers, ladderCaller{name: "pass_grants+" + r, holds: []string{"pass_grants", r}})
	}
	callers = append(callers,
		ladderCaller{name: "inherited writer+manage_grants", holds: []string{"manage_grants"}, onParent: []string{"writer"}},
		ladderCaller{name: "inherited owner", onParent: []string{"owner"}},
		ladderCaller{name: "managed owner", holds: []string{"owner"}, managed: true},
		ladderCaller{name: "managed owner+manage_grants", holds: []string{"owner", "manage_grants"}, managed: true},
		ladderCaller{name: "managed manage_grants+writer", holds: []string{"manage_grants", "writer"}, managed: true},
	)

	for i, c := range callers {
		t.Run(c.name, func(t *testing.T) {
			// Each caller gets its own namespace: a sub-namespace and a table in it are the objects.
			parent := ident.ID{fmt.Sprintf("c%d", i)}
			cn, err := alice.CreateNamespaceWithResponse(ctx, parent[0], nil, nsclient.CreateNamespaceRequest{})
			assert.NilError(t, err)
			expect(t, cn.StatusCode(), cn.Body, 200, 0)
			sub := append(slices.Clone(parent), "sub")
			cn, err = alice.CreateNamespaceWithResponse(ctx, sub.Join("$"), nil, nsclient.CreateNamespaceRequest{})
			assert.NilError(t, err)
			expect(t, cn.StatusCode(), cn.Body, 200, 0)
			tbl := append(slices.Clone(parent), "t")
			dt, err := alice.DeclareTableWithResponse(ctx, tbl.Join("$"), nil, nsclient.DeclareTableRequest{})
			assert.NilError(t, err)
			expect(t, dt.StatusCode(), dt.Body, 200, 0)
			parentObj := authz.NamespaceObject(parent)
			if c.managed {
				assert.NilError(t, fga.Grant(ctx, authz.Everyone, "managed_access", parentObj))
			}
			me := authz.User(fmt.Sprintf("c%d", i))
			for _, r := range c.onParent {
				assert.NilError(t, fga.Grant(ctx, me.Subject(), r, parentObj))
			}
			ctl := e.ctlAs(t, me)

			objects := []struct {
				typ controlclient.AccessGrantObjectType
				obj authz.Object
				id  string
			}{
				{controlclient.AccessGrantObjectTypeTable, authz.TableObject(tbl), tbl.Join("$")},
				{controlclient.AccessGrantObjectTypeNamespace, authz.NamespaceObject(sub), sub.Join("$")},
			}
			// A warehouse too, where the caller holds its rungs directly (a warehouse's managed
			// access is its own switch).
			if len(c.onParent) == 0 {
				wid := fmt.Sprintf("w%d", i)
				w, err := aliceCtl.CreateWarehouseWithResponse(ctx, controlclient.CreateWarehouseRequest{Id: wid, Project: "p"})
				assert.NilError(t, err)
				expect(t, w.StatusCode(), w.Body, 200, 0)
				if c.managed {
					assert.NilError(t, fga.Grant(ctx, authz.Everyone, "managed_access", authz.WarehouseObject(wid)))
				}
				objects = append(objects, struct {
					typ controlclient.AccessGrantObjectType
					obj authz.Object
					id  string
				}{controlclient.AccessGrantObjectTypeWarehouse, authz.WarehouseObject(wid), wid})
			}
			for _, o := range objects {
				for _, r := range c.holds {
					assert.NilError(t, fga.Grant(ctx, me.Subject(), r, o.obj))
				}
				for _, rung := range ladderRungs {
					// Grant to someone else, and to oneself (the repro's self-elevation).
					for _, to := range []string{fmt.Sprintf("user:g%d-%s", i, rung), me.String()} {
						status, code := 403, nserr.PermissionDenied
						if c.mayGrant(rung) {
							status, code = 200, 0
						}
						held := tupleHeld(t, fga, to, rung, o.obj)
						grant(t, ctl, false, o.typ, o.id, to, rung, status, code)
						assert.Equal(t, tupleHeld(t, fga, to, rung, o.obj), held || status == 200, "%s %s granting %s to %s", o.typ, c.name, rung, to)
					}

					// Revoke someone else's grant of the rung, including the owner's own tuple.
					victim := authz.Subject(fmt.Sprintf("user:v%d-%s", i, rung))
					assert.NilError(t, fga.Grant(ctx, victim, rung, o.obj))
					status, code := 403, nserr.PermissionDenied
					if c.mayRevoke(rung) {
						status, code = 200, 0
					}
					grant(t, ctl, true, o.typ, o.id, string(victim), rung, status, code)
					assert.Equal(t, tupleHeld(t, fga, string(victim), rung, o.obj), status != 200, "%s %s revoking %s", o.typ, c.name, rung)
				}
			}
			// The real owner (the estate admin, through the catalog) keeps the object whatever
			// the caller did: it still describes the table.
			d, err := alice.DescribeTableWithResponse(ctx, tbl.Join("$"), nil, nsclient.DescribeTableRequest{})
			assert.NilError(t, err)
			expect(t, d.StatusCode(), d.Body, 200, 0)
		})
	}
}

// tupleHeld says whether exactly the tuple user relation object is stored.
func tupleHeld(t *testing.T, fga *authz.OpenFGA, user, relation string, object authz.Object) bool {
	t.Helper()
	got, err := fga.Grants(context.Background(), relation, object)
	assert.NilError(t, err)
	return slices.Contains(got, authz.Tuple{User: user, Relation: relation, Object: object.String()})
}

// TestGrantRefusalsAreClean (issue 11, item 9): a grant the model cannot hold (user:* as a
// reader, owner or manage_grants) is a 400 in lancecat's words; OpenFGA's own "Write validation
// error … with body {…}" never reaches the client.
func TestGrantRefusalsAreClean(t *testing.T) {
	e := newSpecEnv(t, fgaSpecConfig(t))
	ctx := context.Background()
	alice, aliceCtl := e.as(t, authz.User("alice")), e.ctlAs(t, authz.User("alice"))
	cn, err := alice.CreateNamespaceWithResponse(ctx, "n1", nil, nsclient.CreateNamespaceRequest{})
	assert.NilError(t, err)
	expect(t, cn.StatusCode(), cn.Body, 200, 0)
	dt, err := alice.DeclareTableWithResponse(ctx, "n1$t1", nil, nsclient.DeclareTableRequest{})
	assert.NilError(t, err)
	expect(t, dt.StatusCode(), dt.Body, 200, 0)
	for _, rung := range ladderRungs {
		for _, o := range []struct {
			typ controlclient.AccessGrantObjectType
			id  string
		}{{controlclient.AccessGrantObjectTypeTable, "n1$t1"}, {controlclient.AccessGrantObjectTypeNamespace, "n1"}} {
			for _, revoke := range []bool{false, true} {
				body := controlclient.AccessGrant{ObjectType: o.typ, ObjectId: o.id, Subject: "user:*", Relation: rung}
				var raw []byte
				var status int
				if revoke {
					r, err := aliceCtl.RevokeAccessWithResponse(ctx, body)
					assert.NilError(t, err)
					raw, status = r.Body, r.StatusCode()
				} else {
					r, err := aliceCtl.GrantAccessWithResponse(ctx, body)
					assert.NilError(t, err)
					raw, status = r.Body, r.StatusCode()
				}
				expect(t, status, raw, 400, nserr.InvalidInput, "everyone (user:*)")
				for _, leak := range []string{"validation", "with body", "type restriction", "{\\\""} {
					assert.Assert(t, !strings.Contains(string(raw), leak), "%q leaks in %s", leak, raw)
				}
			}
		}
	}
}
