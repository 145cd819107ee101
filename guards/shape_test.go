package guards

import (
	"context"
	"testing"

	"gotest.tools/v3/assert"

	"github.com/lancecat/lancecat/authz"
	nserr "github.com/lancecat/lancecat/errors"
	"github.com/lancecat/lancecat/ident"
	"github.com/lancecat/lancecat/registry"
)

// Moved from handlers (request_test.go) with the guard.
func TestCanonicalEnum(t *testing.T) {
	allowed := []string{"Create", "ExistOk", "Overwrite"}
	for in, want := range map[string]string{"ExistOk": "ExistOk", "exist_ok": "ExistOk", "EXIST_OK": "ExistOk",
		"existok": "ExistOk", "exist-ok": "ExistOk", "create": "Create", "OVERWRITE": "Overwrite",
		// A LanceDB remote-mode client sends Rust's Debug form of its enums.
		`"ExistOk"`: "ExistOk", `"Overwrite"`: "Overwrite"} {
		v := in
		assert.NilError(t, CanonicalEnum("mode", &v, allowed...))
		assert.Equal(t, v, want)
	}
	for _, bad := range []string{"exists", `""ExistOk""`, `"ExistOk`} {
		assert.Assert(t, nserr.Is(CanonicalEnum("mode", &bad, allowed...), nserr.ErrInvalidInput), bad)
	}
	assert.NilError(t, CanonicalEnum("mode", nil, allowed...))
}

func str(s string) *string { return &s }

func TestCheckDelimiter(t *testing.T) {
	for _, tc := range []struct {
		got *string
		ok  bool
	}{{nil, true}, {str(""), true}, {str("$"), true}, {str("."), false}, {str("$$"), false}} {
		err := CheckDelimiter(tc.got, "$")
		if tc.ok {
			assert.NilError(t, err)
		} else {
			assert.Equal(t, nserr.CodeOf(err), nserr.InvalidInput)
		}
	}
}

func TestNoQueryMode(t *testing.T) {
	assert.NilError(t, NoQueryMode(false))
	assert.Equal(t, nserr.CodeOf(NoQueryMode(true)), nserr.InvalidInput)
}

// TestPathID: the raw path id parses with the server's delimiter (a `?delimiter=` naming another
// one is 400) and the later guards see it as r.ID.
func TestPathID(t *testing.T) {
	for _, tc := range []struct {
		name, raw string
		query     map[string]string
		want      ident.ID
		code      nserr.Code
	}{
		{"table", "ns%24t", nil, ident.ID{"ns", "t"}, 0},
		{"same delimiter sent", "ns%24t", map[string]string{"delimiter": "$"}, ident.ID{"ns", "t"}, 0},
		{"other delimiter", "ns%24t", map[string]string{"delimiter": "."}, nil, nserr.InvalidInput},
		{"escaped plus is a plus", "a%2Bb", nil, ident.ID{"a+b"}, 0},
		{"empty segment", "ns%24%24t", nil, nil, nserr.InvalidInput},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := &Request{
				Param: func(string) string { return tc.raw },
				Query: func(n string) (string, bool) { v, ok := tc.query[n]; return v, ok },
			}
			err := PathID("$").Check(context.Background(), r)
			if tc.code != 0 {
				assert.Equal(t, nserr.CodeOf(err), tc.code, "%v", err)
				return
			}
			assert.NilError(t, err)
			assert.DeepEqual(t, r.ID, tc.want)
		})
	}
}

func TestIdentity(t *testing.T) {
	for _, tc := range []struct {
		name string
		a    authz.Authorizer
		p    authz.Principal
		code nserr.Code
	}{
		{"authorization off, anonymous", nil, authz.Anonymous, 0},
		{"disabled, anonymous", authz.Disabled{}, "", 0},
		{"on, anonymous", &fakeAuthz{}, authz.Anonymous, nserr.Unauthenticated},
		{"on, no principal", &fakeAuthz{}, "", nserr.Unauthenticated},
		{"on, a principal", &fakeAuthz{}, "user:alice", 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := Identity(tc.a).Check(context.Background(), &Request{Principal: tc.p})
			if tc.code == 0 {
				assert.NilError(t, err)
			} else {
				assert.Equal(t, nserr.CodeOf(err), tc.code)
			}
		})
	}
}

func TestObjectShape(t *testing.T) {
	for _, tc := range []struct {
		kind string
		id   ident.ID
		msg  string // "": valid
	}{
		{registry.KindTable, ident.ID{"ns", "t"}, ""},
		{registry.KindTable, ident.ID{"t"}, ""},
		{registry.KindTable, ident.ID{}, "root namespace"},
		{registry.KindNamespace, ident.ID{"ns"}, ""},
		{registry.KindNamespace, ident.ID{}, "root namespace"},
		{registry.KindTable, ident.ID{"ns", ""}, "empty"},
	} {
		err := ObjectShape(tc.kind, tc.id, "$")
		if tc.msg == "" {
			assert.NilError(t, err)
			continue
		}
		assert.Equal(t, nserr.CodeOf(err), nserr.InvalidInput, "%v", tc.id)
		assert.ErrorContains(t, err, tc.msg)
	}
	assert.Equal(t, nserr.CodeOf(ObjectShape("view", ident.ID{"a"}, "$")), nserr.Internal)
	assert.NilError(t, ProjectShape("p"))
	assert.ErrorContains(t, ProjectShape("Bad!"), "project id")
	assert.ErrorContains(t, WarehouseShape(""), "warehouse id")
}
