package registry

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"time"
)

// Key prefixes on the control root.
const (
	ProjectsPrefix   = "_projects/"
	WarehousesPrefix = "_warehouses/"
	BindingsPrefix   = "_warehouses/bindings/"
	ProtectionPrefix = "_protection/"
	TrashPrefix      = "_trash/"
	PoliciesPrefix   = "_policies/"
)

// Kinds of governed objects below the warehouse.
const (
	KindTable     = "table"
	KindNamespace = "namespace"
	KindProject   = "project"
)

// Warehouse statuses; an absent status reads as active.
const (
	StatusActive      = "active"
	StatusDeactivated = "deactivated"
)

// nameRE is the shape of project and warehouse ids: they become keys and labels everywhere, so they
// stay boring.
var nameRE = regexp.MustCompile(`^[a-z0-9][a-z0-9_-]{0,62}$`)

// ValidName reports whether s can be a project or warehouse id.
func ValidName(s string) error {
	if !nameRE.MatchString(s) {
		return fmt.Errorf("%q must be 1–63 characters of a-z, 0-9, '-' and '_', starting with a letter or digit", s)
	}
	return nil
}

// Project is a tenant.
type Project struct {
	ID        string    `json:"id"`
	CreatedAt time.Time `json:"created_at"`
	CreatedBy string    `json:"created_by"`
	Protected bool      `json:"protected,omitempty"`
	// Deleting is the tombstone a project delete sets before it lists the project's warehouses and
	// keeps until it deletes the record: a warehouse create that reads it after writing its own
	// record backs out, so no warehouse outlives its project (governance.DeleteProject has the
	// argument). A project that is Deleting still exists for every read.
	Deleting bool `json:"deleting,omitempty"`
	// DeletingSince is when the delete holding the tombstone set it; it identifies that delete (only
	// it may lift the mark) and lets a later delete take over a mark left by one that crashed.
	DeletingSince *time.Time `json:"deleting_since,omitempty"`
	// Extra keeps the fields of the stored record this version does not know (unknown.go).
	Extra
}

func (p Project) Validate() error {
	if err := ValidName(p.ID); err != nil {
		return err
	}
	if p.Deleting != (p.DeletingSince != nil) {
		return errors.New("project deleting and deleting_since must be set together")
	}
	return nil
}

// ProjectKey is where project id's record lives.
func ProjectKey(id string) string { return ProjectsPrefix + id + ".json" }

// Warehouse is a bucket (or directory) a project's namespaces live in.
type Warehouse struct {
	ID        string    `json:"id"`
	Project   string    `json:"project"`
	Bucket    string    `json:"bucket"`
	RootURI   string    `json:"root_uri"`
	Status    string    `json:"status,omitempty"`
	CreatedAt time.Time `json:"created_at"`
	Protected bool      `json:"protected,omitempty"`
	Primary   bool      `json:"primary,omitempty"`
	// Extra keeps the fields of the stored record this version does not know (unknown.go).
	Extra
}

func (w Warehouse) Validate() error {
	if err := ValidName(w.ID); err != nil {
		return fmt.Errorf("warehouse id: %w", err)
	}
	if err := ValidName(w.Project); err != nil {
		return fmt.Errorf("warehouse project: %w", err)
	}
	if w.Bucket == "" || w.RootURI == "" {
		return errors.New("warehouse bucket and root_uri must not be empty")
	}
	switch w.Status {
	case "", StatusActive, StatusDeactivated:
	default:
		return fmt.Errorf("warehouse status %q is neither %s nor %s", w.Status, StatusActive, StatusDeactivated)
	}
	return nil
}

// Active reports whether the warehouse serves requests.
func (w Warehouse) Active() bool { return w.Status == "" || w.Status == StatusActive }

// WarehouseKey is where warehouse id's record lives.
func WarehouseKey(id string) string { return WarehousesPrefix + id + ".json" }

// Binding routes a top-level namespace to its warehouse's root; written once.
type Binding struct {
	TopNamespace string `json:"top_ns"`
	WarehouseID  string `json:"warehouse_id"`
	RootURI      string `json:"root_uri"`
	// No Extra: a binding is created once and never rewritten (nothing reads, modifies and writes
	// it back), a copy of it rides inside trash records, and the undrop compares bindings with ==.
}

func (b Binding) Validate() error {
	if b.TopNamespace == "" || b.WarehouseID == "" || b.RootURI == "" {
		return errors.New("binding top_ns, warehouse_id and root_uri must not be empty")
	}
	return nil
}

// BindingKey is where top-level namespace ns's binding lives.
func BindingKey(ns string) string { return BindingsPrefix + ns + ".json" }

