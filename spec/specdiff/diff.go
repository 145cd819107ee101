package main

// The structural diff of two OpenAPI documents, rendered as Markdown. Text (descriptions,
// summaries, examples) is left out on purpose: a bump is reviewed for what changes on the wire.

import (
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/getkin/kin-openapi/openapi3"
)

const schemaPrefix = "#/components/schemas/"

// operation is one spec operation, keyed by operationId.
type operation struct {
	id, method, path string
	op               *openapi3.Operation
}

func operations(doc *openapi3.T) map[string]operation {
	ops := map[string]operation{}
	for path, item := range doc.Paths.Map() {
		for method, op := range item.Operations() {
			id := op.OperationID
			if id == "" {
				id = method + " " + path
			}
			ops[id] = operation{id: id, method: method, path: path, op: op}
		}
	}
	return ops
}

// refName is the component schema a reference names ("" when it is inline).
func refName(ref *openapi3.SchemaRef) string {
	if ref == nil {
		return ""
	}
	if name, ok := strings.CutPrefix(ref.Ref, schemaPrefix); ok {
		return name
	}
	return ""
}

// summary is a compact type expression of a schema: `Name` for a component, else its type with
// the constraints that matter on the wire.
func summary(ref *openapi3.SchemaRef) string {
	if ref == nil || ref.Value == nil {
		return "(none)"
	}
	if name := refName(ref); name != "" {
		return "`" + name + "`"
	}
	s := ref.Value
	var facets []string
	add := func(format string, args ...any) { facets = append(facets, fmt.Sprintf(format, args...)) }
	if s.Format != "" {
		add("format %s", s.Format)
	}
	if len(s.Enum) > 0 {
		vals := make([]string, len(s.Enum))
		for i, v := range s.Enum {
			vals[i] = jsonText(v)
		}
		add("enum %s", strings.Join(vals, "|"))
	}
	if s.Const != nil {
		add("const %s", jsonText(s.Const))
	}
	if s.Default != nil {
		add("default %s", jsonText(s.Default))
	}
	if s.MinLength > 0 {
		add("minLength %d", s.MinLength)
	}
	if s.MaxLength != nil {
		add("maxLength %d", *s.MaxLength)
	}
	if s.Pattern != "" {
		add("pattern %s", s.Pattern)
	}
	if s.Min != nil {
		add("minimum %v", *s.Min)
	}
	if s.Max != nil {
		add("maximum %v", *s.Max)
	}
	if s.MinItems > 0 {
		add("minItems %d", s.MinItems)
	}
	if s.MaxItems != nil {
		add("maxItems %d", *s.MaxItems)
	}
	if s.UniqueItems {
		add("uniqueItems")
	}
	if s.Nullable {
		add("nullable")
	}
	typ := "any"
	if s.Type != nil && len(*s.Type) > 0 {
		typ = strings.Join(*s.Type, "|")
	}
	for _, c := range []struct {
		name string
		refs openapi3.SchemaRefs
	}{{"oneOf", s.OneOf}, {"anyOf", s.AnyOf}, {"allOf", s.AllOf}} {
		if len(c.refs) > 0 {
			parts := make([]string, len(c.refs))
			for i, r := range c.refs {
				parts[i] = summary(r)
			}
			typ = c.name + "(" + strings.Join(parts, ", ") + ")"
		}
	}
	out := typ
	if len(facets) > 0 {
		out += " (" + strings.Join(facets, ", ") + ")"
	}
	if s.Items != nil {
		out += " of " + summary(s.Items)
	}
	if ap := s.AdditionalProperties.Schema; ap != nil {
		out += " of values " + summary(ap)
	}
	return out
}

func jsonText(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(b)
}

