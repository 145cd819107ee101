package governance

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/lancecat/lancecat/authz"
	nserr "github.com/lancecat/lancecat/errors"
	"github.com/lancecat/lancecat/ident"
	"github.com/lancecat/lancecat/registry"
)

// Maintenance policies are registry.Policy records at _policies/<kind>-<hash>.json, one per table,
// namespace or project. Resolution is winner-takes-all: the most specific record present wins
// whole (the table's, then the nearest namespace's walking up the tree, then the project's of the
// warehouse the top-level namespace is bound to, then the built-in defaults), and the knobs the
// winning record leaves unset take the defaults, never a less specific record's values. Every
// answer names the record that won (Source), so "why is this table compacted hourly" always has
// one place to look.

// KindDefault is the Source kind of the built-in defaults.
const KindDefault = "default"

// DefaultPolicy is what applies where no record does.
func DefaultPolicy() registry.PolicySettings {
	i := func(v int) *int { return &v }
	b := func(v bool) *bool { return &v }
	return registry.PolicySettings{
		RetentionDays:          i(7),
		RetainVersions:         i(10),
		CompactEnabled:         b(true),
		CompactIntervalHours:   i(24),
		TargetRowsPerFragment:  i(1 << 20),
		CleanupEnabled:         b(true),
		OptimizeIndicesEnabled: b(true),
	}
}

// PolicySource names the record a policy came from.
type PolicySource struct {
	Kind      string   // table, namespace, project or default
	ID        []string // nil for the defaults
	SetBy     string
	UpdatedAt time.Time
}

// EffectivePolicy is the policy in force for an object: every knob set, and where it came from.
type EffectivePolicy struct {
	Policy registry.PolicySettings
	Source PolicySource
}

func resolved(rec registry.Policy) EffectivePolicy {
	return EffectivePolicy{
		Policy: rec.PolicySettings.Over(DefaultPolicy()),
		Source: PolicySource{Kind: rec.Kind, ID: slices.Clone(rec.ID), SetBy: rec.SetBy, UpdatedAt: rec.UpdatedAt},
	}
}

func defaultResolved() EffectivePolicy {
	return EffectivePolicy{Policy: DefaultPolicy(), Source: PolicySource{Kind: KindDefault}}
}

// policyGuards runs the front guards of a policy door that stay in the service: identity 401,
// shape 400 and (when the object must exist) existence 404. Authorization 403 (the verb's
// table.policy.*, namespace.policy.* or project.policy.* on the object) is the door's guard
// (guards.ControlDoors) and runs before any of this: project doors are destructive control doors,
// so a caller who may not administer the project is answered as if it did not exist.
func (s *Service) policyGuards(ctx context.Context, p authz.Principal, kind string, id ident.ID, mustExist bool) (authz.Principal, error) {
	if kind == registry.KindProject {
		if len(id) != 1 {
			return "", nserr.InvalidInputf("a project id is one name")
		}
		if _, err := s.projectForAdmin(ctx, p, id[0]); err != nil {
			return "", err
		}
		return s.caller(p)
	}
	p, err := s.caller(p)
	if err != nil {
		return "", err
	}
	if err := s.objectShape(kind, id); err != nil {
		return "", err
	}
	if mustExist {
		if err := s.objectExists(ctx, kind, id); err != nil {
			return "", err
		}
	}
	return p, nil
}

// SetPolicyJSON is SetPolicy for a request body as sent: the knobs are decoded strictly, so a
// misspelt knob ({"retention_dayz":1}) is refused naming it, never accepted as "nothing to set".
// An empty body or null sets nothing. Identity still comes first (401 before 400).
func (s *Service) SetPolicyJSON(ctx context.Context, p authz.Principal, kind string, id ident.ID, body []byte) (EffectivePolicy, error) {
	settings, err := DecodePolicySettings(body)
	if err != nil {
		if _, cerr := s.caller(p); cerr != nil {
			return EffectivePolicy{}, cerr
		}
		return EffectivePolicy{}, err
	}
	return s.SetPolicy(ctx, p, kind, id, settings)
}

