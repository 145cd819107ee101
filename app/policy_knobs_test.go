package app

import (
	"context"
	"reflect"
	"slices"
	"strings"
	"testing"

	"gotest.tools/v3/assert"

	"github.com/lancecat/lancecat/client/controlclient"
	nserr "github.com/lancecat/lancecat/errors"
	"github.com/lancecat/lancecat/gen/controlapi"
	"github.com/lancecat/lancecat/registry"
)

// TestPolicyUnknownKnobs: a misspelt knob used to be dropped by the decoder, so
// {"retention_dayz":1} answered 200 and set nothing. Every policy door refuses a field that is
// not a knob (naming it), a knob spelt in another case, a wrongly typed value and a non-object,
// and stores nothing.
func TestPolicyUnknownKnobs(t *testing.T) {
	e := newGovernedEnv(t)
	e.objects(t)
	c, ctx := e.anyone, context.Background()
	pr, err := c.CreateProjectWithResponse(ctx, controlclient.CreateProjectRequest{Id: "p"})
	assert.NilError(t, err)
	expect(t, pr.StatusCode(), pr.Body, 200, 0)

	type setter func(body string) (int, []byte)
	doors := map[string]setter{
		"table": func(body string) (int, []byte) {
			r, err := c.SetTablePolicyWithBodyWithResponse(ctx, "a$b$t", nil, "application/json", strings.NewReader(body))
			assert.NilError(t, err)
			return r.StatusCode(), r.Body
		},
		"namespace": func(body string) (int, []byte) {
			r, err := c.SetNamespacePolicyWithBodyWithResponse(ctx, "a$b", nil, "application/json", strings.NewReader(body))
			assert.NilError(t, err)
			return r.StatusCode(), r.Body
		},
		"project": func(body string) (int, []byte) {
			r, err := c.SetProjectPolicyWithBodyWithResponse(ctx, "p", "application/json", strings.NewReader(body))
			assert.NilError(t, err)
			return r.StatusCode(), r.Body
		},
	}
	cases := []struct {
		body   string
		status int
		names  string
	}{
		// names are as they appear in the JSON problem body.
		{`{"retention_dayz":1}`, 400, `unknown knob \"retention_dayz\"`},
		{`{"retention_days":7,"retain_version":1}`, 400, `unknown knob \"retain_version\"`},
		{`{"Retention_Days":1}`, 400, `unknown knob \"Retention_Days\"`},
		{`{"retention_days":"1"}`, 400, "retention_days"},
		{`[1]`, 400, "JSON object"},
		{`{"retention_days":7}`, 200, ""},
		{``, 200, ""},
	}
	for name, set := range doors {
		for _, tc := range cases {
			t.Run(name+" "+tc.body, func(t *testing.T) {
				status, body := set(tc.body)
				code := nserr.Code(0)
				if tc.status == 400 {
					code = nserr.InvalidInput
				}
				expect(t, status, body, tc.status, code, tc.names)
			})
		}
	}
	// Nothing the refused bodies said was stored: the table's own record has 7 days only.
	r, err := c.DescribeTablePolicyWithResponse(ctx, "a$b$t", nil)
	assert.NilError(t, err)
	expect(t, r.StatusCode(), r.Body, 200, 0)
	assert.Equal(t, *r.JSON200.Policy.RetentionDays, 7)
}

// The policy doors decode into registry.PolicySettings directly (strictly); the wire schema's
// knobs must be exactly those, or a knob the spec documents would be refused as unknown.
func TestPolicyKnobsMatchTheSpec(t *testing.T) {
	names := func(typ reflect.Type) []string {
		var out []string
		for f := range typ.Fields() {
			name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
			out = append(out, name)
		}
		slices.Sort(out)
		return out
	}
	assert.DeepEqual(t, names(reflect.TypeFor[controlapi.Policy]()), names(reflect.TypeFor[registry.PolicySettings]()))
}

