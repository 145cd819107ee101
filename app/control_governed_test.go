package app

import (
	"context"
	"errors"
	"strings"
	"testing"

	"gotest.tools/v3/assert"

	"github.com/lancecat/lancecat/authz"
	"github.com/lancecat/lancecat/client/controlclient"
	nserr "github.com/lancecat/lancecat/errors"
	"github.com/lancecat/lancecat/governance"
	"github.com/lancecat/lancecat/ident"
	"github.com/lancecat/lancecat/registry"
)

// objects creates namespaces a, a$b and tables a$b$t, a$u in the catalog.
func (e *governedEnv) objects(t *testing.T) {
	t.Helper()
	ctx := context.Background()
	for _, ns := range []ident.ID{{"a"}, {"a", "b"}} {
		_, err := e.catalog.CreateNamespace(ctx, ns, nil, "create")
		assert.NilError(t, err)
	}
	for _, tb := range []ident.ID{{"a", "b", "t"}, {"a", "u"}} {
		_, err := e.catalog.DeclareTable(ctx, tb, "", nil)
		assert.NilError(t, err)
	}
}

// problemOf is what the HTTP layer would answer for a governance error.
func problemOf(err error) nserr.Problem { return nserr.ProblemFor(err, "", "") }

func eventTypes(t *testing.T, c *controlclient.ClientWithResponses) []string {
	t.Helper()
	r, err := c.ListEventsWithResponse(context.Background(), nil)
	assert.NilError(t, err)
	expect(t, r.StatusCode(), r.Body, 200, 0)
	var out []string
	for _, ev := range r.JSON200.Events {
		out = append(out, ev.Type)
	}
	return out
}

