package governance

import (
	"context"
	"errors"
	"slices"
	"strings"

	"github.com/lancecat/lancecat/authz"
	nserr "github.com/lancecat/lancecat/errors"
	"github.com/lancecat/lancecat/guards"
	"github.com/lancecat/lancecat/ident"
	"github.com/lancecat/lancecat/registry"
)

// Protection of tables and namespaces lives in registry.Protection records on the control root
// (never in table metadata, so arming it writes no table version). An absent record is
// unprotected; disarming deletes the record. The spec doors that destroy or move an object ask
// CheckNotProtected (or CheckSubtreeNotProtected) after authorization and before anything else,
// and ClearProtection once the object is gone: the record dies with its object.

// objectShape checks kind and id of a table or namespace a governance door is about
// (guards.ObjectShape, the same guard its door ran).
func (s *Service) objectShape(kind string, id ident.ID) error {
	return guards.ObjectShape(kind, id, s.delim)
}

// objectExists asks the catalog whether the object exists (nil when no catalog is wired).
func (s *Service) objectExists(ctx context.Context, kind string, id ident.ID) error {
	if s.objects == nil {
		return nil
	}
	if kind == registry.KindTable {
		return s.objects.TableExists(ctx, id)
	}
	return s.objects.NamespaceExists(ctx, id)
}

// readProtection is the record at (kind, id); absent reads as unprotected, malformed is 503.
func (s *Service) readProtection(ctx context.Context, kind string, id ident.ID) (registry.Protection, bool, error) {
	rec, _, err := registry.Read[registry.Protection](ctx, s.store, registry.ObjectKey(registry.ProtectionPrefix, kind, id))
	switch {
	case errors.Is(err, registry.ErrNotFound):
		return registry.Protection{Kind: kind, ID: slices.Clone(id)}, false, nil
	case err != nil:
		return registry.Protection{}, false, registryError(err)
	}
	return rec, true, nil
}

// DescribeProtection is GET /v1/{table|namespace}/{id}/protection: whether the object is
// protected and who armed it. Authorization (can_drop on a table, can_delete on a namespace) is
// the door's guard (guards.ControlDoors) and runs before existence, like every door of the spec's
// routes.
func (s *Service) DescribeProtection(ctx context.Context, p authz.Principal, kind string, id ident.ID) (registry.Protection, error) {
	if _, err := s.caller(p); err != nil {
		return registry.Protection{}, err
	}
	if err := s.objectShape(kind, id); err != nil {
		return registry.Protection{}, err
	}
	rec, found, err := s.readProtection(ctx, kind, id)
	if err != nil {
		return registry.Protection{}, err
	}
	if !found {
		if err := s.objectExists(ctx, kind, id); err != nil {
			return registry.Protection{}, err
		}
	}
	return rec, nil
}

// SetProtection is POST /v1/{table|namespace}/{id}/protection: arm (the object must exist) or
// disarm (always allowed, so a record left behind by a crash can be cleared) deletion protection.
// Gated like the object's destroy (can_drop on a table, can_delete on a namespace) by its door's
// guard (guards.ControlDoors).
func (s *Service) SetProtection(ctx context.Context, p authz.Principal, kind string, id ident.ID, protected bool) (registry.Protection, error) {
	p, err := s.caller(p)
	if err != nil {
		return registry.Protection{}, err
	}
	if err := s.objectShape(kind, id); err != nil {
		return registry.Protection{}, err
	}
	before, found, err := s.readProtection(ctx, kind, id)
	if err != nil {
		return registry.Protection{}, err
	}
	key := registry.ObjectKey(registry.ProtectionPrefix, kind, id)
	if !protected {
		if !found {
			if err := s.objectExists(ctx, kind, id); err != nil {
				return registry.Protection{}, err
			}
			return before, nil
		}
		if err := registry.Delete(ctx, s.store, key); err != nil {
			return registry.Protection{}, registryError(err)
		}
		s.emitObject(ctx, kind, EventTableUnprotected, EventNamespaceUnprotected, p, id, nil)
		return registry.Protection{Kind: kind, ID: slices.Clone(id)}, nil
	}
	if found && before.Protected {
		return before, nil // armed already: keep who armed it first
	}
	if err := s.objectExists(ctx, kind, id); err != nil {
		return registry.Protection{}, err
	}
	at := s.now().UTC()
	rec := registry.Protection{Kind: kind, ID: slices.Clone(id), Protected: true, SetBy: actor(p), SetAt: &at}
	if err := registry.Put(ctx, s.store, key, rec); err != nil {
		return registry.Protection{}, registryError(err)
	}
	s.emitObject(ctx, kind, EventTableProtected, EventNamespaceProtected, p, id, nil)
	return rec, nil
}

