package governance

import (
	"cmp"
	"context"
	"errors"
	"slices"

	"github.com/lancecat/lancecat/authz"
	nserr "github.com/lancecat/lancecat/errors"
	"github.com/lancecat/lancecat/ident"
	"github.com/lancecat/lancecat/registry"
)

// Events of the access doors.
const (
	EventGrantRevoked = "grant_revoked"
)

// AccessChange is what POST /v1/access/grant and /v1/access/revoke ask for.
type AccessChange struct {
	ObjectType string // project, warehouse, namespace or table
	ObjectID   string // a project or warehouse id, or namespace/table parts joined by Delimiter
	Delimiter  string // "" is the service's
	Subject    string // user:<id>, team:<id>#member, role:<id>#assignee, user:*
	Relation   string // the rung
}

// ChangeAccess grants (or with revoke, revokes) a rung. Guards: identity 401 → shape 400 → the
// door the rung picks, on the object, 403 → the object exists 404 → the tuple write → event. A
// door on a table, namespace or warehouse answers 403 before existence, like the spec's doors;
// with authorization off there are no grants (406).
func (s *Service) ChangeAccess(ctx context.Context, p authz.Principal, req AccessChange, revoke bool) error {
	p, err := s.caller(p)
	if err != nil {
		return err
	}
	obj, exists, err := s.accessObject(req)
	if err != nil {
		return err
	}
	door, err := accessDoor(req.ObjectType, req.Relation, revoke)
	if err != nil {
		return err
	}
	if !s.authz.Enabled() {
		return nserr.Unsupportedf("authorization is off: there are no grants to change")
	}
	if err := s.authz.Check(ctx, p, door, obj); err != nil {
		return err
	}
	if err := exists(ctx); err != nil {
		return err
	}
	subject := authz.Subject(req.Subject)
	if revoke {
		err = s.authz.Revoke(ctx, subject, req.Relation, obj)
	} else {
		err = s.authz.Grant(ctx, subject, req.Relation, obj)
	}
	if err != nil {
		return err
	}
	typ := EventGrantAdded
	if revoke {
		typ = EventGrantRevoked
	}
	s.emit(ctx, typ, p, obj.String(), map[string]string{"subject": req.Subject, "relation": req.Relation})
	return nil
}

// AccessHolder is one direct grant on an object.
type AccessHolder struct {
	Subject  string
	Relation string
}

// listedRungs are the relations ListAccess reports: the rungs a grant makes. Structural edges
// (parent, child), derived tuples (navigator) and the managed-access marker are not grants.
var listedRungs = map[string]bool{
	"owner": true, "writer": true, "reader": true, "validator": true, "maintainer": true,
	"manage_grants": true, "pass_grants": true, "admin": true, "member": true,
}

// grantReader is the part of an authorizer that reads the tuples on an object.
type grantReader interface {
	Grants(ctx context.Context, relation string, object authz.Object) ([]authz.Tuple, error)
}

// ListAccess answers who holds which rung directly on an object, sorted by relation then
// subject. Guards: identity 401 → shape 400 → the object type's access-list door 403 (before
// existence: no oracle) → the object exists 404; with authorization off there are no grants (406).
func (s *Service) ListAccess(ctx context.Context, p authz.Principal, objectType, objectID, delim string) ([]AccessHolder, error) {
	p, err := s.caller(p)
	if err != nil {
		return nil, err
	}
	obj, exists, err := s.accessObject(AccessChange{ObjectType: objectType, ObjectID: objectID, Delimiter: delim})
	if err != nil {
		return nil, err
	}
	reader, ok := s.authz.(grantReader)
	if !s.authz.Enabled() || !ok {
		return nil, nserr.Unsupportedf("authorization is off: there are no grants to list")
	}
	door := map[string]authz.Action{
		authz.TypeProject: authz.ProjectMembersList, authz.TypeWarehouse: authz.WarehouseAccessList,
		authz.TypeNamespace: authz.NamespaceAccessList, authz.TypeTable: authz.TableAccessList,
	}[objectType]
	if err := s.authz.Check(ctx, p, door, obj); err != nil {
		return nil, err
	}
	if err := exists(ctx); err != nil {
		return nil, err
	}
	tuples, err := reader.Grants(ctx, "", obj)
	if err != nil {
		return nil, err
	}
	out := make([]AccessHolder, 0, len(tuples))
	for _, t := range tuples {
		if listedRungs[t.Relation] {
			out = append(out, AccessHolder{Subject: t.User, Relation: t.Relation})
		}
	}
	slices.SortFunc(out, func(a, b AccessHolder) int {
		return cmp.Or(cmp.Compare(a.Relation, b.Relation), cmp.Compare(a.Subject, b.Subject))
	})
	return out, nil
}