func TestProtectionDoors(t *testing.T) {
	e := newGovernedEnv(t)
	e.objects(t)
	c, ctx := e.anyone, context.Background()

	d, err := c.DescribeTableProtectionWithResponse(ctx, "a$b$t", nil)
	assert.NilError(t, err)
	expect(t, d.StatusCode(), d.Body, 200, 0)
	assert.Equal(t, d.JSON200.Protected, false)
	assert.DeepEqual(t, d.JSON200.Id, []string{"a", "b", "t"})

	for _, tc := range []struct {
		name   string
		call   func() (int, []byte, error)
		status int
		code   nserr.Code
		says   string
	}{
		{"arm a missing table", func() (int, []byte, error) {
			r, err := c.SetTableProtectionWithResponse(ctx, "a$b$nope", nil, controlclient.SetProtectionRequest{Protected: true})
			return r.StatusCode(), r.Body, err
		}, 404, nserr.TableNotFound, ""},
		{"describe a missing table", func() (int, []byte, error) {
			r, err := c.DescribeTableProtectionWithResponse(ctx, "a$b$nope", nil)
			return r.StatusCode(), r.Body, err
		}, 404, nserr.TableNotFound, ""},
		{"arm a missing namespace", func() (int, []byte, error) {
			r, err := c.SetNamespaceProtectionWithResponse(ctx, "zz", nil, controlclient.SetProtectionRequest{Protected: true})
			return r.StatusCode(), r.Body, err
		}, 404, nserr.NamespaceNotFound, ""},
		{"the root namespace", func() (int, []byte, error) {
			r, err := c.SetNamespaceProtectionWithResponse(ctx, "$", nil, controlclient.SetProtectionRequest{Protected: true})
			return r.StatusCode(), r.Body, err
		}, 400, nserr.InvalidInput, "root namespace"},
		{"a missing table of the root namespace is missing like any table", func() (int, []byte, error) {
			r, err := c.SetTableProtectionWithResponse(ctx, "t", nil, controlclient.SetProtectionRequest{Protected: true})
			return r.StatusCode(), r.Body, err
		}, 404, nserr.TableNotFound, "'t' not found"},
		{"the root namespace is no table", func() (int, []byte, error) {
			r, err := c.SetTableProtectionWithResponse(ctx, "$", nil, controlclient.SetProtectionRequest{Protected: true})
			return r.StatusCode(), r.Body, err
		}, 400, nserr.InvalidInput, "root namespace"},
		{"another delimiter", func() (int, []byte, error) {
			r, err := c.DescribeTableProtectionWithResponse(ctx, "a.b.t", &controlclient.DescribeTableProtectionParams{Delimiter: ptr(".")})
			return r.StatusCode(), r.Body, err
		}, 400, nserr.InvalidInput, "delimiter"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			status, body, err := tc.call()
			assert.NilError(t, err)
			expect(t, status, body, tc.status, tc.code, tc.says)
		})
	}

	// Arm the table and the inner namespace.
	s, err := c.SetTableProtectionWithResponse(ctx, "a$b$t", nil, controlclient.SetProtectionRequest{Protected: true})
	assert.NilError(t, err)
	expect(t, s.StatusCode(), s.Body, 200, 0)
	assert.Equal(t, s.JSON200.Protected, true)
	assert.Equal(t, *s.JSON200.SetBy, "anonymous")
	assert.Equal(t, string(*s.JSON200.Kind), "table")
	assert.Assert(t, s.JSON200.SetAt != nil)
	rec, _, err := registry.Read[registry.Protection](ctx, e.store, registry.ObjectKey(registry.ProtectionPrefix, "table", []string{"a", "b", "t"}))
	assert.NilError(t, err, "the flag is a control-root record")
	assert.Equal(t, rec.SetBy, "anonymous")
	d, err = c.DescribeTableProtectionWithResponse(ctx, "a$b$t", nil)
	assert.NilError(t, err)
	assert.Equal(t, d.JSON200.Protected, true)
	n, err := c.SetNamespaceProtectionWithResponse(ctx, "a$b", nil, controlclient.SetProtectionRequest{Protected: true})
	assert.NilError(t, err)
	expect(t, n.StatusCode(), n.Body, 200, 0)

	t.Run("the guard the spec doors call", func(t *testing.T) {
		err := e.gov.CheckNotProtected(ctx, registry.KindTable, ident.ID{"a", "b", "t"}, false)
		p := problemOf(err)
		assert.Equal(t, p.Status, 409)
		assert.Equal(t, p.Code, int(nserr.InvalidTableState))
		assert.Assert(t, strings.Contains(p.Detail, "table a$b$t is protected (armed by anonymous)"), p.Detail)
		assert.Assert(t, strings.Contains(p.Detail, "POST /v1/table/a%24b%24t/protection") || strings.Contains(p.Detail, "POST /v1/table/a$b$t/protection"), p.Detail)
		assert.NilError(t, e.gov.CheckNotProtected(ctx, registry.KindTable, ident.ID{"a", "b", "t"}, true), "force overrides protection")
		assert.NilError(t, e.gov.CheckNotProtected(ctx, registry.KindTable, ident.ID{"a", "u"}, false))
		assert.NilError(t, e.gov.CheckNotProtected(ctx, registry.KindTable, ident.ID{"a", "b", "gone"}, false))

		p = problemOf(e.gov.CheckNotProtected(ctx, registry.KindNamespace, ident.ID{"a", "b"}, false))
		assert.Equal(t, p.Status, 409)
		assert.Equal(t, p.Code, int(nserr.NamespaceNotEmpty))
		assert.Assert(t, strings.Contains(p.Detail, "namespace a$b is protected"), p.Detail)
		assert.NilError(t, e.gov.CheckNotProtected(ctx, registry.KindNamespace, ident.ID{"a"}, false), "a parent is not protected by its child")

		// A cascade names the shallowest protected descendant; force overrides.
		p = problemOf(e.gov.CheckSubtreeNotProtected(ctx, ident.ID{"a"}, false))
		assert.Equal(t, p.Status, 409)
		assert.Assert(t, strings.Contains(p.Detail, "namespace a$b is protected"), p.Detail)
		assert.NilError(t, e.gov.CheckSubtreeNotProtected(ctx, ident.ID{"a"}, true))
		assert.NilError(t, e.gov.CheckSubtreeNotProtected(ctx, ident.ID{"c"}, false), "a sibling subtree is unaffected")
	})

	t.Run("disarm, and the record dies with its object", func(t *testing.T) {
		r, err := c.SetNamespaceProtectionWithResponse(ctx, "a$b", nil, controlclient.SetProtectionRequest{Protected: false})
		assert.NilError(t, err)
		expect(t, r.StatusCode(), r.Body, 200, 0)
		assert.Equal(t, r.JSON200.Protected, false)
		p := problemOf(e.gov.CheckSubtreeNotProtected(ctx, ident.ID{"a"}, false))
		assert.Assert(t, strings.Contains(p.Detail, "table a$b$t is protected"), "the next protected descendant: %s", p.Detail)

		// The table is dropped natively; its drop clears the record.
		_, err = e.catalog.DropTable(ctx, ident.ID{"a", "b", "t"})
		assert.NilError(t, err)
		assert.NilError(t, e.gov.ClearProtection(ctx, registry.KindTable, ident.ID{"a", "b", "t"}))
		assert.NilError(t, e.gov.ClearProtection(ctx, registry.KindTable, ident.ID{"a", "b", "t"}), "idempotent")
		d, err := c.DescribeTableProtectionWithResponse(ctx, "a$b$t", nil)
		assert.NilError(t, err)
		expect(t, d.StatusCode(), d.Body, 404, nserr.TableNotFound)
		assert.NilError(t, e.gov.CheckSubtreeNotProtected(ctx, ident.ID{"a"}, false))

		// A record a crash left behind can still be disarmed.
		assert.NilError(t, registry.Put(ctx, e.store, registry.ObjectKey(registry.ProtectionPrefix, "table", []string{"a", "ghost"}),
			registry.Protection{Kind: "table", ID: []string{"a", "ghost"}, Protected: true, SetBy: "user:x"}))
		g, err := c.SetTableProtectionWithResponse(ctx, "a$ghost", nil, controlclient.SetProtectionRequest{Protected: false})
		assert.NilError(t, err)
		expect(t, g.StatusCode(), g.Body, 200, 0)

		// A cascade clears the whole subtree.
		for _, id := range []string{"a", "a$b"} {
			r, err := c.SetNamespaceProtectionWithResponse(ctx, id, nil, controlclient.SetProtectionRequest{Protected: true})
			assert.NilError(t, err)
			expect(t, r.StatusCode(), r.Body, 200, 0)
		}
		u, err := c.SetTableProtectionWithResponse(ctx, "a$u", nil, controlclient.SetProtectionRequest{Protected: true})
		assert.NilError(t, err)
		expect(t, u.StatusCode(), u.Body, 200, 0)
		assert.NilError(t, e.gov.ClearSubtreeProtection(ctx, ident.ID{"a"}))
		listed, err := registry.List[registry.Protection](ctx, e.store, registry.ProtectionPrefix)
		assert.NilError(t, err)
		assert.Equal(t, len(listed.Records), 0)
	})

	t.Run("a record that cannot be read is 503, never unprotected", func(t *testing.T) {
		key := registry.ObjectKey(registry.ProtectionPrefix, "table", []string{"a", "u"})
		_, err := e.control.Put(ctx, key, strings.NewReader("{"), 1)
		assert.NilError(t, err)
		p := problemOf(e.gov.CheckNotProtected(ctx, registry.KindTable, ident.ID{"a", "u"}, false))
		assert.Equal(t, p.Status, 503)
		p = problemOf(e.gov.CheckSubtreeNotProtected(ctx, ident.ID{"a"}, false))
		assert.Equal(t, p.Status, 503)
		assert.NilError(t, e.gov.ClearProtection(ctx, registry.KindTable, ident.ID{"a", "u"}))
	})

	types := strings.Join(eventTypes(t, c), ",")
	for _, want := range []string{"table_protected", "namespace_protected", "namespace_unprotected", "table_unprotected"} {
		assert.Assert(t, strings.Contains(types, want), "%s not in %s", want, types)
	}
}

