package authz

import (
	_ "embed"
	"encoding/json"
	"fmt"
	"reflect"
	"slices"

	openfga "github.com/openfga/go-sdk"
)

//go:generate go run ./internal/genmodel model.fga model.json

// ModelDSL is the authorization model as we write it (OpenFGA DSL, schema 1.1).
//
//go:embed model.fga
var ModelDSL string

// modelJSON is ModelDSL compiled for the OpenFGA API by `go generate` (internal/genmodel).
//
//go:embed model.json
var modelJSON []byte

// model is what the code needs to know about the model: which relations exist on which type,
// which can be granted, and which types can name an object as their user.
type model struct {
	request openfga.WriteAuthorizationModelRequest
	// relations[type][relation] exists.
	relations map[string]map[string]bool
	// grantable[type][relation]: directly assignable to a user, team or role (not a structural edge,
	// not navigator, which only the authorizer writes).
	grantable map[string]map[string]bool
	// subjects[type][relation] are the subject forms a tuple of relation on type may name:
	// "user", "user:*", "team#member", …
	subjects map[string]map[string][]string
	// referrers[type] lists where an object of type may appear as a tuple's user: the object type
	// holding the tuple and the userset relation on the referenced object ("" for the object itself).
	referrers map[string][]referrer
}

type referrer struct {
	objectType string
	userset    string
}

var theModel = mustParseModel(modelJSON)

func mustParseModel(js []byte) *model {
	m, err := parseModel(js)
	if err != nil {
		panic(fmt.Sprintf("authz: the embedded model.json is broken (run go generate ./authz): %v", err))
	}
	return m
}

func parseModel(js []byte) (*model, error) {
	m := &model{
		relations: map[string]map[string]bool{},
		grantable: map[string]map[string]bool{},
		subjects:  map[string]map[string][]string{},
		referrers: map[string][]referrer{},
	}
	if err := json.Unmarshal(js, &m.request); err != nil {
		return nil, err
	}
	for _, td := range m.request.TypeDefinitions {
		m.relations[td.Type] = map[string]bool{}
		m.grantable[td.Type] = map[string]bool{}
		m.subjects[td.Type] = map[string][]string{}
		for rel := range td.GetRelations() {
			m.relations[td.Type][rel] = true
		}
		meta := td.GetMetadata()
		for rel, rm := range meta.GetRelations() {
			for _, ref := range rm.GetDirectlyRelatedUserTypes() {
				if isPrincipalType(ref.Type) && rel != navigatorRelation {
					m.grantable[td.Type][rel] = true
				}
				m.subjects[td.Type][rel] = append(m.subjects[td.Type][rel], subjectForm(ref))
				r := referrer{objectType: td.Type, userset: ref.GetRelation()}
				if ref.Wildcard == nil && !slices.Contains(m.referrers[ref.Type], r) {
					m.referrers[ref.Type] = append(m.referrers[ref.Type], r)
				}
			}
		}
	}
	return m, nil
}

// subjectForm is how a directly related user type reads: "user", "user:*" or "team#member".
func subjectForm(ref openfga.RelationReference) string {
	switch {
	case ref.Wildcard != nil:
		return ref.Type + ":*"
	case ref.GetRelation() != "":
		return ref.Type + "#" + ref.GetRelation()
	}
	return ref.Type
}

// isPrincipalType: grants go to users, teams and roles; every other directly related type is a
// structural edge that only SeedCreate writes.
func isPrincipalType(t string) bool { return t == TypeUser || t == TypeTeam || t == TypeRole }

// sameModel reports whether two models (as JSON) mean the same thing. OpenFGA echoes a stored model
// with its zero-valued fields filled in (empty condition names, null source info), so both sides
// are compared with zero values dropped.
func sameModel(a, b []byte) (bool, error) {
	var x, y any
	if err := json.Unmarshal(a, &x); err != nil {
		return false, err
	}
	if err := json.Unmarshal(b, &y); err != nil {
		return false, err
	}
	return reflect.DeepEqual(dropZero(x), dropZero(y)), nil
}

func dropZero(v any) any {
	switch t := v.(type) {
	case map[string]any:
		out := map[string]any{}
		for k, e := range t {
			e = dropZero(e)
			if e == nil || (isEmpty(e) && !meaningfulEmpty[k]) {
				continue
			}
			out[k] = e
		}
		return out
	case []any:
		out := make([]any, len(t))
		for i, e := range t {
			out[i] = dropZero(e)
		}
		return out
	case string:
		if t == "" {
			return nil
		}
		return t
	case bool:
		if !t {
			return nil
		}
		return t
	default:
		return v
	}
}

// meaningfulEmpty are the keys whose empty object says something: `"this": {}` is a direct
// assignment and `"wildcard": {}` turns "user" into "user:*".
var meaningfulEmpty = map[string]bool{"this": true, "wildcard": true}

func isEmpty(v any) bool {
	switch t := v.(type) {
	case map[string]any:
		return len(t) == 0
	case []any:
		return len(t) == 0
	}
	return false
}