// fieldChanges is the field-by-field diff of two schemas (nil: absent), prefixed by path; nested
// inline objects and array items are walked, component references are not (they are diffed as
// components of their own).
func fieldChanges(path string, old, new *openapi3.SchemaRef) []string {
	var out []string
	label := func(name string) string {
		if path == "" {
			return "`" + name + "`"
		}
		return "`" + path + "." + name + "`"
	}
	switch {
	case old == nil && new == nil:
		return nil
	case old == nil:
		return []string{"added: " + summary(new)}
	case new == nil:
		return []string{"removed (was " + summary(old) + ")"}
	}
	if refName(old) != "" || refName(new) != "" || old.Value == nil || new.Value == nil {
		if a, b := summary(old), summary(new); a != b {
			out = append(out, a+" → "+b)
		}
		return out
	}
	o, n := old.Value, new.Value
	if a, b := withoutEnum(o), withoutEnum(n); a != b {
		out = append(out, a+" → "+b)
	}
	// Required lists.
	for _, r := range minus(o.Required, n.Required) {
		if n.Properties[r] != nil || o.Properties[r] != nil {
			out = append(out, label(r)+" no longer required")
		}
	}
	for _, r := range minus(n.Required, o.Required) {
		if o.Properties[r] != nil {
			out = append(out, label(r)+" now required")
		}
	}
	// Enum values.
	if len(o.Enum) > 0 || len(n.Enum) > 0 {
		oe, ne := enumText(o.Enum), enumText(n.Enum)
		if added := minus(ne, oe); len(added) > 0 {
			out = append(out, "enum values added: "+strings.Join(added, ", "))
		}
		if removed := minus(oe, ne); len(removed) > 0 {
			out = append(out, "enum values removed: "+strings.Join(removed, ", "))
		}
	}
	// Properties.
	for _, name := range unionKeys(o.Properties, n.Properties) {
		op, np := o.Properties[name], n.Properties[name]
		switch {
		case op == nil:
			req := ""
			if slices.Contains(n.Required, name) {
				req = ", required"
			}
			out = append(out, label(name)+" added: "+summary(np)+req)
			continue
		case np == nil:
			out = append(out, label(name)+" removed (was "+summary(op)+")")
			continue
		}
		sub := path + "." + name
		if path == "" {
			sub = name
		}
		for _, c := range fieldChanges(sub, op, np) {
			if strings.HasPrefix(c, "`") {
				out = append(out, c)
			} else {
				out = append(out, "`"+sub+"`: "+c)
			}
		}
	}
	// Array items, when inline objects.
	if o.Items != nil && n.Items != nil && refName(o.Items) == "" && refName(n.Items) == "" &&
		o.Items.Value != nil && n.Items.Value != nil && (len(o.Items.Value.Properties) > 0 || len(n.Items.Value.Properties) > 0) {
		out = append(out, fieldChanges(path+"[]", o.Items, n.Items)...)
	}
	return out
}

// withoutEnum is a schema's summary without its own enum (enum values are diffed one by one).
func withoutEnum(s *openapi3.Schema) string {
	c := *s
	c.Enum = nil
	return summary(&openapi3.SchemaRef{Value: &c})
}

func enumText(vals []any) []string {
	out := make([]string, len(vals))
	for i, v := range vals {
		out[i] = jsonText(v)
	}
	return out
}

// minus is the elements of a not in b, in a's order.
func minus(a, b []string) []string {
	var out []string
	for _, x := range a {
		if !slices.Contains(b, x) {
			out = append(out, x)
		}
	}
	return out
}