func setPolicy(t *testing.T, status int, r *controlclient.SetTablePolicyResponse, err error) {
	t.Helper()
	assert.NilError(t, err)
	expect(t, r.StatusCode(), r.Body, status, 0)
}

// source is "<kind>:<id joined by $>" of an effective policy.
func source(p *controlclient.EffectivePolicy) string {
	s := string(p.Source.Kind)
	if p.Source.Id != nil {
		s += ":" + strings.Join(*p.Source.Id, "$")
	}
	return s
}

func TestPolicyResolution(t *testing.T) {
	e := newGovernedEnv(t)
	e.objects(t)
	c, ctx := e.anyone, context.Background()
	def := governance.DefaultPolicy()

	describe := func(t *testing.T, table string) *controlclient.EffectivePolicy {
		t.Helper()
		r, err := c.DescribeTablePolicyWithResponse(ctx, table, nil)
		assert.NilError(t, err)
		expect(t, r.StatusCode(), r.Body, 200, 0)
		return r.JSON200
	}
	p := describe(t, "a$b$t")
	assert.Equal(t, source(p), "default")
	assert.Equal(t, *p.Policy.RetentionDays, *def.RetentionDays)
	assert.Equal(t, *p.Policy.TargetRowsPerFragment, *def.TargetRowsPerFragment)

	// The project of the warehouse "a" is bound to.
	pr, err := c.CreateProjectWithResponse(ctx, controlclient.CreateProjectRequest{Id: "p"})
	assert.NilError(t, err)
	expect(t, pr.StatusCode(), pr.Body, 200, 0)
	w, err := c.CreateWarehouseWithResponse(ctx, controlclient.CreateWarehouseRequest{Id: "w", Project: "p"})
	assert.NilError(t, err)
	expect(t, w.StatusCode(), w.Body, 200, 0)
	assert.NilError(t, registry.Create(ctx, e.store, registry.BindingKey("a"), registry.Binding{TopNamespace: "a", WarehouseID: "w", RootURI: w.JSON200.RootUri}))

	pp, err := c.SetProjectPolicyWithResponse(ctx, "p", controlclient.Policy{RetentionDays: ptr(30)})
	assert.NilError(t, err)
	expect(t, pp.StatusCode(), pp.Body, 200, 0)
	assert.Equal(t, source(pp.JSON200), "project:p")
	p = describe(t, "a$b$t")
	assert.Equal(t, source(p), "project:p")
	assert.Equal(t, *p.Policy.RetentionDays, 30)
	assert.Equal(t, *p.Source.SetBy, "anonymous")

	// Winner takes all: the namespace's record wins whole; what it leaves unset is the default,
	// not the project's 30 days.
	ns, err := c.SetNamespacePolicyWithResponse(ctx, "a", nil, controlclient.Policy{CompactEnabled: ptr(false)})
	assert.NilError(t, err)
	expect(t, ns.StatusCode(), ns.Body, 200, 0)
	p = describe(t, "a$b$t")
	assert.Equal(t, source(p), "namespace:a")
	assert.Equal(t, *p.Policy.CompactEnabled, false)
	assert.Equal(t, *p.Policy.RetentionDays, *def.RetentionDays)
	p = describe(t, "a$u")
	assert.Equal(t, source(p), "namespace:a")

	ns, err = c.SetNamespacePolicyWithResponse(ctx, "a$b", nil, controlclient.Policy{RetainVersions: ptr(5)})
	assert.NilError(t, err)
	expect(t, ns.StatusCode(), ns.Body, 200, 0)
	p = describe(t, "a$b$t")
	assert.Equal(t, source(p), "namespace:a$b", "the nearest namespace up the tree")
	assert.Equal(t, *p.Policy.RetainVersions, 5)
	assert.Equal(t, *p.Policy.CompactEnabled, true)
	assert.Equal(t, source(describe(t, "a$u")), "namespace:a")

	// A set merges into the record: knobs not sent keep their stored values.
	r, err := c.SetTablePolicyWithResponse(ctx, "a$b$t", nil, controlclient.Policy{RetentionDays: ptr(90)})
	setPolicy(t, 200, r, err)
	r, err = c.SetTablePolicyWithResponse(ctx, "a$b$t", nil, controlclient.Policy{CleanupEnabled: ptr(false)})
	setPolicy(t, 200, r, err)
	assert.Equal(t, source(r.JSON200), "table:a$b$t")
	assert.Equal(t, *r.JSON200.Policy.RetentionDays, 90)
	assert.Equal(t, *r.JSON200.Policy.CleanupEnabled, false)
	stored, _, err := registry.Read[registry.Policy](ctx, e.store, registry.PolicyKey("table", []string{"a", "b", "t"}))
	assert.NilError(t, err)
	assert.Assert(t, strings.HasPrefix(registry.PolicyKey("table", []string{"a", "b", "t"}), "_policies/table-"))
	assert.Assert(t, stored.RetainVersions == nil, "only what was set is stored")

	// Every level describes itself.
	nd, err := c.DescribeNamespacePolicyWithResponse(ctx, "a$b", nil)
	assert.NilError(t, err)
	assert.Equal(t, source(nd.JSON200), "namespace:a$b")
	pd, err := c.DescribeProjectPolicyWithResponse(ctx, "p")
	assert.NilError(t, err)
	assert.Equal(t, source(pd.JSON200), "project:p")

	// Deleting peels one level at a time.
	for _, step := range []struct {
		del  func() (int, []byte, error)
		want string
	}{
		{func() (int, []byte, error) {
			r, err := c.DeleteTablePolicyWithResponse(ctx, "a$b$t", nil)
			return r.StatusCode(), r.Body, err
		}, "namespace:a$b"},
		{func() (int, []byte, error) {
			r, err := c.DeleteNamespacePolicyWithResponse(ctx, "a$b", nil)
			return r.StatusCode(), r.Body, err
		}, "namespace:a"},
		{func() (int, []byte, error) {
			r, err := c.DeleteNamespacePolicyWithResponse(ctx, "a", nil)
			return r.StatusCode(), r.Body, err
		}, "project:p"},
		{func() (int, []byte, error) {
			r, err := c.DeleteProjectPolicyWithResponse(ctx, "p")
			return r.StatusCode(), r.Body, err
		}, "default"},
		{func() (int, []byte, error) { // deleting what is not there succeeds
			r, err := c.DeleteProjectPolicyWithResponse(ctx, "p")
			return r.StatusCode(), r.Body, err
		}, "default"},
	} {
		status, body, err := step.del()
		assert.NilError(t, err)
		expect(t, status, body, 200, 0)
		assert.Equal(t, source(describe(t, "a$b$t")), step.want)
	}

	t.Run("refusals", func(t *testing.T) {
		for _, tc := range []struct {
			name   string
			call   func() (int, []byte, error)
			status int
			code   nserr.Code
			says   string
		}{
			{"retention below its bound", func() (int, []byte, error) {
				r, err := c.SetTablePolicyWithResponse(ctx, "a$b$t", nil, controlclient.Policy{RetentionDays: ptr(0)})
				return r.StatusCode(), r.Body, err
			}, 400, nserr.InvalidInput, "retention_days"},
			{"fragments too small", func() (int, []byte, error) {
				r, err := c.SetNamespacePolicyWithResponse(ctx, "a", nil, controlclient.Policy{TargetRowsPerFragment: ptr(10)})
				return r.StatusCode(), r.Body, err
			}, 400, nserr.InvalidInput, "target_rows_per_fragment"},
			{"the root namespace", func() (int, []byte, error) {
				r, err := c.SetNamespacePolicyWithResponse(ctx, "$", nil, controlclient.Policy{})
				return r.StatusCode(), r.Body, err
			}, 400, nserr.InvalidInput, "root namespace"},
			{"a missing table", func() (int, []byte, error) {
				r, err := c.SetTablePolicyWithResponse(ctx, "a$nope", nil, controlclient.Policy{})
				return r.StatusCode(), r.Body, err
			}, 404, nserr.TableNotFound, ""},
			{"describe a missing namespace", func() (int, []byte, error) {
				r, err := c.DescribeNamespacePolicyWithResponse(ctx, "zz", nil)
				return r.StatusCode(), r.Body, err
			}, 404, nserr.NamespaceNotFound, ""},
			{"a missing project", func() (int, []byte, error) {
				r, err := c.SetProjectPolicyWithResponse(ctx, "nope", controlclient.Policy{})
				return r.StatusCode(), r.Body, err
			}, 404, nserr.NamespaceNotFound, `project \"nope\" does not exist`},
		} {
			t.Run(tc.name, func(t *testing.T) {
				status, body, err := tc.call()
				assert.NilError(t, err)
				expect(t, status, body, tc.status, tc.code, tc.says)
			})
		}
	})

	t.Run("a record that cannot be read is 503, never skipped", func(t *testing.T) {
		key := registry.PolicyKey("namespace", []string{"a"})
		_, err := e.control.Put(ctx, key, strings.NewReader(`{"kind":"namespace"}`), 20)
		assert.NilError(t, err)
		r, err := c.DescribeTablePolicyWithResponse(ctx, "a$b$t", nil)
		assert.NilError(t, err)
		expect(t, r.StatusCode(), r.Body, 503, nserr.ServiceUnavailable)
		assert.NilError(t, e.gov.ClearPolicy(ctx, registry.KindNamespace, ident.ID{"a"}))
	})

	t.Run("records follow a renamed table and die with dropped ones", func(t *testing.T) {
		r, err := c.SetTablePolicyWithResponse(ctx, "a$u", nil, controlclient.Policy{RetainVersions: ptr(3)})
		setPolicy(t, 200, r, err)
		pr, err := c.SetTableProtectionWithResponse(ctx, "a$u", nil, controlclient.SetProtectionRequest{Protected: true})
		assert.NilError(t, err)
		expect(t, pr.StatusCode(), pr.Body, 200, 0)
		_, err = e.catalog.RenameTable(ctx, ident.ID{"a", "u"}, ident.ID{"a", "b"}, "v")
		assert.NilError(t, err)
		assert.NilError(t, e.gov.MoveTableRecords(ctx, ident.ID{"a", "u"}, ident.ID{"a", "b", "v"}))
		assert.NilError(t, e.gov.MoveTableRecords(ctx, ident.ID{"a", "u"}, ident.ID{"a", "b", "v"}), "idempotent")
		p := describe(t, "a$b$v")
		assert.Equal(t, source(p), "table:a$b$v")
		assert.Equal(t, *p.Policy.RetainVersions, 3)
		d, err := c.DescribeTableProtectionWithResponse(ctx, "a$b$v", nil)
		assert.NilError(t, err)
		assert.Equal(t, d.JSON200.Protected, true)
		_, _, err = registry.Read[registry.Policy](ctx, e.store, registry.PolicyKey("table", []string{"a", "u"}))
		assert.Assert(t, errors.Is(err, registry.ErrNotFound))

		assert.NilError(t, e.gov.ClearSubtreePolicies(ctx, ident.ID{"a"}))
		assert.Equal(t, source(describe(t, "a$b$v")), "default")

		// A project's policy dies with the project.
		_, err = c.SetProjectPolicyWithResponse(ctx, "q", controlclient.Policy{})
		assert.NilError(t, err)
		q, err := c.CreateProjectWithResponse(ctx, controlclient.CreateProjectRequest{Id: "q"})
		assert.NilError(t, err)
		expect(t, q.StatusCode(), q.Body, 200, 0)
		qs, err := c.SetProjectPolicyWithResponse(ctx, "q", controlclient.Policy{RetentionDays: ptr(2)})
		assert.NilError(t, err)
		expect(t, qs.StatusCode(), qs.Body, 200, 0)
		qd, err := c.DeleteProjectWithResponse(ctx, "q", nil)
		assert.NilError(t, err)
		expect(t, qd.StatusCode(), qd.Body, 200, 0)
		_, _, err = registry.Read[registry.Policy](ctx, e.store, registry.PolicyKey("project", []string{"q"}))
		assert.Assert(t, errors.Is(err, registry.ErrNotFound))
	})

	types := strings.Join(eventTypes(t, c), ",")
	assert.Assert(t, strings.Contains(types, "policy_set") && strings.Contains(types, "policy_deleted"), types)
}

