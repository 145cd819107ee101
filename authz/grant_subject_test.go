package authz

import (
	"errors"
	"strings"
	"testing"

	"gotest.tools/v3/assert"

	nserr "github.com/lancecat/lancecat/errors"
	"github.com/lancecat/lancecat/ident"
)

// A subject the model does not accept for a rung is refused in our words before OpenFGA sees it:
// its own refusal echoes its response body and names model internals (issue 11, item 9).
func TestGrantTupleSubjectForms(t *testing.T) {
	tbl := TableObject(ident.ID{"n", "t"})
	cases := []struct {
		subject  Subject
		relation string
		object   Object
		ok       bool
	}{
		{User("bob").Subject(), "reader", tbl, true},
		{TeamMembers("eng"), "owner", tbl, true},
		{RoleAssignees("ops"), "writer", tbl, true},
		{Everyone, "reader", tbl, false},
		{Everyone, "owner", NamespaceObject(ident.ID{"n"}), false},
		{Everyone, "manage_grants", WarehouseObject("w"), false},
		{Everyone, "managed_access", NamespaceObject(ident.ID{"n"}), true},
		{User("bob").Subject(), "managed_access", NamespaceObject(ident.ID{"n"}), false},
	}
	for _, c := range cases {
		t.Run(string(c.subject)+" "+c.relation, func(t *testing.T) {
			_, err := grantTuple(c.subject, c.relation, c.object)
			if c.ok {
				assert.NilError(t, err)
				return
			}
			assert.Assert(t, errors.Is(err, nserr.ErrInvalidInput), err)
			assert.Assert(t, !strings.Contains(err.Error(), "body") && !strings.Contains(err.Error(), "validation"), err)
		})
	}
}
