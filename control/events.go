package control

import (
	"github.com/labstack/echo/v4"

	"github.com/lancecat/lancecat/gen/controlapi"
	"github.com/lancecat/lancecat/handlers"
)

// ListEvents is GET /v1/events.
func (h *Control) ListEvents(c echo.Context, params controlapi.ListEventsParams) error {
	if h.gov == nil {
		return handlers.NotBacked(c, "ListEvents")
	}
	since, limit := "", 0
	if params.Since != nil {
		since = *params.Since
	}
	if params.Limit != nil {
		limit = int(*params.Limit)
	}
	events, cursor, reset, err := h.gov.ReadEvents(c.Request().Context(), ctlPrincipal(c), since, limit)
	if err != nil {
		return err
	}
	out := controlapi.EventList{Events: make([]controlapi.Event, len(events)), Cursor: cursor, Reset: reset}
	for i, e := range events {
		ev := controlapi.Event{Cursor: e.Cursor, Type: e.Type, At: e.At, Actor: ctlOptional(e.Actor), Object: ctlOptional(e.Object)}
		if len(e.Attributes) > 0 {
			attrs := e.Attributes
			ev.Attributes = &attrs
		}
		out.Events[i] = ev
	}
	return handlers.WriteJSON(c, out)
}

// DescribeMe is GET /v1/me.
func (h *Control) DescribeMe(c echo.Context) error {
	if h.gov == nil {
		return handlers.NotBacked(c, "DescribeMe")
	}
	me, err := h.gov.DescribeMe(c.Request().Context(), ctlPrincipal(c))
	if err != nil {
		return err
	}
	projects := me.Projects
	return handlers.WriteJSON(c, controlapi.Me{
		Principal: me.Principal, EstateAdmin: me.EstateAdmin,
		Authorization: controlapi.MeAuthorization(me.Authorization), Projects: &projects,
	})
}