// ObjectKey names the record of a table or namespace under prefix. Ids are hashed: they hold
// arbitrary names, and the key must stay short and safe on every store.
func ObjectKey(prefix, kind string, id []string) string {
	sum := sha256.Sum256([]byte(kind + ":" + strings.Join(id, "\x00")))
	return prefix + kind + "-" + hex.EncodeToString(sum[:])[:24] + ".json"
}

// Protection locks a table or namespace against drop, deregister and rename.
type Protection struct {
	Kind      string     `json:"kind"`
	ID        []string   `json:"id"`
	Protected bool       `json:"protected"`
	SetBy     string     `json:"set_by"`
	SetAt     *time.Time `json:"set_at,omitempty"`
	// DestroyingSince marks an unprotected record that is the claim of a drop or deregister under
	// way (Protected is false): an arm that finds a fresh one is refused, so the destroy and the
	// arm cannot both answer ok. DestroyToken tells the claim's owner its own claim.
	DestroyingSince *time.Time `json:"destroying_since,omitempty"`
	DestroyToken    string     `json:"destroy_token,omitempty"`
	// Extra keeps the fields of the stored record this version does not know (unknown.go).
	Extra
}

func (p Protection) Validate() error {
	if p.Protected && p.DestroyingSince != nil {
		return errors.New("a protected record cannot be a destroy claim")
	}
	return validObject(p.Kind, p.ID)
}

func validObject(kind string, id []string) error {
	if kind != KindTable && kind != KindNamespace {
		return fmt.Errorf("kind %q is neither %s nor %s", kind, KindTable, KindNamespace)
	}
	if len(id) == 0 {
		return errors.New("id must not be empty")
	}
	return nil
}

// Trash records a recoverable drop until its deadline.
type Trash struct {
	Kind      string    `json:"kind"`
	ID        []string  `json:"id"`
	Location  string    `json:"location"`
	DroppedBy string    `json:"dropped_by"`
	DroppedAt time.Time `json:"dropped_at"`
	ExpiresAt time.Time `json:"expires_at"`
	Binding   *Binding  `json:"binding,omitempty"`
	// Properties are the table's properties at the drop, given back to it by an undrop.
	Properties map[string]string `json:"properties,omitempty"`
	// Cascade names the recoverable namespace drop that filed this record: the cascade stamps one
	// token on the dropped namespace's own record and on every record it files below it, and the
	// namespace's undrop brings back only the records of its own drop. An object dropped on its
	// own earlier (no token, or another drop's) stays in the trash, to be undropped by itself. A
	// namespace record without a token was filed before tokens existed: its undrop takes in
	// everything below it, as it did then.
	Cascade string `json:"cascade,omitempty"`
	// Placed says that a table record's Binding is where the table lived when it was dropped (nil:
	// the catalog root). Records filed before it existed leave the purge to work the root out.
	Placed bool `json:"placed,omitempty"`
	// Purging is the claim of a purge about to delete the table's bytes; PurgingSince is when it was
	// taken. An undrop refuses a record that carries a fresh claim, and backs out of one that got
	// it while it registered the table (maintenance/trash_purge.go and governance's restoreTable have
	// the argument). A claim older than governance.TrashClaimTTL was left by a purge that died: the
	// next purge takes it over, an undrop clears it.
	Purging      bool       `json:"purging,omitempty"`
	PurgingSince *time.Time `json:"purging_since,omitempty"`
	// Undropping is the claim of an undrop registering the table again (UndroppingSince when it
	// was taken): a purge leaves a record with a fresh one alone.
	Undropping      bool       `json:"undropping,omitempty"`
	UndroppingSince *time.Time `json:"undropping_since,omitempty"`
	// Extra keeps the fields of the stored record this version does not know (unknown.go).
	Extra
}

func (t Trash) Validate() error {
	if err := validObject(t.Kind, t.ID); err != nil {
		return err
	}
	if t.Purging != (t.PurgingSince != nil) {
		return errors.New("trash purging and purging_since must be set together")
	}
	if t.Undropping != (t.UndroppingSince != nil) {
		return errors.New("trash undropping and undropping_since must be set together")
	}
	return nil
}

// Expired reports whether the record's grace period is over at now (the purge may take it; an
// undrop still works until it does).
func (t Trash) Expired(now time.Time) bool { return !now.Before(t.ExpiresAt) }