func unionKeys[V any](a, b map[string]V) []string {
	keys := map[string]bool{}
	for k := range a {
		keys[k] = true
	}
	for k := range b {
		keys[k] = true
	}
	out := make([]string, 0, len(keys))
	for k := range keys {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// componentRefs is every component schema a schema references directly, with the property path
// it is referenced from ("" for the schema itself).
func componentRefs(ref *openapi3.SchemaRef, path string, out map[string]string, top bool) {
	if ref == nil {
		return
	}
	if name := refName(ref); name != "" && !top {
		if _, seen := out[name]; !seen {
			out[name] = path
		}
		return
	}
	s := ref.Value
	if s == nil {
		return
	}
	join := func(p, name string) string {
		if p == "" {
			return name
		}
		return p + "." + name
	}
	for _, name := range unionKeys(s.Properties, nil) {
		componentRefs(s.Properties[name], join(path, name), out, false)
	}
	componentRefs(s.Items, path+"[]", out, false)
	componentRefs(s.AdditionalProperties.Schema, path+"{}", out, false)
	for _, refs := range []openapi3.SchemaRefs{s.OneOf, s.AnyOf, s.AllOf} {
		for _, r := range refs {
			componentRefs(r, path, out, false)
		}
	}
}

// reach is every component schema reachable from roots (name → the chain that reaches it, e.g.
// "ExplainTableQueryPlanRequest.query"), breadth first so each chain is a shortest one.
func reach(doc *openapi3.T, roots []*openapi3.SchemaRef) map[string]string {
	found := map[string]string{}
	var queue []string
	visit := func(name, via string) {
		if _, seen := found[name]; seen {
			return
		}
		found[name] = via
		queue = append(queue, name)
	}
	for _, r := range roots {
		if name := refName(r); name != "" {
			visit(name, "")
			continue
		}
		direct := map[string]string{}
		componentRefs(r, "", direct, true)
		for _, name := range sortedKeys(direct) {
			visit(name, "")
		}
	}
	for len(queue) > 0 {
		name := queue[0]
		queue = queue[1:]
		s := doc.Components.Schemas[name]
		direct := map[string]string{}
		componentRefs(s, "", direct, true)
		for _, child := range sortedKeys(direct) {
			via := name
			if p := direct[child]; p != "" {
				via += "." + p
			}
			if chain := found[name]; chain != "" {
				via = chain + " → " + via
			}
			visit(child, via)
		}
	}
	return found
}

func sortedKeys[V any](m map[string]V) []string {
	return unionKeys(m, nil)
}

// bodies is an operation's request or response schemas by "status content-type" (request: by
// content type).
func requestSchemas(op *openapi3.Operation) map[string]*openapi3.SchemaRef {
	out := map[string]*openapi3.SchemaRef{}
	if op.RequestBody == nil || op.RequestBody.Value == nil {
		return out
	}
	for ct, mt := range op.RequestBody.Value.Content {
		out[ct] = mt.Schema
	}
	return out
}

func responseSchemas(op *openapi3.Operation) map[string]*openapi3.SchemaRef {
	out := map[string]*openapi3.SchemaRef{}
	if op.Responses == nil {
		return out
	}
	for code, r := range op.Responses.Map() {
		if r.Value == nil || len(r.Value.Content) == 0 {
			out[code] = nil
			continue
		}
		for ct, mt := range r.Value.Content {
			out[code+" "+ct] = mt.Schema
		}
	}
	return out
}

func values(m map[string]*openapi3.SchemaRef) []*openapi3.SchemaRef {
	out := make([]*openapi3.SchemaRef, 0, len(m))
	for _, k := range sortedKeys(m) {
		out = append(out, m[k])
	}
	return out
}

// parameters is an operation's parameters (path-level ones included) by "in name".
func parameters(doc *openapi3.T, o operation) map[string]*openapi3.Parameter {
	out := map[string]*openapi3.Parameter{}
	add := func(ps openapi3.Parameters) {
		for _, p := range ps {
			if p.Value != nil {
				out[p.Value.In+" "+p.Value.Name] = p.Value
			}
		}
	}
	add(doc.Paths.Value(o.path).Parameters)
	add(o.op.Parameters)
	return out
}

func paramSummary(p *openapi3.Parameter) string {
	var parts []string
	if p.Required {
		parts = append(parts, "required")
	} else {
		parts = append(parts, "optional")
	}
	parts = append(parts, summary(p.Schema))
	if s := p.Schema; s != nil && s.Value != nil && s.Value.Type != nil && (s.Value.Type.Is("array") || s.Value.Type.Is("object")) {
		style, explode := p.Style, p.Explode
		if style == "" {
			style = map[string]string{"query": "form", "cookie": "form", "path": "simple", "header": "simple"}[p.In]
		}
		ex := style == "form"
		if explode != nil {
			ex = *explode
		}
		if ex {
			parts = append(parts, style+" style, exploded")
		} else {
			parts = append(parts, style+" style, not exploded")
		}
	}
	if p.Deprecated {
		parts = append(parts, "deprecated")
	}
	return strings.Join(parts, ", ")
}

// Report is the Markdown report of what moving from old to new changes. handler names the
// file implementing an operation ("" when none is found).
func Report(oldName, newName string, old, new *openapi3.T, handler func(op string) string) string {
	var b strings.Builder
	w := func(format string, args ...any) { fmt.Fprintf(&b, format, args...) }

	oldOps, newOps := operations(old), operations(new)
	oldSchemas, newSchemas := old.Components.Schemas, new.Components.Schemas

	// Component schemas: added, removed, changed (own fields only).
	schemaChanges := map[string][]string{}
	var addedSchemas, removedSchemas, changedSchemas []string
	for _, name := range unionKeys(oldSchemas, newSchemas) {
		o, n := oldSchemas[name], newSchemas[name]
		switch {
		case o == nil:
			addedSchemas = append(addedSchemas, name)
		case n == nil:
			removedSchemas = append(removedSchemas, name)
		default:
			if c := fieldChanges("", o, n); len(c) > 0 {
				changedSchemas = append(changedSchemas, name)
				schemaChanges[name] = c
			}
		}
	}
	touchedSchema := map[string]bool{}
	for _, n := range slices.Concat(addedSchemas, removedSchemas, changedSchemas) {
		touchedSchema[n] = true
	}
	kindOf := func(name string) string {
		switch {
		case slices.Contains(addedSchemas, name):
			return "added"
		case slices.Contains(removedSchemas, name):
			return "removed"
		}
		return "changed"
	}

	// Operations: added, removed, changed (own parameters and bodies, or a schema they reach).
	type opChange struct {
		own     []string
		schemas []string // "`Name` (request via X)"
	}
	var addedOps, removedOps, changedOps []string
	opChanges := map[string]*opChange{}
	usedBy := map[string][]string{} // schema → operations reaching it
	for _, id := range unionKeys(oldOps, newOps) {
		o, oOK := oldOps[id]
		n, nOK := newOps[id]
		if !oOK {
			addedOps = append(addedOps, id)
			continue
		}
		if !nOK {
			removedOps = append(removedOps, id)
			continue
		}
		c := &opChange{}
		if o.method != n.method || o.path != n.path {
			c.own = append(c.own, fmt.Sprintf("route: %s %s → %s %s", o.method, o.path, n.method, n.path))
		}
		op, np := parameters(old, o), parameters(new, n)
		for _, key := range unionKeys(op, np) {
			in, name, _ := strings.Cut(key, " ")
			a, z := op[key], np[key]
			switch {
			case a == nil:
				c.own = append(c.own, fmt.Sprintf("parameter `%s` (%s) added: %s", name, in, paramSummary(z)))
			case z == nil:
				c.own = append(c.own, fmt.Sprintf("parameter `%s` (%s) removed (was %s)", name, in, paramSummary(a)))
			default:
				if sa, sz := paramSummary(a), paramSummary(z); sa != sz {
					c.own = append(c.own, fmt.Sprintf("parameter `%s` (%s): %s → %s", name, in, sa, sz))
				}
			}
		}
		for _, part := range []struct {
			what     string
			old, new map[string]*openapi3.SchemaRef
		}{
			{"request body", requestSchemas(o.op), requestSchemas(n.op)},
			{"response", responseSchemas(o.op), responseSchemas(n.op)},
		} {
			for _, key := range unionKeys(part.old, part.new) {
				a, aOK := part.old[key]
				z, zOK := part.new[key]
				switch {
				case !aOK:
					c.own = append(c.own, fmt.Sprintf("%s %s added: %s", part.what, key, summary(z)))
				case !zOK:
					c.own = append(c.own, fmt.Sprintf("%s %s removed (was %s)", part.what, key, summary(a)))
				default:
					if refName(a) == "" && refName(z) == "" {
						for _, fc := range fieldChanges("", a, z) {
							c.own = append(c.own, fmt.Sprintf("%s %s: %s", part.what, key, fc))
						}
					} else if sa, sz := summary(a), summary(z); sa != sz {
						c.own = append(c.own, fmt.Sprintf("%s %s: %s → %s", part.what, key, sa, sz))
					}
				}
			}
			oldReach, newReach := reach(old, values(part.old)), reach(new, values(part.new))
			for _, name := range unionKeys(oldReach, newReach) {
				if !touchedSchema[name] {
					continue
				}
				via, ok := newReach[name]
				if !ok {
					via = oldReach[name]
				}
				where := strings.TrimSuffix(part.what, " body")
				if via != "" {
					where += " via `" + via + "`"
				}
				c.schemas = append(c.schemas, fmt.Sprintf("`%s` (%s) %s", name, where, kindOf(name)))
				usedBy[name] = append(usedBy[name], fmt.Sprintf("`%s` (%s)", id, where))
			}
		}
		// A schema named after the operation (<Op>Request, <Op>Response) belongs to it even when
		// the REST body is not JSON (merge_insert's body is Arrow; its request schema describes
		// the parameters implementations pass through).
		for _, suffix := range []string{"Request", "Response"} {
			name := id + suffix
			if touchedSchema[name] && !slices.ContainsFunc(c.schemas, func(s string) bool { return strings.HasPrefix(s, "`"+name+"`") }) {
				c.schemas = append(c.schemas, fmt.Sprintf("`%s` (its %s schema) %s", name, strings.ToLower(suffix), kindOf(name)))
				usedBy[name] = append(usedBy[name], fmt.Sprintf("`%s` (its %s schema)", id, strings.ToLower(suffix)))
			}
		}
		if len(c.own) > 0 || len(c.schemas) > 0 {
			changedOps = append(changedOps, id)
			opChanges[id] = c
		}
	}

	handlerOf := func(id string) string {
		if h := handler(id); h != "" {
			return "`" + h + "`"
		}
		return "no handler found"
	}

	w("# Lance Namespace spec changes: `%s` → `%s`\n\n", oldName, newName)
	w("- Operations: %d → %d (%d added, %d removed, %d changed)\n", len(oldOps), len(newOps), len(addedOps), len(removedOps), len(changedOps))
	w("- Schemas: %d → %d (%d added, %d removed, %d changed)\n", len(oldSchemas), len(newSchemas), len(addedSchemas), len(removedSchemas), len(changedSchemas))
	if o, n := infoVersion(old), infoVersion(new); o != n {
		w("- info.version: %s → %s\n", o, n)
	} else {
		w("- info.version: %s in both (it does not identify the spec: pin by release tag or commit)\n", o)
	}
	if o, n := serverURLs(old), serverURLs(new); !slices.Equal(o, n) {
		w("\n## Servers\n\n")
		for _, u := range minus(n, o) {
			w("- added: %s (position %d)\n", u, slices.Index(n, u)+1)
		}
		for _, u := range minus(o, n) {
			w("- removed: %s\n", u)
		}
		w("- before: %s\n", strings.Join(o, ", "))
		w("- after: %s\n", strings.Join(n, ", "))
	}
	if len(addedOps) > 0 {
		w("\n## Operations added\n\n")
		for _, id := range addedOps {
			n := newOps[id]
			w("- `%s`: %s %s (handler to write: a method `%s` of `handlers.Server`)\n", id, n.method, n.path, id)
		}
	}
	if len(removedOps) > 0 {
		w("\n## Operations removed\n\n")
		for _, id := range removedOps {
			o := oldOps[id]
			w("- `%s`: %s %s (handler: %s)\n", id, o.method, o.path, handlerOf(id))
		}
	}
	if len(changedOps) > 0 {
		w("\n## Operations changed\n")
		for _, id := range changedOps {
			n, c := newOps[id], opChanges[id]
			w("\n### `%s`: %s %s\n\nHandler: %s\n\n", id, n.method, n.path, handlerOf(id))
			for _, line := range c.own {
				w("- %s\n", line)
			}
			for _, s := range c.schemas {
				w("- schema %s (see below)\n", s)
			}
		}
	}
	if len(addedSchemas)+len(removedSchemas)+len(changedSchemas) > 0 {
		w("\n## Schemas\n")
		for _, name := range unionKeys(oldSchemas, newSchemas) {
			var kind string
			var lines []string
			switch {
			case slices.Contains(addedSchemas, name):
				kind = "added"
				s := newSchemas[name]
				lines = append(lines, "shape: "+summary(&openapi3.SchemaRef{Value: s.Value}))
				for _, p := range sortedKeys(s.Value.Properties) {
					line := "`" + p + "`: " + summary(s.Value.Properties[p])
					if slices.Contains(s.Value.Required, p) {
						line += ", required"
					}
					lines = append(lines, line)
				}
			case slices.Contains(removedSchemas, name):
				kind = "removed"
				lines = append(lines, "was: "+summary(&openapi3.SchemaRef{Value: oldSchemas[name].Value}))
			case slices.Contains(changedSchemas, name):
				kind = "changed"
				lines = schemaChanges[name]
			default:
				continue
			}
			w("\n### `%s` (%s)\n\n", name, kind)
			if users := usedBy[name]; len(users) > 0 {
				w("Used by: %s\n\n", strings.Join(users, ", "))
			} else {
				w("Used by no operation\n\n")
			}
			for _, line := range lines {
				w("- %s\n", line)
			}
		}
	}
	// Handlers touched.
	files := map[string][]string{}
	for _, id := range slices.Concat(removedOps, changedOps) {
		files[handlerOf(id)] = append(files[handlerOf(id)], "`"+id+"`")
	}
	for _, id := range addedOps {
		files["(new)"] = append(files["(new)"], "`"+id+"`")
	}
	if len(files) > 0 {
		w("\n## Handlers touched\n\n| Handler | Operations |\n|---|---|\n")
		for _, f := range sortedKeys(files) {
			w("| %s | %s |\n", f, strings.Join(files[f], ", "))
		}
	}
	if len(addedOps)+len(removedOps)+len(changedOps)+len(addedSchemas)+len(removedSchemas)+len(changedSchemas) == 0 {
		w("\nNo operation or schema changes.\n")
	}
	return b.String()
}

func infoVersion(doc *openapi3.T) string {
	if doc.Info == nil {
		return "(none)"
	}
	return doc.Info.Version
}

func serverURLs(doc *openapi3.T) []string {
	out := make([]string, len(doc.Servers))
	for i, s := range doc.Servers {
		out[i] = "`" + s.URL + "`"
	}
	return out
}