// accessObject parses the object of an access change and returns how to prove it exists.
func (s *Service) accessObject(req AccessChange) (authz.Object, func(context.Context) error, error) {
	delim := req.Delimiter
	if delim == "" {
		delim = s.delim
	}
	switch req.ObjectType {
	case authz.TypeProject:
		if err := projectShape(req.ObjectID); err != nil {
			return authz.Object{}, nil, err
		}
		return authz.ProjectObject(req.ObjectID), func(ctx context.Context) error {
			_, _, err := registry.Read[registry.Project](ctx, s.store, registry.ProjectKey(req.ObjectID))
			if errors.Is(err, registry.ErrNotFound) {
				return nserr.NamespaceNotFoundf("project %q does not exist", req.ObjectID)
			}
			if err != nil {
				return registryError(err)
			}
			return nil
		}, nil
	case authz.TypeWarehouse:
		if err := warehouseShape(req.ObjectID); err != nil {
			return authz.Object{}, nil, err
		}
		return authz.WarehouseObject(req.ObjectID), func(ctx context.Context) error {
			_, err := s.readWarehouse(ctx, req.ObjectID)
			return err
		}, nil
	case authz.TypeNamespace, authz.TypeTable:
		id, err := ident.Split(req.ObjectID, delim)
		if err != nil {
			return authz.Object{}, nil, err
		}
		if id.IsRoot() {
			return authz.Object{}, nil, nserr.InvalidInputf("object_id names the root namespace, which is the catalog: its admins are the estate admins, listed, granted and revoked with 'lancecat admin estate list|grant|revoke'")
		}
		exists := func(context.Context) error { return nil }
		if req.ObjectType == authz.TypeTable {
			if s.objects != nil {
				exists = func(ctx context.Context) error { return s.objects.TableExists(ctx, id) }
			}
			return authz.TableObject(id), exists, nil
		}
		if s.objects != nil {
			exists = func(ctx context.Context) error { return s.objects.NamespaceExists(ctx, id) }
		}
		return authz.NamespaceObject(id), exists, nil
	}
	if req.ObjectType == authz.TypeCatalog {
		return authz.Object{}, nil, nserr.InvalidInputf("the catalog's admins are the estate admins: list, grant and revoke them with 'lancecat admin estate list|grant|revoke'")
	}
	return authz.Object{}, nil, nserr.InvalidInputf("object_type %q is not one of project, warehouse, namespace, table", req.ObjectType)
}

// accessDoor is the door an access change passes: on a project the admin and member doors, on
// anything else the one the rung picks, for a grant or a revoke. Those doors ask that the caller
// holds the rung itself (authz/model.fga), so manage_grants alone elevates nobody.
func accessDoor(objectType, relation string, revoke bool) (authz.Action, error) {
	if objectType == authz.TypeProject {
		switch relation {
		case "admin":
			return authz.ProjectGrantAdmin, nil
		case "member":
			return authz.ProjectGrantMember, nil
		}
		return "", nserr.InvalidInputf("relation %q cannot be granted on a project (admin or member)", relation)
	}
	pick := authz.GrantAction
	if revoke {
		pick = authz.RevokeAction
	}
	door, err := pick(relation)
	if err != nil {
		return "", nserr.InvalidInputf("relation %q cannot be granted or revoked (owner, writer, reader, validator, maintainer, manage_grants or pass_grants)", relation)
	}
	return door, nil
}
