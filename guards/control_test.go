package guards

import (
	"context"
	"testing"

	"gotest.tools/v3/assert"

	"github.com/lancecat/lancecat/authz"
	nserr "github.com/lancecat/lancecat/errors"
)

// TestControlChain: identity, then the path's shape, then the door on the object the path names;
// a destructive project door answers a denial exactly like a missing project (no existence
// oracle), while an outage still fails closed as itself.
func TestControlChain(t *testing.T) {
	a := &fakeAuthz{allow: map[string]bool{
		grant("user:alice", authz.ProjectDelete, authz.ProjectObject("p")):                true,
		grant("user:alice", authz.WarehouseDescribe, authz.WarehouseObject("w")):          true,
		grant("user:alice", authz.EventsRead, authz.Catalog):                              true,
		grant("user:alice", authz.TablePolicySet, authz.TableObject([]string{"ns", "t"})): true,
		grant("user:alice", authz.TablePolicySet, authz.TableObject([]string{"t"})):       true,
	}}
	d := Deps{Delimiter: "$", Authorizer: a}
	params := func(kv ...string) func(string) string {
		return func(n string) string {
			for i := 0; i < len(kv); i += 2 {
				if kv[i] == n {
					return kv[i+1]
				}
			}
			return ""
		}
	}
	for _, tc := range []struct {
		name, op string
		p        authz.Principal
		param    func(string) string
		code     nserr.Code // 0: allowed
		msg      string
	}{
		{"anonymous", "ListEvents", authz.Anonymous, params(), nserr.Unauthenticated, ""},
		{"events", "ListEvents", "user:alice", params(), 0, ""},
		{"events denied", "ListEvents", "user:bob", params(), nserr.PermissionDenied, ""},
		{"project delete", "DeleteProject", "user:alice", params("project_id", "p"), 0, ""},
		{"project delete denied reads as missing", "DeleteProject", "user:bob", params("project_id", "p"), nserr.NamespaceNotFound, `project "p" does not exist`},
		{"project delete of a missing project, denied", "DeleteProject", "user:bob", params("project_id", "q"), nserr.NamespaceNotFound, `project "q" does not exist`},
		{"project shape before authorization", "DeleteProject", "user:bob", params("project_id", "Bad!"), nserr.InvalidInput, "project id"},
		{"project id is path-unescaped", "DeleteProject", "user:alice", params("project_id", "%70"), 0, ""},
		{"warehouse describe denied is 403 (a reader door)", "DescribeWarehouse", "user:bob", params("warehouse_id", "w"), nserr.PermissionDenied, ""},
		{"warehouse describe", "DescribeWarehouse", "user:alice", params("warehouse_id", "w"), 0, ""},
		{"table policy", "SetTablePolicy", "user:alice", params("id", "ns%24t"), 0, ""},
		{"a table of the root namespace is a table", "SetTablePolicy", "user:alice", params("id", "t"), 0, ""},
		{"table policy on the root namespace is 400 first", "SetTablePolicy", "user:bob", params("id", "%24"), nserr.InvalidInput, "root namespace"},
		{"namespace protection on the root is 400 first", "SetNamespaceProtection", "user:bob", params("id", "%24"), nserr.InvalidInput, ""},
		{"decided in the service: identity only", "DeleteWarehouse", "user:bob", params("warehouse_id", "w"), 0, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := &Request{Op: tc.op, Principal: tc.p, Param: tc.param}
			_, err := ControlChain(tc.op, d).Run(context.Background(), r)
			if tc.code == 0 {
				assert.NilError(t, err)
				return
			}
			assert.Equal(t, nserr.CodeOf(err), tc.code, "%v", err)
			if tc.msg != "" {
				assert.ErrorContains(t, err, tc.msg)
			}
		})
	}
	a.down = true
	_, err := ControlChain("DeleteProject", d).Run(context.Background(), &Request{Principal: "user:alice", Param: params("project_id", "p")})
	assert.Equal(t, nserr.CodeOf(err), nserr.ServiceUnavailable, "an outage is never hidden as a missing project")
}