// policyKnobs are the knobs a policy body may set, as registry.PolicySettings spells them.
var policyKnobs = jsonFields(reflect.TypeFor[registry.PolicySettings]())

func jsonFields(t reflect.Type) []string {
	var out []string
	for f := range t.Fields() {
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name != "" && name != "-" {
			out = append(out, name)
		}
	}
	return out
}

// DecodePolicySettings decodes a policy body, refusing (InvalidInput) any field that is not a
// knob, a value of the wrong type, and anything after the object.
func DecodePolicySettings(body []byte) (registry.PolicySettings, error) {
	var settings registry.PolicySettings
	trimmed := bytes.TrimSpace(body)
	if len(trimmed) == 0 || bytes.Equal(trimmed, []byte("null")) {
		return settings, nil
	}
	// Field names match case-insensitively in encoding/json; a knob must be spelt exactly.
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(trimmed, &raw); err != nil {
		return settings, nserr.InvalidInputf("policy: the body must be a JSON object of knobs (%s)", strings.Join(policyKnobs, ", "))
	}
	var unknown []string
	for k := range raw {
		if !slices.Contains(policyKnobs, k) {
			unknown = append(unknown, strconv.Quote(k))
		}
	}
	if len(unknown) > 0 {
		slices.Sort(unknown)
		return settings, nserr.InvalidInputf("policy: unknown knob %s (known: %s)", strings.Join(unknown, ", "), strings.Join(policyKnobs, ", "))
	}
	if err := json.Unmarshal(trimmed, &settings); err != nil {
		var typeErr *json.UnmarshalTypeError
		if errors.As(err, &typeErr) && typeErr.Field != "" {
			return settings, nserr.InvalidInputf("policy: knob %s must be %s, not %s", typeErr.Field, typeErr.Type.String(), typeErr.Value)
		}
		return settings, nserr.InvalidInputf("policy: the body is not valid JSON")
	}
	return settings, nil
}

// SetPolicy is POST …/policy/set: it merges settings into the object's own policy record (knobs
// not sent keep their stored values; the record is created if absent) and answers the policy now
// in force for the object, which is that record. kind is registry.KindTable, KindNamespace or
// KindProject (id = the project id alone).
func (s *Service) SetPolicy(ctx context.Context, p authz.Principal, kind string, id ident.ID, settings registry.PolicySettings) (EffectivePolicy, error) {
	if err := settings.Validate(); err != nil {
		// Shape before authorization, but after identity.
		if _, cerr := s.caller(p); cerr != nil {
			return EffectivePolicy{}, cerr
		}
		return EffectivePolicy{}, nserr.InvalidInputf("policy: %v", err)
	}
	p, err := s.policyGuards(ctx, p, kind, id, true)
	if err != nil {
		return EffectivePolicy{}, err
	}
	key := registry.PolicyKey(kind, id)
	at := s.now().UTC()
	var rec registry.Policy
	for range 4 {
		rec, err = registry.Mutate(ctx, s.store, key, func(r *registry.Policy) error {
			r.Merge(settings)
			r.SetBy, r.UpdatedAt = actor(p), at
			return nil
		})
		if !errors.Is(err, registry.ErrNotFound) {
			break
		}
		rec = registry.Policy{Kind: kind, ID: slices.Clone(id), PolicySettings: settings, SetBy: actor(p), UpdatedAt: at}
		err = registry.Create(ctx, s.store, key, rec)
		if !errors.Is(err, registry.ErrExists) {
			break // created, or failed; a lost race re-reads and merges into the winner
		}
	}
	if err != nil {
		return EffectivePolicy{}, registryError(err)
	}
	s.emit(ctx, EventPolicySet, p, policyObject(kind, id), map[string]string{"kind": kind})
	return resolved(rec), nil
}

