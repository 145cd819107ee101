package namespace

import (
	"context"
	"encoding/json"
	"strings"

	"github.com/lancecat/lancecat/catalog"
	nserr "github.com/lancecat/lancecat/errors"
	"github.com/lancecat/lancecat/ident"
)

// objectID is id as the manifest spells it. Every id is checked against the id rules here, the
// one place every operation passes, before anything is written: parts holding the manifest's own
// delimiter would make ids ambiguous, and an id the stores cannot hold in a table directory's
// name (or that could pass for another) would commit a row no directory can back.
func objectID(id ident.ID) (string, error) {
	for _, p := range id {
		if p == "" || strings.Contains(p, Delimiter) {
			return "", nserr.InvalidInputf("id part %q is empty or contains %q, which the directory namespace reserves", p, Delimiter)
		}
	}
	if err := id.Validate(Delimiter); err != nil {
		return "", err
	}
	return strings.Join(id, Delimiter), nil
}

func splitObjectID(oid string) ident.ID { return ident.ID(strings.Split(oid, Delimiter)) }

func decodeProps(meta *string) map[string]string {
	out := map[string]string{}
	if meta != nil && *meta != "" {
		_ = json.Unmarshal([]byte(*meta), &out)
	}
	return out
}

func encodeProps(props map[string]string) *string {
	if len(props) == 0 {
		return nil
	}
	b, _ := json.Marshal(props)
	s := string(b)
	return &s
}

// namespaceRow finds namespace id in s; the root has no row and is always there.
func (s *snapshot) namespace(oid string) (*row, bool) {
	if oid == "" {
		return nil, true
	}
	r := s.rows[oid]
	return r, r != nil && r.Type == TypeNamespace
}

// requireNamespace fails with NamespaceNotFound unless namespace id exists.
func (s *snapshot) requireNamespace(id ident.ID) error {
	oid, err := objectID(id)
	if err != nil {
		return err
	}
	if _, ok := s.namespace(oid); !ok {
		return nserr.NamespaceNotFoundf("namespace %s not found", quoteID(id))
	}
	return nil
}

func quoteID(id ident.ID) string {
	if id.IsRoot() {
		return "(root)"
	}
	return "'" + strings.Join(id, Delimiter) + "'"
}

// CreateNamespace creates namespace id (its parent must exist) with props and returns the
// properties it ends up with. Mode ExistOk keeps an existing namespace as it is; Overwrite
// replaces its properties.
func (n *Namespace) CreateNamespace(ctx context.Context, id ident.ID, props map[string]string, mode string, _ ...catalog.Option) (map[string]string, error) {
	if id.IsRoot() {
		if mode == catalog.ModeExistOk {
			return n.DescribeNamespace(ctx, id)
		}
		if mode == catalog.ModeOverwrite {
			return n.setRootProperties(ctx, props)
		}
		return nil, nserr.NamespaceAlreadyExistsf("the root namespace always exists")
	}
	oid, err := objectID(id)
	if err != nil {
		return nil, err
	}
	var result map[string]string
	_, err = n.commit(ctx, func(s *snapshot) (*change, error) {
		if err := s.requireNamespace(id.Parent()); err != nil {
			return nil, err
		}
		existing := s.rows[oid]
		if existing != nil && existing.Type != TypeNamespace {
			return nil, nserr.NamespaceAlreadyExistsf("%s is a %s, not a namespace", quoteID(id), existing.Type)
		}
		if existing != nil {
			switch mode {
			case catalog.ModeExistOk:
				result = decodeProps(existing.Metadata)
				return nil, errNoChange
			case catalog.ModeOverwrite:
				result = clonedProps(props)
				return &change{deletes: []*row{existing}, inserts: []newRow{{
					ObjectID: oid, Type: TypeNamespace, Metadata: encodeProps(props), BaseObjects: existing.BaseObjects, like: existing,
				}}}, nil
			}
			return nil, nserr.NamespaceAlreadyExistsf("namespace %s already exists", quoteID(id))
		}
		result = clonedProps(props)
		return &change{inserts: []newRow{{ObjectID: oid, Type: TypeNamespace, Metadata: encodeProps(props)}}}, nil
	})
	if err != nil {
		return nil, err
	}
	return result, nil
}

func clonedProps(p map[string]string) map[string]string {
	out := make(map[string]string, len(p))
	for k, v := range p {
		out[k] = v
	}
	return out
}

