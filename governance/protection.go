package governance

import (
	"context"
	"crypto/rand"
	"errors"
	"log/slog"
	"slices"
	"strings"
	"time"

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
	if found && !before.Protected && !protected {
		// A destroy's claim (or nothing armed): unprotected already, and the claim is its owner's.
		return registry.Protection{Kind: kind, ID: slices.Clone(id)}, nil
	}
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
	if err := s.refuseDestroying(before, found); err != nil {
		return registry.Protection{}, err
	}
	if err := s.objectExists(ctx, kind, id); err != nil {
		return registry.Protection{}, err
	}
	at := s.now().UTC()
	rec := registry.Protection{Kind: kind, ID: slices.Clone(id), Protected: true, SetBy: actor(p), SetAt: &at}
	// The write is conditional: a destroy that claimed the record since it was read makes it fail
	// (then the claim refuses the arm), and an arm that landed first makes the destroy's claim fail.
	if !found {
		err = registry.Create(ctx, s.store, key, rec)
	} else {
		_, err = registry.Mutate(ctx, s.store, key, func(cur *registry.Protection) error {
			if cur.Protected {
				return errArmedMeanwhile
			}
			if err := s.refuseDestroying(*cur, true); err != nil {
				return err
			}
			*cur = rec
			return nil
		})
	}
	switch {
	case errors.Is(err, registry.ErrExists), errors.Is(err, errArmedMeanwhile), errors.Is(err, registry.ErrNotFound), errors.Is(err, registry.ErrChanged):
		// Someone wrote the record since it was read: answer from what is there now.
		now, nowFound, rerr := s.readProtection(ctx, kind, id)
		if rerr != nil {
			return registry.Protection{}, rerr
		}
		if nowFound && now.Protected {
			return now, nil
		}
		if err := s.refuseDestroying(now, nowFound); err != nil {
			return registry.Protection{}, err
		}
		return registry.Protection{}, nserr.ConcurrentModificationf("the protection of %s changed while it was armed: retry", id.Join(s.delim))
	case err != nil:
		return registry.Protection{}, registryError(err)
	}
	s.emitObject(ctx, kind, EventTableProtected, EventNamespaceProtected, p, id, nil)
	return rec, nil
}

// errArmedMeanwhile stops an arm's read-modify-write that finds the record armed by another.
var errArmedMeanwhile = errors.New("armed meanwhile")

// DestroyClaimTTL is how long a destroy's claim on a protection record holds: a claim older than
// this was left by a process that died mid-drop, and an arm or another destroy takes it over.
const DestroyClaimTTL = 10 * time.Minute

// refuseDestroying is the 409 of an arm that finds a destroy's fresh claim on the record.
func (s *Service) refuseDestroying(rec registry.Protection, found bool) error {
	if !found || rec.Protected || rec.DestroyingSince == nil || s.now().Sub(*rec.DestroyingSince) > DestroyClaimTTL {
		return nil
	}
	what := "table"
	if rec.Kind == registry.KindNamespace {
		what = "namespace"
	}
	return nserr.ConcurrentModificationf("%s %s is being dropped by another request; protect it once that has finished, if it still exists",
		what, ident.ID(rec.ID).Join(s.delim))
}

// ClaimDestroy is the protection guard of a door that destroys the object (guards.DestroyClaimer):
// a protected object is the 409 of CheckNotProtected (force passes it, and then no claim is
// needed: a forced destroy wins over an arm in either order); an unprotected one gets a claim
// written conditionally at its protection key, which an arm racing the destroy then finds (or
// whose write fails because the arm landed first, and the destroy is refused). Another destroy's
// claim is taken over (a concurrent drop then answers the catalog's 404; a crashed drop's claim
// blocks no later drop); a missing object is the catalog's 404, answered here. release deletes
// the claim if it is still this one's; a destroy that happened clears the object's records,
// claim included.
func (s *Service) ClaimDestroy(ctx context.Context, kind string, id ident.ID, force bool) (func(context.Context), error) {
	none := func(context.Context) {}
	if err := s.objectShape(kind, id); err != nil {
		return none, err
	}
	if force {
		return none, nil
	}
	key := registry.ObjectKey(registry.ProtectionPrefix, kind, id)
	token := rand.Text()
	for range 3 {
		cur, found, err := s.readProtection(ctx, kind, id)
		if err != nil {
			return none, err
		}
		if found && cur.Protected {
			return none, s.protectedError(cur)
		}
		// Another destroy's claim (or one a crashed destroy left) is taken over: destroys need no
		// exclusion among themselves (the catalog lets one drop win and answers the rest 404), only
		// against arms, which any claim refuses. The earlier owner's release then finds the claim is
		// not its own and leaves it.
		if !found {
			// Only an object that is there is claimed: a drop of a missing one is its 404 now, and
			// never writes to the control root (a flood of them would write as much).
			if err := s.objectExists(ctx, kind, id); err != nil {
				return none, err
			}
		}
		at := s.now().UTC()
		claim := registry.Protection{Kind: kind, ID: slices.Clone(id), DestroyingSince: &at, DestroyToken: token}
		if !found {
			err = registry.Create(ctx, s.store, key, claim)
		} else {
			_, err = registry.Mutate(ctx, s.store, key, func(r *registry.Protection) error {
				if r.Protected {
					return errArmedMeanwhile
				}
				*r = claim
				return nil
			})
		}
		switch {
		case err == nil:
			return func(ctx context.Context) { s.releaseDestroy(context.WithoutCancel(ctx), kind, id, token) }, nil
		case errors.Is(err, registry.ErrExists), errors.Is(err, errArmedMeanwhile), errors.Is(err, registry.ErrNotFound), errors.Is(err, registry.ErrChanged):
			continue // written since it was read: decide again from what is there
		default:
			return none, registryError(err)
		}
	}
	return none, nserr.ConcurrentModificationf("the protection of %s keeps changing: retry", id.Join(s.delim))
}

// releaseDestroy deletes the destroy claim token holds at (kind, id), if it still holds it.
func (s *Service) releaseDestroy(ctx context.Context, kind string, id ident.ID, token string) {
	cur, found, err := s.readProtection(ctx, kind, id)
	if err != nil || !found || cur.DestroyToken != token {
		return
	}
	if err := registry.Delete(ctx, s.store, registry.ObjectKey(registry.ProtectionPrefix, kind, id)); err != nil {
		s.log.LogAttrs(ctx, slog.LevelWarn, "a destroy claim could not be released; it lapses after its TTL",
			slog.String("object", id.Join(s.delim)), slog.String("error", err.Error()))
	}
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
