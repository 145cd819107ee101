package handlers

// The query parameters of the doors that create, destroy or move a table or namespace. The checks
// before such an operation (the takeover's authorization, protection, the trash) and what follows
// it are the governed catalog's (catalog/governed); these doors only pass force and purge on in the
// request's context.

import (
	"context"
	"strconv"

	"github.com/labstack/echo/v4"

	"github.com/lancecat/lancecat/catalog"
	"github.com/lancecat/lancecat/catalog/governed"
	nserr "github.com/lancecat/lancecat/errors"
)

// purgeContext is ctx marking its drop as purging when purge=true (the catalog then destroys even
// when the trash would keep the drop). A purge that is not a boolean is the 400 of the door.
func purgeContext(ctx context.Context, c echo.Context) (context.Context, error) {
	purge, err := boolParam(c, "purge")
	if err != nil {
		return nil, err
	}
	return governed.WithPurge(ctx, purge), nil
}

// overwriteContext is the request's context of a create door in mode: an Overwrite carries force
// (governed.WithForce), read from the query only there, where it can matter.
func overwriteContext(c echo.Context, mode string) (context.Context, error) {
	ctx := c.Request().Context()
	if mode != catalog.ModeOverwrite {
		return ctx, nil
	}
	force, err := forceParam(c)
	if err != nil {
		return nil, err
	}
	return governed.WithForce(ctx, force), nil
}

// boolParam reads an optional boolean query parameter: absent is false, anything
// strconv.ParseBool does not accept is 400.
func boolParam(c echo.Context, name string) (bool, error) {
	raw := c.QueryParam(name)
	if raw == "" {
		return false, nil
	}
	v, err := strconv.ParseBool(raw)
	if err != nil {
		return false, nserr.InvalidInputf("%s %q is not a boolean (true or false)", name, raw)
	}
	return v, nil
}

// forceParam reads the force query parameter of a destroying door (the spec does not define it):
// absent is false, anything strconv.ParseBool does not accept is 400.
func forceParam(c echo.Context) (bool, error) { return boolParam(c, "force") }
