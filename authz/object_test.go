package authz_test

import (
	"strings"
	"testing"
	"unicode/utf8"

	"gotest.tools/v3/assert"

	"github.com/lancecat/lancecat/authz"
	"github.com/lancecat/lancecat/ident"
)

func TestObjectIDs(t *testing.T) {
	long := strings.Repeat("x", 255)
	cases := []struct {
		name string
		obj  authz.Object
		want string // "" when only the form matters
		form string // "plain", "encoded", "hashed"
	}{
		{"table", authz.TableObject(ident.ID{"db1", "users"}), "table:db1$users", "plain"},
		{"nested namespace", authz.NamespaceObject(ident.ID{"a", "b", "c"}), "namespace:a$b$c", "plain"},
		{"project", authz.ProjectObject("acme-prod"), "project:acme-prod", "plain"},
		{"warehouse", authz.WarehouseObject("gold_1"), "warehouse:gold_1", "plain"},
		{"root namespace is the catalog", authz.NamespaceObject(ident.ID{}), "catalog:lancecat", "plain"},
		{"colon", authz.TableObject(ident.ID{"a:b", "t"}), "", "encoded"},
		{"hash", authz.TableObject(ident.ID{"a#b", "t"}), "", "encoded"},
		{"space", authz.TableObject(ident.ID{"my table", "t"}), "", "encoded"},
		{"unicode", authz.TableObject(ident.ID{"räksmörgås", "日本"}), "", "encoded"},
		{"control", authz.TableObject(ident.ID{"a\tb", "t\n"}), "", "encoded"},
		{"tilde lead", authz.TableObject(ident.ID{"~x", "t"}), "", "encoded"},
		{"dollar inside a name", authz.TableObject(ident.ID{"a$b"}), "", "encoded"},
		{"long plain", authz.TableObject(ident.ID{long, long}), "", "hashed"},
		{"long unicode", authz.NamespaceObject(ident.ID{strings.Repeat("ö", 120), strings.Repeat("é", 120)}), "", "hashed"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			assert.NilError(t, c.obj.Validate())
			s := c.obj.String()
			assert.Assert(t, utf8.RuneCountInString(s) <= 256 && len(s) <= 256, "%q is %d bytes", s, len(s))
			if c.want != "" {
				assert.Equal(t, s, c.want)
			}
			switch c.form {
			case "encoded":
				assert.Assert(t, strings.HasPrefix(c.obj.ID, "~"), c.obj.ID)
			case "hashed":
				assert.Assert(t, strings.HasPrefix(c.obj.ID, "="), c.obj.ID)
			default:
				assert.Assert(t, !strings.ContainsAny(c.obj.ID, "~="), c.obj.ID)
			}
		})
	}
}

// Names that join to the same string under a naive scheme must still get distinct ids.
func TestObjectIDsDoNotCollide(t *testing.T) {
	ids := []ident.ID{
		{"a", "b"}, {"a$b"}, {"a", "b", "c"}, {"a$b", "c"}, {"a", "b$c"}, {"a b"}, {"a", " b"},
		{"~"}, {"~YQ"}, {"YQ"}, {"=x"}, {"a\x01b"}, {"a", "\x01b"},
		{strings.Repeat("x", 200), strings.Repeat("y", 200)}, {strings.Repeat("x", 200), strings.Repeat("y", 201)},
		{strings.Repeat("x", 200) + "$" + strings.Repeat("y", 200)},
	}
	seen := map[string]ident.ID{}
	for _, id := range ids {
		for _, o := range []authz.Object{authz.TableObject(id), authz.NamespaceObject(id)} {
			assert.NilError(t, o.Validate())
			prev, dup := seen[o.String()]
			assert.Assert(t, !dup, "%q and %q both encode to %s", prev, id, o)
			seen[o.String()] = id
		}
	}
}

func TestDecodeID(t *testing.T) {
	for _, id := range []ident.ID{{"db", "t"}, {"a:b", "ö ü"}, {"x"}} {
		got, ok := authz.DecodeID(authz.TableObject(id).ID)
		assert.Assert(t, ok)
		assert.DeepEqual(t, ident.ID(got), id)
	}
	_, ok := authz.DecodeID(authz.TableObject(ident.ID{strings.Repeat("x", 255), strings.Repeat("y", 255)}).ID)
	assert.Assert(t, !ok, "a hashed id cannot be reversed")
}

func TestEmptyNamesAreInvalid(t *testing.T) {
	for _, o := range []authz.Object{authz.ProjectObject(""), authz.WarehouseObject(""), authz.TableObject(nil), {Type: "doc", ID: "x"}} {
		assert.ErrorContains(t, o.Validate(), "authorization object")
	}
}

func TestPrincipals(t *testing.T) {
	cases := []struct {
		name string
		got  authz.Principal
		want string // "" when only validity matters
	}{
		{"plain subject", authz.User("alice"), "user:alice"},
		{"email", authz.User("alice@example.com"), "user:alice@example.com"},
		{"api key", authz.APIKey("k1"), "user:apikey-k1"},
		{"auth0 style", authz.User("auth0|abc"), ""},
		{"colon", authz.User("urn:x:y"), ""},
		{"wildcard subject is not everyone", authz.User("*"), ""},
		{"long", authz.User(strings.Repeat("s", 600)), ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if c.want != "" {
				assert.Equal(t, c.got.String(), c.want)
			}
			assert.Assert(t, strings.HasPrefix(c.got.String(), "user:"))
			assert.Assert(t, c.got != "user:*")
			assert.Assert(t, len(c.got) <= 512)
			assert.Assert(t, !strings.ContainsAny(strings.TrimPrefix(c.got.String(), "user:"), ":# \t\n"))
		})
	}
}

// A token subject must never be able to pose as an API key's principal.
func TestSubjectCannotPoseAsAPIKey(t *testing.T) {
	assert.Assert(t, authz.User("apikey-k1") != authz.APIKey("k1"))
	assert.Assert(t, !strings.HasPrefix(authz.User("apikey-k1").String(), "user:apikey-"))
}

func FuzzObjectID(f *testing.F) {
	f.Add("db", "t")
	f.Add("a:b#c", "ö ü")
	f.Add(strings.Repeat("x", 255), strings.Repeat("y", 255))
	f.Fuzz(func(t *testing.T, a, b string) {
		id := ident.ID{a, b}
		if id.Validate(ident.DefaultDelimiter) != nil {
			return
		}
		o := authz.TableObject(id)
		assert.NilError(t, o.Validate())
		if got, ok := authz.DecodeID(o.ID); ok {
			assert.DeepEqual(t, ident.ID(got), id)
		} else {
			assert.Assert(t, strings.HasPrefix(o.ID, "="), "only hashed ids are irreversible: %q", o.ID)
		}
	})
}