// DescribePolicy is POST …/policy/describe: the policy in force for the object and the record it
// came from (Source; KindDefault when no record applies).
func (s *Service) DescribePolicy(ctx context.Context, p authz.Principal, kind string, id ident.ID) (EffectivePolicy, error) {
	if _, err := s.policyGuards(ctx, p, kind, id, true); err != nil {
		return EffectivePolicy{}, err
	}
	return s.ResolvePolicy(ctx, kind, id)
}

// DeletePolicy is POST …/policy/delete: it removes the object's own record (the next one up the
// tree then applies). Deleting a policy that is not there succeeds, and so does deleting one whose
// object is gone (a record left behind can always be cleared).
func (s *Service) DeletePolicy(ctx context.Context, p authz.Principal, kind string, id ident.ID) error {
	p, err := s.policyGuards(ctx, p, kind, id, false)
	if err != nil {
		return err
	}
	key := registry.PolicyKey(kind, id)
	_, _, err = registry.Read[registry.Policy](ctx, s.store, key)
	existed := err == nil
	if err != nil && !errors.Is(err, registry.ErrNotFound) && !errors.Is(err, registry.ErrMalformed) {
		return registryError(err)
	}
	if err := registry.Delete(ctx, s.store, key); err != nil {
		return registryError(err)
	}
	if existed {
		s.emit(ctx, EventPolicyDeleted, p, policyObject(kind, id), map[string]string{"kind": kind})
	}
	return nil
}

func policyObject(kind string, id ident.ID) string {
	switch kind {
	case registry.KindTable:
		return authz.TableObject(id).String()
	case registry.KindNamespace:
		return authz.NamespaceObject(id).String()
	}
	return authz.ProjectObject(id[0]).String()
}

// ResolvePolicy is the policy in force for a table, namespace or project, without authorization
// (for the maintenance sweep and other internal callers): the most specific record present wins.
// A record that cannot be read is 503, never skipped: skipping it would silently apply a less
// specific policy (say, a shorter retention).
func (s *Service) ResolvePolicy(ctx context.Context, kind string, id ident.ID) (EffectivePolicy, error) {
	type candidate struct {
		kind string
		id   []string
	}
	var chain []candidate
	switch kind {
	case registry.KindTable:
		chain = append(chain, candidate{registry.KindTable, id})
		for n := len(id) - 1; n >= 1; n-- {
			chain = append(chain, candidate{registry.KindNamespace, id[:n]})
		}
	case registry.KindNamespace:
		for n := len(id); n >= 1; n-- {
			chain = append(chain, candidate{registry.KindNamespace, id[:n]})
		}
	case registry.KindProject:
		chain = append(chain, candidate{registry.KindProject, id})
	default:
		return EffectivePolicy{}, nserr.Internalf("governance: policy kind %q", kind)
	}
	for _, c := range chain {
		rec, found, err := s.readPolicy(ctx, c.kind, c.id)
		if err != nil || found {
			return rec, err
		}
	}
	// A table of the root namespace has no top-level namespace, so no warehouse or project above
	// it (its one part is its own name, not a namespace's).
	if kind == registry.KindNamespace && len(id) > 0 || kind == registry.KindTable && len(id) > 1 {
		project, err := s.projectOfNamespace(ctx, id[0])
		if err != nil {
			return EffectivePolicy{}, err
		}
		if project != "" {
			rec, found, err := s.readPolicy(ctx, registry.KindProject, []string{project})
			if err != nil || found {
				return rec, err
			}
		}
	}
	return defaultResolved(), nil
}

func (s *Service) readPolicy(ctx context.Context, kind string, id []string) (EffectivePolicy, bool, error) {
	rec, _, err := registry.Read[registry.Policy](ctx, s.store, registry.PolicyKey(kind, id))
	switch {
	case errors.Is(err, registry.ErrNotFound):
		return EffectivePolicy{}, false, nil
	case err != nil:
		return EffectivePolicy{}, false, registryError(err)
	}
	return resolved(rec), true, nil
}

