package control

import (
	"github.com/labstack/echo/v4"

	nserr "github.com/lancecat/lancecat/errors"
	"github.com/lancecat/lancecat/gen/controlapi"
	"github.com/lancecat/lancecat/governance"
	"github.com/lancecat/lancecat/handlers"
)

// GrantAccess is POST /v1/access/grant.
func (h *Control) GrantAccess(c echo.Context) error { return h.changeAccess(c, "GrantAccess", false) }

// RevokeAccess is POST /v1/access/revoke.
func (h *Control) RevokeAccess(c echo.Context) error { return h.changeAccess(c, "RevokeAccess", true) }

func (h *Control) changeAccess(c echo.Context, op string, revoke bool) error {
	if h.gov == nil {
		return handlers.NotBacked(c, op)
	}
	var req controlapi.AccessGrant
	if err := decodeControl(c, &req); err != nil {
		return err
	}
	in := governance.AccessChange{
		ObjectType: string(req.ObjectType), ObjectID: req.ObjectId, Subject: req.Subject, Relation: req.Relation,
	}
	if req.Delimiter != nil {
		in.Delimiter = *req.Delimiter
	}
	if err := h.gov.ChangeAccess(c.Request().Context(), ctlPrincipal(c), in, revoke); err != nil {
		return err
	}
	return handlers.WriteJSON(c, req)
}

// ListAccess is GET /v1/access/list: the direct grants on an object.
func (h *Control) ListAccess(c echo.Context, params controlapi.ListAccessParams) error {
	if h.gov == nil {
		return handlers.NotBacked(c, "ListAccess")
	}
	var typ, id, delim string
	for p, v := range map[*string]*string{&typ: params.ObjectType, &id: params.ObjectId, &delim: params.Delimiter} {
		if v != nil {
			*p = *v
		}
	}
	if typ == "" || id == "" {
		return nserr.InvalidInputf("object_type and object_id are required")
	}
	holders, err := h.gov.ListAccess(c.Request().Context(), ctlPrincipal(c), typ, id, delim)
	if err != nil {
		return err
	}
	out := controlapi.AccessList{ObjectType: typ, ObjectId: id,
		Grants: make([]struct {
			Relation string `json:"relation"`
			Subject  string `json:"subject"`
		}, len(holders))}
	for i, a := range holders {
		out.Grants[i].Relation, out.Grants[i].Subject = a.Relation, a.Subject
	}
	return handlers.WriteJSON(c, out)
}