// setRootProperties replaces the root namespace's properties (the manifest table's metadata).
func (n *Namespace) setRootProperties(ctx context.Context, props map[string]string) (map[string]string, error) {
	_, err := n.commit(ctx, func(s *snapshot) (*change, error) {
		ch := &change{props: map[string]*string{}}
		for k := range s.properties() {
			if _, keep := props[k]; !keep {
				ch.props[k] = nil
			}
		}
		for k, v := range props {
			ch.props[k] = &v
		}
		return ch, nil
	})
	if err != nil {
		return nil, err
	}
	return clonedProps(props), nil
}

// DescribeNamespace returns the properties of namespace id.
func (n *Namespace) DescribeNamespace(ctx context.Context, id ident.ID) (map[string]string, error) {
	s, err := n.snapshot(ctx)
	if err != nil {
		return nil, err
	}
	if id.IsRoot() {
		return s.properties(), nil
	}
	oid, err := objectID(id)
	if err != nil {
		return nil, err
	}
	r, ok := s.namespace(oid)
	if !ok {
		return nil, nserr.NamespaceNotFoundf("namespace %s not found", quoteID(id))
	}
	return decodeProps(r.Metadata), nil
}

// NamespaceExists fails with NamespaceNotFound unless namespace id exists.
func (n *Namespace) NamespaceExists(ctx context.Context, id ident.ID) error {
	_, err := n.DescribeNamespace(ctx, id)
	return err
}

// ListNamespaces lists the direct child namespaces of id by name (relative), in name order.
func (n *Namespace) ListNamespaces(ctx context.Context, id ident.ID, token string, limit int) (catalog.Page, error) {
	s, err := n.snapshot(ctx)
	if err != nil {
		return catalog.Page{}, err
	}
	if err := s.requireNamespace(id); err != nil {
		return catalog.Page{}, err
	}
	oid, _ := objectID(id)
	return catalog.PageOf(s.childNames(oid, TypeNamespace), token, limit), nil
}

// childNames are the names of parent's direct children of one type, sorted.
func (s *snapshot) childNames(parent, typ string) []string {
	var out []string
	for _, r := range s.children[parent] {
		if r.Type == typ {
			out = append(out, r.ObjectID[len(parent)+len(Delimiter)*boolInt(parent != ""):])
		}
	}
	return out
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// DropNamespace drops namespace id. Restrict (the default) refuses a namespace with children,
// naming them; Cascade drops everything below it, deleting the tables' data. Mode Skip makes a
// missing namespace a success. It returns the dropped namespace's properties.
func (n *Namespace) DropNamespace(ctx context.Context, id ident.ID, mode, behavior string, _ ...catalog.Option) (map[string]string, error) {
	if id.IsRoot() {
		return nil, nserr.InvalidInputf("the root namespace cannot be dropped")
	}
	oid, err := objectID(id)
	if err != nil {
		return nil, err
	}
	var props map[string]string
	var dropped []string
	_, err = n.commit(ctx, func(s *snapshot) (*change, error) {
		props, dropped = nil, nil
		r, ok := s.namespace(oid)
		if !ok {
			if mode == catalog.ModeSkip {
				return nil, errNoChange
			}
			return nil, nserr.NamespaceNotFoundf("namespace %s not found", quoteID(id))
		}
		props = decodeProps(r.Metadata)
		kids := s.children[oid]
		if len(kids) > 0 && behavior != catalog.BehaviorCascade {
			names := make([]string, 0, 5)
			for _, k := range kids[:min(len(kids), 5)] {
				names = append(names, k.Type+" "+k.ObjectID[len(oid)+1:])
			}
			more := ""
			if len(kids) > 5 {
				more = ", …"
			}
			return nil, nserr.NamespaceNotEmptyf("namespace %s is not empty: it contains %d objects (%s%s)", quoteID(id), len(kids), strings.Join(names, ", "), more)
		}
		ch := &change{deletes: []*row{r}}
		for _, d := range s.descendants(oid) {
			ch.deletes = append(ch.deletes, d)
			if d.Type == TypeTable && d.Location != nil {
				dropped = append(dropped, *d.Location)
			}
		}
		return ch, nil
	})
	if err != nil {
		return nil, err
	}
	for _, loc := range dropped {
		if err := n.deleteDir(ctx, loc); err != nil {
			return nil, err
		}
	}
	return props, nil
}

// descendants are every row below oid (tables, namespaces, table versions).
func (s *snapshot) descendants(oid string) []*row {
	prefix := oid + Delimiter
	var out []*row
	for id, r := range s.rows {
		if strings.HasPrefix(id, prefix) {
			out = append(out, r)
		}
	}
	return out
}
