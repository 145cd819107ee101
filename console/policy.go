package console

import (
	"context"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/lancecat/lancecat/gen/controlapi"
)

// policyView is the maintenance policy in force for a table or namespace, as its describe door
// answers it, with the record that won named for people.
type policyView struct {
	Knobs []policyKnob
	// Kind is the winning record's kind (table, namespace, project or default); Won names it
	// ("namespace sales", "the built-in defaults"); Link leads to its page where it has one.
	Kind, Won, Link string
	SetBy           string
	UpdatedAt       string
}

type policyKnob struct{ Name, Value string }

// describePolicy reads the effective policy of a table or namespace (kind). A caller who may not
// read it (or a deployment without governance) gets nil and no error: the section says so.
func (c *Console) describePolicy(ctx context.Context, r *http.Request, s session, kind string, id []string) (*policyView, error) {
	var ep controlapi.EffectivePolicy
	err := c.callJSON(ctx, r, s, http.MethodPost, "/v1/"+kind+"/"+c.idPath(id)+"/policy/describe"+c.delimQuery("?"), nil, &ep)
	if err != nil {
		if refused(err) || notOffered(err) {
			return nil, nil
		}
		return nil, err
	}
	v := &policyView{Kind: string(ep.Source.Kind), SetBy: deref(ep.Source.SetBy)}
	if ep.Source.UpdatedAt != nil {
		v.UpdatedAt = ep.Source.UpdatedAt.UTC().Format(time.DateTime)
	}
	src := deref(ep.Source.Id)
	switch v.Kind {
	case "table":
		v.Won, v.Link = "table "+strings.Join(src, c.delim), Prefix+"/table?id="+strings.Join(src, c.delim)
	case "namespace":
		v.Won, v.Link = "namespace "+strings.Join(src, c.delim), Prefix+"/namespace?id="+strings.Join(src, c.delim)
	case "project":
		v.Won = "project " + strings.Join(src, c.delim)
	default:
		v.Won = "the built-in defaults (no table, namespace or project record applies)"
	}
	p := ep.Policy
	add := func(name string, val any) { v.Knobs = append(v.Knobs, policyKnob{name, formatKnob(val)}) }
	add("compaction", p.CompactEnabled)
	add("compaction interval (hours)", p.CompactIntervalHours)
	add("target rows per fragment", p.TargetRowsPerFragment)
	add("cleanup of old versions", p.CleanupEnabled)
	add("retention (days)", p.RetentionDays)
	add("versions retained", p.RetainVersions)
	add("index optimization", p.OptimizeIndicesEnabled)
	return v, nil
}

func formatKnob(v any) string {
	switch x := v.(type) {
	case *bool:
		if x == nil {
			return "—"
		}
		if *x {
			return "on"
		}
		return "off"
	case *int:
		if x == nil {
			return "—"
		}
		return strconv.Itoa(*x)
	}
	return "—"
}
