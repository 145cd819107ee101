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
}

func (p Project) Validate() error { return ValidName(p.ID) }

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
	Kind      string   `json:"kind"`
	ID        []string `json:"id"`
	Protected bool     `json:"protected"`
	SetBy     string   `json:"set_by"`
}

func (p Protection) Validate() error { return validObject(p.Kind, p.ID) }

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
}

func (t Trash) Validate() error { return validObject(t.Kind, t.ID) }