// CheckNotProtected is the protection guard of a destroying, moving or replacing spec door: drop,
// deregister, rename and overwrite (create or register with mode Overwrite) of a table (kind
// registry.KindTable), drop and overwrite of a namespace (registry.KindNamespace).
// It answers nil when the object is not protected or force is set (force overrides protection and
// nothing else: call it after authorization, which force never skips). A protected object is 409
// naming it and the two ways out: InvalidTableState (19) for a table, NamespaceNotEmpty (3) for a
// namespace. A record that cannot be read is 503, never "unprotected".
func (s *Service) CheckNotProtected(ctx context.Context, kind string, id ident.ID, force bool) error {
	if err := s.objectShape(kind, id); err != nil {
		return err
	}
	rec, found, err := s.readProtection(ctx, kind, id)
	if err != nil || !found || !rec.Protected || force {
		return err
	}
	return s.protectedError(rec)
}

// CheckSubtreeNotProtected is the guard of a cascading namespace drop: the namespace itself and
// every table or namespace below it that holds a protection record. The 409 names the first
// protected object (the namespace itself first, then the shallowest descendant); force overrides.
func (s *Service) CheckSubtreeNotProtected(ctx context.Context, ns ident.ID, force bool) error {
	if err := s.CheckNotProtected(ctx, registry.KindNamespace, ns, force); err != nil || force {
		return err
	}
	under, err := s.protectedUnder(ctx, ns)
	if err != nil || len(under) == 0 {
		return err
	}
	return s.protectedError(under[0])
}

// protectedUnder lists the protection records strictly below namespace ns, shallowest first. A
// record that cannot be read refuses (a destructive decision is about to be made).
func (s *Service) protectedUnder(ctx context.Context, ns ident.ID) ([]registry.Protection, error) {
	listed, err := registry.List[registry.Protection](ctx, s.store, registry.ProtectionPrefix)
	if err != nil {
		return nil, registryError(err)
	}
	if len(listed.Skipped) > 0 {
		return nil, nserr.ServiceUnavailablef("protection records %s cannot be read; refusing to decide what a cascade may destroy",
			strings.Join(listed.Skipped, ", "))
	}
	var out []registry.Protection
	for _, rec := range listed.Records {
		if rec.Protected && len(rec.ID) > len(ns) && slices.Equal(rec.ID[:len(ns)], ns) {
			out = append(out, rec)
		}
	}
	slices.SortFunc(out, func(a, b registry.Protection) int {
		if d := len(a.ID) - len(b.ID); d != 0 {
			return d
		}
		if c := strings.Compare(a.Kind, b.Kind); c != 0 {
			return c
		}
		return slices.Compare(a.ID, b.ID)
	})
	return out, nil
}

func (s *Service) protectedError(rec registry.Protection) error {
	name := ident.ID(rec.ID).Join(s.delim)
	by := ""
	if rec.SetBy != "" {
		by = " (armed by " + rec.SetBy + ")"
	}
	if rec.Kind == registry.KindTable {
		return nserr.InvalidTableStatef("table %s is protected%s: disarm it with POST /v1/table/%s/protection {\"protected\": false}, or pass force=true",
			name, by, ident.ID(rec.ID).PathSegment(s.delim))
	}
	return nserr.NamespaceNotEmptyf("namespace %s is protected%s: disarm it with POST /v1/namespace/%s/protection {\"protected\": false}, or pass force=true",
		name, by, ident.ID(rec.ID).PathSegment(s.delim))
}

// ClearProtection deletes the protection record of an object that no longer exists at id (after
// a drop, a deregister, or the source of a rename once the move committed). Idempotent.
func (s *Service) ClearProtection(ctx context.Context, kind string, id ident.ID) error {
	if err := s.objectShape(kind, id); err != nil {
		return err
	}
	if err := registry.Delete(ctx, s.store, registry.ObjectKey(registry.ProtectionPrefix, kind, id)); err != nil {
		return registryError(err)
	}
	return nil
}

// ClearSubtreeProtection deletes the protection records of namespace ns and everything below it,
// after a cascading drop destroyed (or detached into the trash) the whole subtree. Idempotent.
func (s *Service) ClearSubtreeProtection(ctx context.Context, ns ident.ID) error {
	if err := s.ClearProtection(ctx, registry.KindNamespace, ns); err != nil {
		return err
	}
	under, err := s.protectedUnder(ctx, ns)
	if err != nil {
		return err
	}
	for _, rec := range under {
		if err := registry.Delete(ctx, s.store, registry.ObjectKey(registry.ProtectionPrefix, rec.Kind, rec.ID)); err != nil {
			return registryError(err)
		}
	}
	return nil
}

// emitObject emits the table or namespace flavour of an event about id.
func (s *Service) emitObject(ctx context.Context, kind, tableEvent, namespaceEvent string, p authz.Principal, id ident.ID, attrs map[string]string) {
	if kind == registry.KindTable {
		s.emit(ctx, tableEvent, p, authz.TableObject(id).String(), attrs)
		return
	}
	s.emit(ctx, namespaceEvent, p, authz.NamespaceObject(id).String(), attrs)
}
