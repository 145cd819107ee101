package console

import (
	"context"
	"net/http"
	"net/url"
	"slices"
	"strings"

	"github.com/lancecat/lancecat/authz"
	nserr "github.com/lancecat/lancecat/errors"
	"github.com/lancecat/lancecat/gen/controlapi"
)

// The access page: the caller's own effective access to an object and where each right comes
// from (authz.Explain: one batched question set over the object's lineage), and, for those who
// may read the assignments, every grant that reaches the object, direct or inherited from the
// namespaces, warehouse and project above it (the access list door, once per level).

// effectiveRows are the rights the page reports, in the order it shows them: the model's
// effective relations (authz/model.fga), named for people.
var effectiveRows = map[string][]struct{ Relation, Label string }{
	authz.TypeTable: {{"reads", "read (describe, query)"}, {"writes", "write data"}, {"owns", "own (drop, tag, branch, restore)"},
		{"validates", "validate (promote)"}, {"can_maintain", "maintain (compact, clean up)"}, {"manage_grants", "manage grants"}},
	authz.TypeNamespace: {{"can_get_metadata", "see"}, {"reads", "read everything inside"}, {"writes", "write (create tables and namespaces)"},
		{"owns", "own (drop)"}, {"validates", "validate"}, {"maintains", "maintain"}, {"manage_grants", "manage grants"}},
	authz.TypeWarehouse: {{"can_get_metadata", "see"}, {"reads", "read everything inside"}, {"writes", "write (create namespaces)"},
		{"owns", "own"}, {"validates", "validate"}, {"maintains", "maintain"}, {"manage_grants", "manage grants"}},
	authz.TypeProject: {{"member", "member (read its warehouses)"}, {"admin", "administer (own its warehouses)"}},
}

// reported are the effective relations the page can name as coming from a rung, in the order
// implied lists them.
var reported = []string{"admin", "member", "owns", "writes", "reads", "validates", "maintains", "manage_grants", "can_get_metadata", "can_maintain"}

// implied are the effective relations a directly assignable rung gives on the object and below
// it, as the model derives them (authz.Implies reads the embedded model: owns ⊇ writes ⊇ reads;
// validates from owning; maintains only from maintainer; a project's admin owns its warehouses,
// its members read them; the catalog's admins own what hangs from it).
func implied(objectType, rung string) []string {
	gives := authz.Implies(objectType, rung)
	var out []string
	for _, r := range reported {
		if slices.Contains(gives, r) {
			out = append(out, r)
		}
	}
	return out
}

// lineObject is an object of the lineage as the page names and links it.
type lineObject struct {
	Type, Name string
	ID         []string // namespace and table ids; project and warehouse: the name alone
	Link       string
}

// source is why a right is held: a rung on an object of the lineage.
type source struct {
	Rung   string
	Object lineObject
	Direct bool // on the object itself
}

type myAccessRow struct {
	Relation, Label string
	Held            bool
	Sources         []source
	// Note explains a right held without a source the page can name, or one an owner lacks.
	Note string
}

type inheritedGrant struct {
	Subject, Relation string
	From              lineObject
	Direct            bool
	Gives             string // what the rung gives on this object, in words
}

type accessData struct {
	base
	Type, ID  string
	Grants    []grantRow
	Err       string
	ListNote  string
	Relations []string
	// Mine is the caller's effective access; MineNote says why it is not shown.
	Mine     []myAccessRow
	MineNote string
	Lineage  []lineObject
	// Effective are the grants reaching the object from every level the caller may read.
	Effective []inheritedGrant
	Hidden    []lineObject // levels whose grants the caller may not read
}

type grantRow struct{ Relation, Subject string }

// relations are the rungs a grant form offers for an object type (the API checks each anyway).
func relations(objectType string) []string {
	if objectType == "project" {
		return []string{"admin", "member"}
	}
	return []string{"reader", "writer", "owner", "validator", "maintainer", "manage_grants", "pass_grants"}
}

// authzObject is the authorization object of what the page names (type and id as the access
// doors take them).
func (c *Console) authzObject(typ, id string) (authz.Object, bool) {
	switch typ {
	case authz.TypeTable:
		return authz.TableObject(c.splitID(id)), id != ""
	case authz.TypeNamespace:
		return authz.NamespaceObject(c.splitID(id)), id != ""
	case authz.TypeWarehouse:
		return authz.WarehouseObject(id), id != ""
	case authz.TypeProject:
		return authz.ProjectObject(id), id != ""
	}
	return authz.Object{}, false
}

// named is an object of the lineage for the page; self is the page's own object (its name is
// known even when its id is hashed).
func (c *Console) named(o authz.Object) lineObject {
	l := lineObject{Type: o.Type, Name: o.String()}
	parts, ok := authz.DecodeID(o.ID)
	if o.Type == authz.TypeCatalog {
		return lineObject{Type: o.Type, Name: "the catalog (estate)"}
	}
	if !ok {
		return l
	}
	l.ID = parts
	l.Name = strings.Join(parts, c.delim)
	switch o.Type {
	case authz.TypeTable:
		l.Link = Prefix + "/table?id=" + url.QueryEscape(l.Name)
	case authz.TypeNamespace:
		l.Link = Prefix + "/namespace?id=" + url.QueryEscape(l.Name)
	case authz.TypeWarehouse:
		l.Link = Prefix + "/warehouses"
	}
	return l
}

