package control

import (
	"bytes"
	"encoding/json"
	"reflect"
	"slices"
	"strings"

	"github.com/labstack/echo/v4"

	nserr "github.com/lancecat/lancecat/errors"
	"github.com/lancecat/lancecat/handlers"
	"github.com/lancecat/lancecat/wire"
)

// decodeControl is the one decoder of the control doors' JSON bodies, and it is stricter than the
// spec doors' decodeJSON (which also accepts what newer spec versions and the SDKs send; these
// change governance): a field the request does not have, a field spelt in another case, a required field left out, or
// a body that is not a JSON object is a 400 naming it. Lenient decoding turned typos into
// decisions: {"protectd": true} unprotected a table (protected decoded as false), as
// {"retention_dayz": 1} once set no policy at all (issue 11 item 9).
//
// The fields are the request type's JSON names; a field is required when the generated type
// holds it by value without omitempty (oapi-codegen's spelling of the schema's `required`).
func decodeControl(c echo.Context, req any) error {
	body, err := handlers.ReadBody(c)
	if err != nil {
		return err
	}
	return decodeStrict(bytes.TrimSpace(body), req)
}

func decodeStrict(body []byte, req any) error {
	fields, required := jsonFields(reflect.TypeOf(req).Elem())
	known := map[string]reflect.Type{}
	wire.GoFields(reflect.TypeOf(req).Elem(), known)
	var raw map[string]json.RawMessage
	if len(body) == 0 || bytes.Equal(body, []byte("null")) {
		raw = map[string]json.RawMessage{}
	} else if err := json.Unmarshal(body, &raw); err != nil || raw == nil {
		return nserr.InvalidInputf("request body must be a JSON object with the fields %s", strings.Join(fields, ", "))
	}
	if err := wire.RefuseUnknown(raw, known, ""); err != nil {
		return err
	}
	for _, k := range required {
		if v, ok := raw[k]; !ok || bytes.Equal(bytes.TrimSpace(v), []byte("null")) {
			return nserr.InvalidInputf("field %s is required", k)
		}
	}
	if len(raw) == 0 {
		return nil
	}
	if err := json.Unmarshal(body, req); err != nil {
		return nserr.InvalidInputf("request body is not valid JSON for this operation: %s", wire.JSONProblem(err))
	}
	return nil
}

// jsonFields lists a struct's JSON field names, sorted, and those of them that are required.
func jsonFields(t reflect.Type) (fields, required []string) {
	for i := range t.NumField() {
		f := t.Field(i)
		if !f.IsExported() {
			continue
		}
		tag := f.Tag.Get("json")
		name, opts, _ := strings.Cut(tag, ",")
		if name == "-" {
			continue
		}
		if name == "" {
			name = f.Name
		}
		fields = append(fields, name)
		if f.Type.Kind() != reflect.Pointer && !strings.Contains(opts, "omitempty") {
			required = append(required, name)
		}
	}
	slices.Sort(fields)
	return fields, required
}
