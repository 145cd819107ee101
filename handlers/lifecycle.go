package handlers

// The query parameters of the doors that create, destroy or move a table or namespace. The checks
// before such an operation (the takeover's authorization, protection, the trash) and what follows
// it are the governed catalog's (catalog/governed); these doors only read force and purge and pass
// them on as the call's options (catalog.WithForce, catalog.WithPurge).

import (
	"strconv"

	"github.com/labstack/echo/v4"

	"github.com/lancecat/lancecat/catalog"
	nserr "github.com/lancecat/lancecat/errors"
)

// forceOptions are the options of a destroying or moving door: force=true overrides protection
// (catalog.WithForce). A force that is not a boolean is the 400 of the door.
func forceOptions(c echo.Context) ([]catalog.Option, error) {
	force, err := forceParam(c)
	if err != nil || !force {
		return nil, err
	}
	return []catalog.Option{catalog.WithForce()}, nil
}

// purgeOptions are a drop door's opts with purge=true added (catalog.WithPurge: the catalog then
// destroys even when the trash would keep the drop). A purge that is not a boolean is the 400 of
// the door.
func purgeOptions(c echo.Context, opts []catalog.Option) ([]catalog.Option, error) {
	purge, err := boolParam(c, "purge")
	if err != nil {
		return nil, err
	}
	if purge {
		opts = append(opts, catalog.WithPurge())
	}
	return opts, nil
}

// overwriteOptions are the options of a create door in mode: an Overwrite carries force
// (catalog.WithForce), read from the query only there, where it can matter.
func overwriteOptions(c echo.Context, mode string) ([]catalog.Option, error) {
	if mode != catalog.ModeOverwrite {
		return nil, nil
	}
	return forceOptions(c)
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
