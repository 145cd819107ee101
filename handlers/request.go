package handlers

import (
	"io"
	"net/http"
	"reflect"
	"slices"

	"github.com/labstack/echo/v4"

	"github.com/lancecat/lancecat/authz"
	"github.com/lancecat/lancecat/catalog"
	nserr "github.com/lancecat/lancecat/errors"
	"github.com/lancecat/lancecat/gen/nsapi"
	"github.com/lancecat/lancecat/guards"
	"github.com/lancecat/lancecat/ident"
	"github.com/lancecat/lancecat/wire"
)

// idRules is how this server spells ids in paths; both APIs share it.
type idRules struct {
	delimiter string
}

// checkDelimiter is the delimiter shape guard (guards.CheckDelimiter) with this server's delimiter.
func (s idRules) checkDelimiter(delimiter *string) error {
	return guards.CheckDelimiter(delimiter, s.delimiter)
}

// pathID is the route's {id}: the one the guard chain parsed (guards.PathID, which checked the
// delimiter too), handed on with the request (guards.RequestFrom). Without a chain in front (a
// handler test, a route with no door) it is parsed here, the same way: from the raw (still
// escaped) path, since the generated wrapper path-decodes it, which would leave a form-encoded
// "+" where the client meant a space.
func (s idRules) pathID(c echo.Context, delimiter *string) (ident.ID, error) {
	if r := guards.RequestFrom(c.Request().Context()); r != nil && r.ID != nil {
		return r.ID, nil
	}
	if err := s.checkDelimiter(delimiter); err != nil {
		return nil, err
	}
	return ident.ParsePath(c.Param("id"), s.delimiter)
}

// wholeBody is a request body already held in memory in full (the server's body middleware):
// Bytes is all of it, not to be modified.
type wholeBody interface {
	Bytes() []byte
	Len() int // what is left unread
}

// readBody reads the whole request body (already bounded by the body-limit middleware). A body
// the middleware holds is taken as it is, not copied; else a declared length is read into one
// buffer of that size (io.ReadAll's doubling held up to twice a large Arrow body).
func readBody(c echo.Context) ([]byte, error) {
	r := c.Request()
	if wb, ok := r.Body.(wholeBody); ok && wb.Len() == len(wb.Bytes()) {
		body := wb.Bytes()
		r.Body, r.ContentLength = http.NoBody, 0 // consumed, as a read to the end would leave it
		return body, nil
	}
	if n := r.ContentLength; n > 0 && n <= maxPreallocBody {
		body := make([]byte, n)
		if _, err := io.ReadFull(r.Body, body); err != nil {
			return nil, bodyReadError(err)
		}
		r.Body, r.ContentLength = http.NoBody, 0
		return body, nil
	}
	body, err := io.ReadAll(r.Body)
	if err != nil {
		return nil, bodyReadError(err)
	}
	return body, nil
}

// maxPreallocBody bounds what a declared Content-Length may make readBody allocate before the
// bytes arrive (without the middleware in front, a client could declare any length).
const maxPreallocBody = 1 << 30

// decodeJSON decodes a JSON body into req, tolerating the forms clients really send for "no
// body": nothing at all, or the literal `null`. A field the operation does not know is refused
// (wire.Decode: 400 code 13 naming it and the nearest known one).
func decodeJSON(c echo.Context, req any) error { return decodeJSONFor(c, "", req) }

// decodeJSONFor is decodeJSON for the operation op (its spec model is op + "Request"), which
// says what a shape shared by several operations may hold.
func decodeJSONFor(c echo.Context, op string, req any) error {
	body, err := readBody(c)
	if err != nil {
		return err
	}
	return wire.Decode(body, req, op)
}