// TestControlBodiesAreStrict: every control door's body is decoded strictly, like the policy
// knobs. The lenient decoder read {"protectd": true} as protected=false, so a typo (or an empty
// body) unprotected a protected table, namespace, project or warehouse, and created a warehouse
// unprotected. Now each is a 400 naming the field, and nothing changes.
func TestControlBodiesAreStrict(t *testing.T) {
	e := newGovernedEnv(t)
	e.objects(t)
	c, ctx := e.anyone, context.Background()
	pr, err := c.CreateProjectWithResponse(ctx, controlclient.CreateProjectRequest{Id: "p"})
	assert.NilError(t, err)
	expect(t, pr.StatusCode(), pr.Body, 200, 0)
	wr, err := c.CreateWarehouseWithResponse(ctx, controlclient.CreateWarehouseRequest{Id: "w", Project: "p"})
	assert.NilError(t, err)
	expect(t, wr.StatusCode(), wr.Body, 200, 0)

	type door struct {
		set       func(body string) (int, []byte)
		protected func() bool
	}
	doors := map[string]door{
		"table": {func(body string) (int, []byte) {
			r, err := c.SetTableProtectionWithBodyWithResponse(ctx, "a$b$t", nil, "application/json", strings.NewReader(body))
			assert.NilError(t, err)
			return r.StatusCode(), r.Body
		}, func() bool {
			r, err := c.DescribeTableProtectionWithResponse(ctx, "a$b$t", nil)
			assert.NilError(t, err)
			return r.JSON200.Protected
		}},
		"namespace": {func(body string) (int, []byte) {
			r, err := c.SetNamespaceProtectionWithBodyWithResponse(ctx, "a$b", nil, "application/json", strings.NewReader(body))
			assert.NilError(t, err)
			return r.StatusCode(), r.Body
		}, func() bool {
			r, err := c.DescribeNamespaceProtectionWithResponse(ctx, "a$b", nil)
			assert.NilError(t, err)
			return r.JSON200.Protected
		}},
		"project": {func(body string) (int, []byte) {
			r, err := c.SetProjectProtectionWithBodyWithResponse(ctx, "p", "application/json", strings.NewReader(body))
			assert.NilError(t, err)
			return r.StatusCode(), r.Body
		}, func() bool {
			r, err := c.DescribeProjectWithResponse(ctx, "p")
			assert.NilError(t, err)
			return r.JSON200.Protected != nil && *r.JSON200.Protected
		}},
		"warehouse": {func(body string) (int, []byte) {
			r, err := c.SetWarehouseProtectionWithBodyWithResponse(ctx, "w", "application/json", strings.NewReader(body))
			assert.NilError(t, err)
			return r.StatusCode(), r.Body
		}, func() bool {
			r, err := c.DescribeWarehouseWithResponse(ctx, "w")
			assert.NilError(t, err)
			return r.JSON200.Protected != nil && *r.JSON200.Protected
		}},
	}
	for name, d := range doors {
		t.Run(name, func(t *testing.T) {
			status, body := d.set(`{"protected":true}`)
			expect(t, status, body, 200, 0)
			for _, bad := range []string{`{"protectd":true}`, `{"Protected":true}`, `{}`, ``, `{"protected":true,"force":1}`} {
				status, body := d.set(bad)
				expect(t, status, body, 400, nserr.InvalidInput)
				assert.Assert(t, d.protected(), "%s: %s unprotected it", name, bad)
			}
		})
	}
	r, err := c.CreateWarehouseWithBodyWithResponse(ctx, "application/json", strings.NewReader(`{"id":"w2","project":"p","protectd":true}`))
	assert.NilError(t, err)
	expect(t, r.StatusCode(), r.Body, 400, nserr.InvalidInput, `unknown field \"protectd\"`)
	d, err := c.DescribeWarehouseWithResponse(ctx, "w2")
	assert.NilError(t, err)
	assert.Equal(t, d.StatusCode(), 404, "a refused create makes nothing")
}
