package handlers

import (
	"bytes"
	"encoding/json"
	"io"
	"reflect"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/lancecat/lancecat/authz"
	nserr "github.com/lancecat/lancecat/errors"
	"github.com/lancecat/lancecat/gen/nsapi"
	"github.com/lancecat/lancecat/ident"
)

// idRules is how this server spells ids in paths; both APIs share it.
type idRules struct {
	delimiter string
}

// checkDelimiter refuses a request whose `?delimiter=` is not the server's: ids would split
// differently on each side.
func (s idRules) checkDelimiter(delimiter *string) error {
	if delimiter != nil && *delimiter != "" && *delimiter != s.delimiter {
		return nserr.InvalidInputf("delimiter %q is not this server's delimiter %q", *delimiter, s.delimiter)
	}
	return nil
}

// pathID parses the route's {id} from the raw (still escaped) path: the generated wrapper
// path-decodes it, which would leave a form-encoded "+" where the client meant a space.
func (s idRules) pathID(c echo.Context, delimiter *string) (ident.ID, error) {
	if err := s.checkDelimiter(delimiter); err != nil {
		return nil, err
	}
	return ident.ParsePath(c.Param("id"), s.delimiter)
}

// readBody reads the whole request body (already bounded by the body-limit middleware).
func readBody(c echo.Context) ([]byte, error) {
	body, err := io.ReadAll(c.Request().Body)
	if err != nil {
		return nil, bodyReadError(err)
	}
	return body, nil
}

// decodeJSON decodes a JSON body into req, tolerating the forms clients really send for "no
// body": nothing at all, or the literal `null`. Unknown fields are ignored (newer clients).
func decodeJSON(c echo.Context, req any) error {
	body, err := readBody(c)
	if err != nil {
		return err
	}
	trimmed := bytes.TrimSpace(body)
	if len(trimmed) == 0 || bytes.Equal(trimmed, []byte("null")) {
		return nil
	}
	if err := json.Unmarshal(trimmed, req); err != nil {
		return nserr.InvalidInputf("request body is not valid JSON for this operation: %s", jsonProblem(err))
	}
	return nil
}

func jsonProblem(err error) string {
	var typeErr *json.UnmarshalTypeError
	if nserr.As(err, &typeErr) && typeErr.Field != "" {
		return "field " + typeErr.Field + " must be " + typeErr.Type.String() + ", not " + typeErr.Value
	}
	return err.Error()
}

// decodeRequest is the common front of every JSON operation on an object: it checks the delimiter,
// parses the path id, decodes the body into req, reconciles the body id with the path id (a
// missing body id takes the path's; a different one is refused), and folds a body identity under
// the header identity.
func (s *Server) decodeRequest(c echo.Context, delimiter *string, req any) (ident.ID, error) {
	id, err := s.pathID(c, delimiter)
	if err != nil {
		return nil, err
	}
	if err := decodeJSON(c, req); err != nil {
		return nil, err
	}
	if err := reconcileBodyID(id, req, s.delimiter); err != nil {
		return nil, err
	}
	foldBodyIdentity(c, req)
	return id, nil
}

var (
	idFieldType       = reflect.TypeFor[*[]string]()
	identityFieldType = reflect.TypeFor[*nsapi.Identity]()
)

// requestField finds a generated request's field by name and type; every generated request type
// has the spec's `id` and `identity`, but not every operation's body is such a type.
func requestField(req any, name string, typ reflect.Type) (reflect.Value, bool) {
	v := reflect.ValueOf(req)
	if v.Kind() != reflect.Pointer || v.Elem().Kind() != reflect.Struct {
		return reflect.Value{}, false
	}
	f := v.Elem().FieldByName(name)
	if !f.IsValid() || f.Type() != typ {
		return reflect.Value{}, false
	}
	return f, true
}

func reconcileBodyID(pathID ident.ID, req any, delimiter string) error {
	f, ok := requestField(req, "Id", idFieldType)
	if !ok {
		return nil
	}
	if f.IsNil() {
		parts := []string(pathID)
		f.Set(reflect.ValueOf(&parts))
		return nil
	}
	bodyID := ident.ID(*f.Interface().(*[]string))
	if !bodyID.Equal(pathID) {
		return nserr.InvalidInputf("body id %q does not match path id %q", bodyID.Join(delimiter), pathID.Join(delimiter))
	}
	return nil
}

func foldBodyIdentity(c echo.Context, req any) {
	f, ok := requestField(req, "Identity", identityFieldType)
	if !ok || f.IsNil() {
		return
	}
	body := f.Interface().(*nsapi.Identity)
	var fromBody authz.Identity
	if body.ApiKey != nil {
		fromBody.APIKey = *body.ApiKey
	}
	if body.AuthToken != nil {
		fromBody.BearerToken = *body.AuthToken
	}
	r := c.Request()
	merged := authz.IdentityFrom(r.Context()).Or(fromBody)
	c.SetRequest(r.WithContext(authz.WithIdentity(r.Context(), merged)))
}

// canonicalEnum accepts an enum value in any casing and with or without underscores (clients send
// "ExistOk", docs say "exist_ok") and rewrites it to the spelling in allowed.
func canonicalEnum(field string, value *string, allowed ...string) error {
	if value == nil || *value == "" {
		return nil
	}
	got := foldEnum(*value)
	for _, a := range allowed {
		if foldEnum(a) == got {
			*value = a
			return nil
		}
	}
	return nserr.InvalidInputf("%s %q is not one of %s", field, *value, strings.Join(allowed, ", "))
}

func foldEnum(s string) string {
	return strings.ToLower(strings.NewReplacer("_", "", "-", "", " ", "").Replace(s))
}