// decodeRequest is the common front of every JSON operation on an object: it takes the path id
// (pathID), reads the body once and decodes it into req, reconciles the body id with the path id
// (a missing body id takes the path's; a different one is refused), folds a body identity under
// the header identity, and resolves a body that becomes a catalog request (wire.Query: what the
// decoder cannot check, before any table is loaded).
func (s *Server) decodeRequest(c echo.Context, delimiter *string, req any) (ident.ID, error) {
	return s.decodeRequestFor(c, "", delimiter, req)
}

// decodeRequestFor is decodeRequest for the operation op (decodeJSONFor).
func (s *Server) decodeRequestFor(c echo.Context, op string, delimiter *string, req any) (ident.ID, error) {
	id, err := s.pathID(c, delimiter)
	if err != nil {
		return nil, err
	}
	if err := decodeJSONFor(c, op, req); err != nil {
		return nil, err
	}
	if err := reconcileBodyID(id, req, s.delimiter); err != nil {
		return nil, err
	}
	foldBodyIdentity(c, req)
	if r, ok := req.(interface{ Resolve() error }); ok {
		if err := r.Resolve(); err != nil {
			return nil, err
		}
	}
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

// foldBodyIdentity records a body `identity` under the header identity in the request context.
// It is no credential: the principal was settled from the headers before the body was read (with
// authorization on, a request with only a body identity never gets here: 401), and nothing
// authenticates from the folded identity.
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

// decodedKey holds the request a door decoded, for the rest of the request.
const decodedKey = "lancecat.decoded-request"

// decoded is one door's decoded request: its path id and its body with every enum canonical.
type decoded[T any] struct {
	id  ident.ID
	req *T
	err error
}

// decodeOnce decodes a request once: the first caller (a guard, or the handler when no guard
// asked) runs decode, every later caller in the same request gets the very same values, its
// error included. The guards therefore decide on exactly what the handler will act on; neither
// reads raw bytes of its own.
func decodeOnce[T any](c echo.Context, decode func() (ident.ID, *T, error)) (ident.ID, *T, error) {
	if d, ok := c.Get(decodedKey).(*decoded[T]); ok {
		return d.id, d.req, d.err
	}
	id, req, err := decode()
	c.Set(decodedKey, &decoded[T]{id: id, req: req, err: err})
	return id, req, err
}

// Create modes as the catalog spells them, the only spellings past the decoder.
var (
	createModes   = []string{catalog.ModeCreate, catalog.ModeExistOk, catalog.ModeOverwrite}
	registerModes = []string{catalog.ModeCreate, catalog.ModeOverwrite}
)

// noQueryMode is the guards.NoQueryMode shape guard on the request's query.
func noQueryMode(c echo.Context) error {
	_, sent := c.QueryParams()["mode"]
	return guards.NoQueryMode(sent)
}

// createNamespaceRequest is the decoded CreateNamespace request (mode canonical).
func (s *Server) createNamespaceRequest(c echo.Context, delimiter *string) (ident.ID, *nsapi.CreateNamespaceRequest, error) {
	return decodeOnce(c, func() (ident.ID, *nsapi.CreateNamespaceRequest, error) {
		var req nsapi.CreateNamespaceRequest
		id, err := s.decodeRequest(c, delimiter, &req)
		if err == nil {
			err = noQueryMode(c)
		}
		if err == nil {
			err = guards.CanonicalEnum("mode", req.Mode, createModes...)
		}
		return id, &req, err
	})
}

// registerTableRequest is the decoded RegisterTable request (mode canonical).
func (s *Server) registerTableRequest(c echo.Context, delimiter *string) (ident.ID, *nsapi.RegisterTableRequest, error) {
	return decodeOnce(c, func() (ident.ID, *nsapi.RegisterTableRequest, error) {
		var req nsapi.RegisterTableRequest
		id, err := s.decodeRequest(c, delimiter, &req)
		if err == nil {
			err = noQueryMode(c)
		}
		if err == nil {
			err = guards.CanonicalEnum("mode", req.Mode, registerModes...)
		}
		return id, &req, err
	})
}

// declareTableRequest is the decoded DeclareTable request (it has no mode: a declare only creates).
func (s *Server) declareTableRequest(c echo.Context, delimiter *string) (ident.ID, *nsapi.DeclareTableRequest, error) {
	return decodeOnce(c, func() (ident.ID, *nsapi.DeclareTableRequest, error) {
		var req nsapi.DeclareTableRequest
		id, err := s.decodeRequest(c, delimiter, &req)
		if err == nil {
			err = noQueryMode(c)
		}
		return id, &req, err
	})
}

// createTableRequest is the decoded query of CreateTable (its body is an Arrow stream, read by
// the handler): the mode is the query's, canonical.
func (s *Server) createTableRequest(c echo.Context, params *nsapi.CreateTableParams) (ident.ID, *nsapi.CreateTableParams, error) {
	return decodeOnce(c, func() (ident.ID, *nsapi.CreateTableParams, error) {
		id, err := s.pathID(c, params.Delimiter)
		if err != nil {
			return nil, params, err
		}
		return id, params, guards.CanonicalEnum("mode", params.Mode, createModes...)
	})
}

// dropNamespaceRequest is the decoded DropNamespace request (mode and behavior canonical).
func (s *Server) dropNamespaceRequest(c echo.Context, delimiter *string) (ident.ID, *nsapi.DropNamespaceRequest, error) {
	return decodeOnce(c, func() (ident.ID, *nsapi.DropNamespaceRequest, error) {
		var req nsapi.DropNamespaceRequest
		id, err := s.decodeRequest(c, delimiter, &req)
		if err == nil {
			err = noQueryMode(c)
		}
		if err == nil {
			err = guards.CanonicalEnum("mode", req.Mode, catalog.ModeFail, catalog.ModeSkip)
		}
		if err == nil {
			err = guards.CanonicalEnum("behavior", req.Behavior, catalog.BehaviorRestrict, catalog.BehaviorCascade)
		}
		return id, &req, err
	})
}

// renameBody is RenameTable's body in both dialects.
type renameBody struct {
	nsapi.RenameTableRequest
	NewNamespace *[]string `json:"new_namespace,omitempty"`
}

// renameTableRequest is the decoded RenameTable request.
func (s *Server) renameTableRequest(c echo.Context, delimiter *string) (ident.ID, *nsapi.RenameTableRequest, error) {
	return decodeOnce(c, func() (ident.ID, *nsapi.RenameTableRequest, error) {
		// A LanceDB remote-mode client names the destination `new_namespace`; the spec
		// `new_namespace_id`. Both are accepted; they must agree when both are sent.
		var req renameBody
		id, err := s.decodeRequest(c, delimiter, &req)
		if err == nil && req.NewNamespace != nil {
			switch {
			case req.NewNamespaceId == nil:
				req.NewNamespaceId = req.NewNamespace
			case !slices.Equal(*req.NewNamespaceId, *req.NewNamespace):
				err = nserr.InvalidInputf("new_namespace and new_namespace_id name different namespaces")
			}
		}
		return id, &req.RenameTableRequest, err
	})
}

// renameDestination is the namespace a rename request moves its table to: new_namespace_id absent (or JSON
// null) keeps the table in its namespace; a list names the destination namespace, and the empty
// list is the root namespace, as the spec writes the root's identifier ("an empty or null list";
// null here is "not specified", which the spec says keeps the namespace).
func (s *Server) renameDestination(req *nsapi.RenameTableRequest) (newNS ident.ID, err error) {
	if req.NewNamespaceId != nil {
		newNS = ident.ID(slices.Clone(*req.NewNamespaceId))
		if newNS == nil {
			newNS = ident.ID{}
		}
		if err := newNS.Validate(s.delimiter); err != nil {
			return nil, nserr.InvalidInputf("new_namespace_id: %v", err)
		}
	}
	if err := (ident.ID{req.NewTableName}).Validate(s.delimiter); err != nil {
		return nil, nserr.InvalidInputf("new_table_name: %v", err)
	}
	return newNS, nil
}
