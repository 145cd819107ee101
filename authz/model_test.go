package authz

import (
	"encoding/json"
	"os"
	"testing"

	"gotest.tools/v3/assert"

	"github.com/lancecat/lancecat/authz/internal/fgadsl"
)

// The JSON the server receives must be exactly what the DSL we review compiles to.
func TestModelJSONIsGenerated(t *testing.T) {
	dsl, err := os.ReadFile("model.fga")
	assert.NilError(t, err)
	want, err := fgadsl.Compile(string(dsl))
	assert.NilError(t, err)
	got, err := os.ReadFile("model.json")
	assert.NilError(t, err)
	assert.Assert(t, string(got) == string(want), "model.json is stale: run `go generate ./authz`")
	assert.Equal(t, ModelDSL, string(dsl))
}

// The model is written through the SDK's types; a field they do not know would be silently dropped.
func TestModelSurvivesTheSDKTypes(t *testing.T) {
	viaSDK, err := json.Marshal(theModel.request)
	assert.NilError(t, err)
	same, err := sameModel(viaSDK, modelJSON)
	assert.NilError(t, err)
	assert.Assert(t, same)
}

func TestSameModelSeesMeaningfulDifferences(t *testing.T) {
	base := `{"type_definitions":[{"type":"doc","relations":{"v":{"this":{}}},"metadata":{"relations":{"v":{"directly_related_user_types":[{"type":"user"}]}}}}]}`
	cases := []struct {
		name  string
		other string
		same  bool
	}{
		{"echoed with zero values", `{"id":"","conditions":{},"type_definitions":[{"type":"doc","relations":{"v":{"this":{}}},"metadata":{"module":"","source_info":null,"relations":{"v":{"directly_related_user_types":[{"type":"user","condition":""}]}}}}]}`, true},
		{"wildcard", `{"type_definitions":[{"type":"doc","relations":{"v":{"this":{}}},"metadata":{"relations":{"v":{"directly_related_user_types":[{"type":"user","wildcard":{}}]}}}}]}`, false},
		{"rewrite", `{"type_definitions":[{"type":"doc","relations":{"v":{"computedUserset":{"relation":"w"}}},"metadata":{"relations":{"v":{"directly_related_user_types":[{"type":"user"}]}}}}]}`, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			same, err := sameModel([]byte(base), []byte(c.other))
			assert.NilError(t, err)
			assert.Equal(t, same, c.same)
		})
	}
}

// Every door checks a relation that exists on every type it may be checked on.
func TestEveryRuleNamesARelationOfTheModel(t *testing.T) {
	for _, a := range Actions() {
		r := rules[a]
		assert.Assert(t, len(r.types) > 0, "%s has no object type", a)
		for _, typ := range r.types {
			assert.Assert(t, theModel.relations[typ][r.relation], "%s checks %s, which %s does not define", a, r.relation, typ)
		}
	}
}

func TestGrantableRelations(t *testing.T) {
	for _, typ := range []string{TypeWarehouse, TypeNamespace, TypeTable} {
		for rung := range grantActions {
			assert.Assert(t, theModel.grantable[typ][rung], "%s is not grantable on %s", rung, typ)
		}
		for _, structural := range []string{"parent", "child", "navigator", "project", "owns", "writes", "reads", "can_drop", "can_get_metadata"} {
			assert.Assert(t, !theModel.grantable[typ][structural], "%s must not be grantable on %s", structural, typ)
		}
	}
	assert.Assert(t, theModel.grantable[TypeProject]["admin"])
	assert.Assert(t, theModel.grantable[TypeCatalog]["admin"])
}

// RevokeAll finds edges naming an object through these; a missing one leaves a dangling edge that
// a later object of the same id would inherit through.
func TestReferrers(t *testing.T) {
	assert.DeepEqual(t, refTypes(TypeNamespace), map[string]bool{TypeNamespace: true, TypeWarehouse: true, TypeTable: true})
	assert.DeepEqual(t, refTypes(TypeTable), map[string]bool{TypeNamespace: true})
	assert.DeepEqual(t, refTypes(TypeWarehouse), map[string]bool{TypeNamespace: true})
	assert.DeepEqual(t, refTypes(TypeProject), map[string]bool{TypeWarehouse: true})
	assert.DeepEqual(t, refTypes(TypeCatalog), map[string]bool{TypeNamespace: true, TypeTable: true})
}

func refTypes(typ string) map[string]bool {
	out := map[string]bool{}
	for _, r := range theModel.referrers[typ] {
		out[r.objectType] = true
	}
	return out
}