// TestGovernedDoorsAuthorization: protection is owner tier (can_drop / can_delete) both ways,
// policies are owner tier to change and reader tier to read, project policies belong to the
// project's admins and hide the project from everyone else.
func TestGovernedDoorsAuthorization(t *testing.T) {
	fga := newTestFGA(t)
	e := newGovernedEnv(t, withAuthorizer(fga))
	e.objects(t)
	ctx := context.Background()
	tb, ns := authz.TableObject(ident.ID{"a", "b", "t"}), authz.NamespaceObject(ident.ID{"a", "b"})
	for _, g := range []struct {
		user, rung string
		object     authz.Object
	}{
		{"olga", "owner", tb}, {"rita", "reader", tb}, {"wes", "writer", tb},
		{"olga", "owner", ns}, {"rita", "reader", ns}, {"wes", "writer", ns},
	} {
		assert.NilError(t, fga.Grant(ctx, authz.User(g.user).Subject(), g.rung, g.object))
	}
	olga, rita, wes := e.as(t, authz.User("olga")), e.as(t, authz.User("rita")), e.as(t, authz.User("wes"))
	bob, alice := e.as(t, authz.User("bob")), e.as(t, authz.User("alice"))

	// Without identity: 401 before anything.
	r, err := e.anyone.SetTableProtectionWithResponse(ctx, "a$b$t", nil, controlclient.SetProtectionRequest{Protected: true})
	assert.NilError(t, err)
	expect(t, r.StatusCode(), r.Body, 401, nserr.Unauthenticated)

	for _, who := range []*controlclient.ClientWithResponses{rita, wes, bob} {
		r, err := who.SetTableProtectionWithResponse(ctx, "a$b$t", nil, controlclient.SetProtectionRequest{Protected: true})
		assert.NilError(t, err)
		expect(t, r.StatusCode(), r.Body, 403, nserr.PermissionDenied)
		d, err := who.DescribeTableProtectionWithResponse(ctx, "a$b$t", nil)
		assert.NilError(t, err)
		expect(t, d.StatusCode(), d.Body, 403, nserr.PermissionDenied)
		n, err := who.SetNamespaceProtectionWithResponse(ctx, "a$b", nil, controlclient.SetProtectionRequest{Protected: true})
		assert.NilError(t, err)
		expect(t, n.StatusCode(), n.Body, 403, nserr.PermissionDenied)
		p, err := who.SetTablePolicyWithResponse(ctx, "a$b$t", nil, controlclient.Policy{RetentionDays: ptr(3)})
		assert.NilError(t, err)
		expect(t, p.StatusCode(), p.Body, 403, nserr.PermissionDenied)
		pd, err := who.DeleteNamespacePolicyWithResponse(ctx, "a$b", nil)
		assert.NilError(t, err)
		expect(t, pd.StatusCode(), pd.Body, 403, nserr.PermissionDenied)
	}
	// Not yours is 403 before "missing" on these (router-gated) doors: no existence probing.
	m, err := bob.SetTableProtectionWithResponse(ctx, "a$b$missing", nil, controlclient.SetProtectionRequest{Protected: true})
	assert.NilError(t, err)
	expect(t, m.StatusCode(), m.Body, 403, nserr.PermissionDenied)

	r, err = olga.SetTableProtectionWithResponse(ctx, "a$b$t", nil, controlclient.SetProtectionRequest{Protected: true})
	assert.NilError(t, err)
	expect(t, r.StatusCode(), r.Body, 200, 0)
	assert.Equal(t, *r.JSON200.SetBy, "user:olga")
	n, err := olga.SetNamespaceProtectionWithResponse(ctx, "a$b", nil, controlclient.SetProtectionRequest{Protected: true})
	assert.NilError(t, err)
	expect(t, n.StatusCode(), n.Body, 200, 0)
	p, err := olga.SetTablePolicyWithResponse(ctx, "a$b$t", nil, controlclient.Policy{RetentionDays: ptr(3)})
	assert.NilError(t, err)
	expect(t, p.StatusCode(), p.Body, 200, 0)

	// Readers read policies.
	for _, who := range []*controlclient.ClientWithResponses{rita, wes, olga} {
		d, err := who.DescribeTablePolicyWithResponse(ctx, "a$b$t", nil)
		assert.NilError(t, err)
		expect(t, d.StatusCode(), d.Body, 200, 0)
		assert.Equal(t, source(d.JSON200), "table:a$b$t")
	}
	d, err := bob.DescribeTablePolicyWithResponse(ctx, "a$b$t", nil)
	assert.NilError(t, err)
	expect(t, d.StatusCode(), d.Body, 403, nserr.PermissionDenied)

	// Project policies: the project's admins; to anyone else the project does not exist.
	pr, err := alice.CreateProjectWithResponse(ctx, controlclient.CreateProjectRequest{Id: "p"})
	assert.NilError(t, err)
	expect(t, pr.StatusCode(), pr.Body, 200, 0)
	ps, err := alice.SetProjectPolicyWithResponse(ctx, "p", controlclient.Policy{RetentionDays: ptr(14)})
	assert.NilError(t, err)
	expect(t, ps.StatusCode(), ps.Body, 200, 0)
	assert.Equal(t, *ps.JSON200.Source.SetBy, "user:alice")
	hidden, err := bob.DescribeProjectPolicyWithResponse(ctx, "p")
	assert.NilError(t, err)
	missing, err := bob.DescribeProjectPolicyWithResponse(ctx, "nope")
	assert.NilError(t, err)
	expect(t, hidden.StatusCode(), hidden.Body, 404, nserr.NamespaceNotFound)
	asMissing := strings.NewReplacer(`\"p\"`, `\"nope\"`, "/projects/p/", "/projects/nope/").Replace(string(hidden.Body))
	assert.Equal(t, asMissing, string(missing.Body), "not yours reads exactly like missing")
}