// projectOfNamespace is the project owning top-level namespace top through its warehouse binding
// ("" when it is not bound: a namespace of the default root belongs to no project).
func (s *Service) projectOfNamespace(ctx context.Context, top string) (string, error) {
	b, _, err := registry.Read[registry.Binding](ctx, s.store, registry.BindingKey(top))
	switch {
	case errors.Is(err, registry.ErrNotFound):
		return "", nil
	case err != nil:
		return "", registryError(err)
	}
	w, _, err := registry.Read[registry.Warehouse](ctx, s.store, registry.WarehouseKey(b.WarehouseID))
	switch {
	case errors.Is(err, registry.ErrNotFound):
		return "", nil // a binding outliving its warehouse routes nowhere; nothing to inherit
	case err != nil:
		return "", registryError(err)
	}
	return w.Project, nil
}

// ClearPolicy deletes the policy record of an object destroyed at id (a non-recoverable drop or a
// deregister; a recoverable drop keeps it for the undrop). Idempotent.
func (s *Service) ClearPolicy(ctx context.Context, kind string, id ident.ID) error {
	if err := registry.Delete(ctx, s.store, registry.PolicyKey(kind, id)); err != nil {
		return registryError(err)
	}
	return nil
}

// ClearSubtreePolicies deletes the policy records of namespace ns and of every table and
// namespace below it (after a non-recoverable cascading drop). Idempotent.
func (s *Service) ClearSubtreePolicies(ctx context.Context, ns ident.ID) error {
	listed, err := registry.List[registry.Policy](ctx, s.store, registry.PoliciesPrefix)
	if err != nil {
		return registryError(err)
	}
	if len(listed.Skipped) > 0 {
		s.log.WarnContext(ctx, "unreadable policy records left in place", "keys", strings.Join(listed.Skipped, ","))
	}
	if err := s.ClearPolicy(ctx, registry.KindNamespace, ns); err != nil {
		return err
	}
	for i, rec := range listed.Records {
		if rec.Kind != registry.KindProject && len(rec.ID) > len(ns) && slices.Equal(rec.ID[:len(ns)], ns) {
			if err := registry.Delete(ctx, s.store, listed.Keys[i]); err != nil {
				return registryError(err)
			}
		}
	}
	return nil
}

// MoveTableRecords carries a renamed table's protection and policy records from its old id to its
// new one (call it after the rename committed). The table is the same object under a new name, so
// what protected or governed it still does. Idempotent: a record already moved is not there to
// move again.
func (s *Service) MoveTableRecords(ctx context.Context, from, to ident.ID) error {
	if err := s.objectShape(registry.KindTable, from); err != nil {
		return err
	}
	if err := s.objectShape(registry.KindTable, to); err != nil {
		return err
	}
	prot, found, err := s.readProtection(ctx, registry.KindTable, from)
	if err != nil {
		return err
	}
	if found {
		prot.ID = slices.Clone(to)
		if err := registry.Put(ctx, s.store, registry.ObjectKey(registry.ProtectionPrefix, registry.KindTable, to), prot); err != nil {
			return registryError(err)
		}
		if err := s.ClearProtection(ctx, registry.KindTable, from); err != nil {
			return err
		}
	}
	pol, _, err := registry.Read[registry.Policy](ctx, s.store, registry.PolicyKey(registry.KindTable, from))
	switch {
	case errors.Is(err, registry.ErrNotFound):
		return nil
	case err != nil:
		return registryError(err)
	}
	pol.ID = slices.Clone(to)
	if err := registry.Put(ctx, s.store, registry.PolicyKey(registry.KindTable, to), pol); err != nil {
		return registryError(err)
	}
	return s.ClearPolicy(ctx, registry.KindTable, from)
}
