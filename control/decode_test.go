package control

import (
	"encoding/json"
	"strings"
	"testing"

	"gotest.tools/v3/assert"

	nserr "github.com/lancecat/lancecat/errors"
	"github.com/lancecat/lancecat/gen/controlapi"
)

// TestDecodeControlIsStrict: a control body's typo is a 400 naming it, never a default. The
// lenient decoder turned {"protectd": true} into protected=false: an unprotect (issue 11 item 9's
// class: unknown knobs accepted silently).
func TestDecodeControlIsStrict(t *testing.T) {
	cases := []struct {
		name, body string
		says       string // "" = accepted
	}{
		{"the field", `{"protected":true}`, ""},
		{"false is a value", `{"protected":false}`, ""},
		{"a typo", `{"protectd":true}`, `unknown field "protectd"`},
		{"another case", `{"Protected":true}`, `unknown field "Protected"`},
		{"both spellings", `{"protected":true,"PROTECTED":false}`, `unknown field "PROTECTED"`},
		{"extra field", `{"protected":true,"force":true}`, `unknown field "force"`},
		{"missing required", `{}`, "field protected is required"},
		{"null required", `{"protected":null}`, "field protected is required"},
		{"empty body", ``, "field protected is required"},
		{"null body", `null`, "field protected is required"},
		{"wrong type", `{"protected":"yes"}`, "protected"},
		{"not an object", `[true]`, "must be a JSON object"},
		{"not JSON", `protected=true`, "must be a JSON object"},
		{"a long hostile name", `{"` + strings.Repeat(`\u001b[2J`, 40) + `":1}`, `unknown field "\u001b[2J`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c, _ := newContext(tc.body, nil, "x")
			var req controlapi.SetProtectionRequest
			err := decodeControl(c, &req)
			if tc.says == "" {
				assert.NilError(t, err)
				return
			}
			assert.Assert(t, nserr.Is(err, nserr.ErrInvalidInput), "%v", err)
			assert.ErrorContains(t, err, tc.says)
			assert.Assert(t, len(err.Error()) < 400, "the error echoes the body: %d bytes", len(err.Error()))
		})
	}
	// Optional fields may be left out; required ones may not.
	var w controlapi.CreateWarehouseRequest
	c, _ := newContext(`{"id":"w1","project":"p1"}`, nil, "x")
	assert.NilError(t, decodeControl(c, &w))
	assert.Equal(t, w.Id, "w1")
	assert.Assert(t, w.Protected == nil && w.Bucket == nil)
	c, _ = newContext(`{"id":"w1","project":"p1","protectd":true}`, nil, "x")
	assert.ErrorContains(t, decodeControl(c, &w), `unknown field "protectd"`)
	c, _ = newContext(`{"id":"w1"}`, nil, "x")
	assert.ErrorContains(t, decodeControl(c, &w), "field project is required")
}

// FuzzDecodeControl: any body is either a request whose JSON names only the type's fields, or a
// 400; never a panic or another error.
func FuzzDecodeControl(f *testing.F) {
	for _, s := range []string{`{"protected":true}`, `{"protectd":1}`, ``, `null`, `[]`, `{"protected":null}`, `{"a":{"b":[1,2]}}`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, body string) {
		var req controlapi.AccessGrant
		err := decodeStrict([]byte(strings.TrimSpace(body)), &req)
		if err != nil {
			assert.Assert(t, nserr.Is(err, nserr.ErrInvalidInput), "%v", err)
			return
		}
		var raw map[string]json.RawMessage
		assert.NilError(t, json.Unmarshal([]byte(body), &raw))
		for k := range raw {
			assert.Assert(t, k == "delimiter" || k == "object_id" || k == "object_type" || k == "relation" || k == "subject", k)
		}
	})
}