// PolicySettings are the maintenance knobs of a policy. A nil field is unset: the record leaves it
// to the defaults (resolution is winner-takes-all, so an unset field never falls through to a
// less specific record).
type PolicySettings struct {
	RetentionDays          *int  `json:"retention_days,omitempty"`
	RetainVersions         *int  `json:"retain_versions,omitempty"`
	CompactEnabled         *bool `json:"compact_enabled,omitempty"`
	CompactIntervalHours   *int  `json:"compact_interval_hours,omitempty"`
	TargetRowsPerFragment  *int  `json:"target_rows_per_fragment,omitempty"`
	CleanupEnabled         *bool `json:"cleanup_enabled,omitempty"`
	OptimizeIndicesEnabled *bool `json:"optimize_indices_enabled,omitempty"`
}

// Bounds of the policy knobs.
const (
	MinRetentionDays, MaxRetentionDays                 = 1, 3650
	MinRetainVersions, MaxRetainVersions               = 1, 10000
	MinCompactIntervalHours, MaxCompactIntervalHours   = 1, 24 * 365
	MinTargetRowsPerFragment, MaxTargetRowsPerFragment = 1024, 10_000_000
)

// Validate checks every set knob against its bounds.
func (s PolicySettings) Validate() error {
	check := func(name string, v *int, lo, hi int) error {
		if v != nil && (*v < lo || *v > hi) {
			return fmt.Errorf("%s must be between %d and %d, got %d", name, lo, hi, *v)
		}
		return nil
	}
	return errors.Join(
		check("retention_days", s.RetentionDays, MinRetentionDays, MaxRetentionDays),
		check("retain_versions", s.RetainVersions, MinRetainVersions, MaxRetainVersions),
		check("compact_interval_hours", s.CompactIntervalHours, MinCompactIntervalHours, MaxCompactIntervalHours),
		check("target_rows_per_fragment", s.TargetRowsPerFragment, MinTargetRowsPerFragment, MaxTargetRowsPerFragment),
	)
}

// Merge sets every knob that update sets, keeping the others.
func (s *PolicySettings) Merge(update PolicySettings) {
	mergeField(&s.RetentionDays, update.RetentionDays)
	mergeField(&s.RetainVersions, update.RetainVersions)
	mergeField(&s.CompactEnabled, update.CompactEnabled)
	mergeField(&s.CompactIntervalHours, update.CompactIntervalHours)
	mergeField(&s.TargetRowsPerFragment, update.TargetRowsPerFragment)
	mergeField(&s.CleanupEnabled, update.CleanupEnabled)
	mergeField(&s.OptimizeIndicesEnabled, update.OptimizeIndicesEnabled)
}

// Over returns s with every unset knob taken from base.
func (s PolicySettings) Over(base PolicySettings) PolicySettings {
	out := base
	out.Merge(s)
	return out
}

func mergeField[T any](dst **T, v *T) {
	if v != nil {
		c := *v
		*dst = &c
	}
}

// Policy is the maintenance policy of one table, namespace or project.
type Policy struct {
	Kind string   `json:"kind"`
	ID   []string `json:"id"` // a project's is its id alone
	PolicySettings
	SetBy     string    `json:"set_by"`
	UpdatedAt time.Time `json:"updated_at"`
	// Extra keeps the fields of the stored record this version does not know (unknown.go).
	Extra
}

func (p Policy) Validate() error {
	if p.Kind == KindProject {
		if len(p.ID) != 1 {
			return errors.New("a project policy's id is the project id alone")
		}
		if err := ValidName(p.ID[0]); err != nil {
			return err
		}
	} else if err := validObject(p.Kind, p.ID); err != nil {
		return err
	}
	return p.PolicySettings.Validate()
}

// PolicyKey is where the policy of object (kind, id) lives.
func PolicyKey(kind string, id []string) string { return ObjectKey(PoliciesPrefix, kind, id) }

// RevocationsPrefix holds the grant revocations owed to objects that are gone: a purge that could
// not reach the authorization service files one per object, and the next purge run (the command's
// or a server's background loop) revokes the object's tuples and deletes the record.
const RevocationsPrefix = "_authz/revocations/"

// Revocation is one object whose every tuple (grants and structural edges) must be revoked.
type Revocation struct {
	Kind     string    `json:"kind"`
	ID       []string  `json:"id"`
	QueuedAt time.Time `json:"queued_at"`
	// Reason is why the revocation could not be done at once.
	Reason string `json:"reason,omitempty"`
	// Extra keeps the fields of the stored record this version does not know (unknown.go).
	Extra
}

func (r Revocation) Validate() error { return validObject(r.Kind, r.ID) }

// RevocationKey is where the queued revocation of object (kind, id) lives.
func RevocationKey(kind string, id []string) string { return ObjectKey(RevocationsPrefix, kind, id) }