func (c *Console) access(w http.ResponseWriter, r *http.Request, s session) {
	ctx := r.Context()
	typ, id := r.URL.Query().Get("type"), r.URL.Query().Get("id")
	d := accessData{base: c.base(ctx, r, s, "Access to "+typ+" "+id), Type: typ, ID: id, Relations: relations(typ)}
	obj, ok := c.authzObject(typ, id)
	if !ok {
		d.Err = "400 Bad Request: type must be project, warehouse, namespace or table, with an id"
		c.render(w, "access", d)
		return
	}
	ex, explainErr := c.myAccess(ctx, &d, obj)
	direct, listErr := c.listAccess(ctx, r, s, typ, id)
	switch {
	case explainErr != nil:
		// Refused: the caller may not see the object, and learns no more than the API says.
		d.Err = c.errText(explainErr)
	case listErr == nil:
		d.Grants = direct
	case refused(listErr) && ex != nil:
		// The caller sees the object but does not manage its grants: their own access is the page.
		d.ListNote = "Who else holds access here is shown to those who manage its grants."
	case notOffered(listErr):
		d.ListNote = "There are no grants to list: " + c.errText(listErr)
	default:
		d.Err = c.errText(listErr)
	}
	if listErr == nil && ex != nil {
		c.inherited(ctx, r, s, &d, ex.Lineage, direct)
	}
	c.render(w, "access", d)
}

// myAccess fills the caller's own rows; nil when they cannot be explained (authorization off,
// or the object is not the caller's to see: the error then is the refusal).
func (c *Console) myAccess(ctx context.Context, d *accessData, obj authz.Object) (*authz.Explanation, error) {
	switch {
	case d.Authz == "disabled":
		d.MineNote = "Authorization is off: every caller is the estate admin and holds every right."
		return nil, nil
	case c.explain == nil:
		d.MineNote = "This deployment cannot explain access."
		return nil, nil
	}
	p, err := authz.ParsePrincipal(d.Principal)
	if err != nil {
		d.MineNote = "Your identity could not be read: " + err.Error()
		return nil, nil
	}
	ex, err := c.explain.Explain(ctx, p, obj)
	if err != nil {
		return nil, asAPIError(err)
	}
	for _, o := range ex.Lineage {
		d.Lineage = append(d.Lineage, c.named(o))
	}
	for _, want := range effectiveRows[obj.Type] {
		row := myAccessRow{Relation: want.Relation, Label: want.Label, Held: ex.Effective[want.Relation]}
		for _, h := range ex.Direct {
			if slices.Contains(implied(h.Object.Type, h.Relation), want.Relation) {
				row.Sources = append(row.Sources, source{Rung: h.Relation, Object: c.named(h.Object), Direct: h.Object == obj})
			}
		}
		switch {
		case want.Relation == "manage_grants" && !row.Held && len(row.Sources) > 0:
			row.Note = "managed access is on above: owning does not give managing grants here"
			row.Sources = nil
		case !row.Held:
			row.Sources = nil
		case len(row.Sources) == 0 && want.Relation == "manage_grants":
			row.Note = "granted manage_grants here or above"
		case len(row.Sources) == 0:
			row.Note = "held through a rung this page does not list"
		}
		d.Mine = append(d.Mine, row)
	}
	return &ex, nil
}

func (c *Console) listAccess(ctx context.Context, r *http.Request, s session, typ, id string) ([]grantRow, error) {
	var al controlapi.AccessList
	v := url.Values{"object_type": {typ}, "object_id": {id}}
	if c.delim != "$" {
		v.Set("delimiter", c.delim)
	}
	if err := c.callJSON(ctx, r, s, http.MethodGet, "/v1/access/list?"+v.Encode(), nil, &al); err != nil {
		return nil, err
	}
	out := make([]grantRow, len(al.Grants))
	for i, g := range al.Grants {
		out[i] = grantRow{Relation: g.Relation, Subject: g.Subject}
	}
	return out, nil
}

// inherited lists the grants reaching the object: its own, then each level above it, as far as
// the caller may read them (one access list per level; the lineage is bounded).
func (c *Console) inherited(ctx context.Context, r *http.Request, s session, d *accessData, lineage []authz.Object, direct []grantRow) {
	for i, o := range lineage {
		lo := c.named(o)
		rows := direct
		if i > 0 {
			if o.Type == authz.TypeCatalog || lo.ID == nil {
				continue // the estate admins are no grant the access doors list
			}
			var err error
			rows, err = c.listAccess(ctx, r, s, o.Type, strings.Join(lo.ID, c.delim))
			if err != nil {
				d.Hidden = append(d.Hidden, lo)
				continue
			}
		}
		for _, g := range rows {
			d.Effective = append(d.Effective, inheritedGrant{Subject: g.Subject, Relation: g.Relation, From: lo, Direct: i == 0,
				Gives: gives(o.Type, g.Relation)})
		}
	}
}

// gives is what a rung held on an object of the lineage gives on the objects below it, in words.
func gives(objectType, rung string) string {
	imp := implied(objectType, rung)
	var words []string
	for _, r := range []struct{ rel, word string }{{"owns", "own"}, {"writes", "write"}, {"reads", "read"}, {"validates", "validate"},
		{"maintains", "maintain"}} {
		if slices.Contains(imp, r.rel) {
			words = append(words, r.word)
		}
	}
	switch {
	case rung == "manage_grants":
		return "manage grants"
	case rung == "pass_grants":
		return "pass on the rungs held"
	case len(words) == 0:
		return "—"
	}
	return strings.Join(words, ", ")
}

// asAPIError is an error of an in-process query as the API would have answered it (its spec
// code's status and title; the message only for a refusal of the caller's, never a fault's).
func asAPIError(err error) error {
	code := nserr.CodeOf(err)
	e := &apiError{Status: code.HTTPStatus(), Code: int(code), Title: code.Title()}
	if e.Status/100 == 4 {
		e.Detail = err.Error()
	}
	return e
}
