package expr

import "strings"

// FilterText is src as a filter means it: Lance coerces regexp_match (a list of the matches) to
// a boolean where it filters rows — anywhere in the predicate, under AND, OR, NOT and
// comparisons — true where the pattern matches and false elsewhere, a NULL string too (the SDK
// embedded: NOT regexp_match(name, '^n1') keeps the rows whose name is NULL; it warns
// "regexp_match now is coerced to boolean … use regexp_like instead"). FilterText rewrites each
// regexp_match(…) to coalesce(regexp_like(…), false); a filter without one, or one that does not
// parse (its error is the binder's to word), comes back as it is.
func FilterText(src string) string {
	if !strings.Contains(strings.ToLower(src), "regexp_match") {
		return src
	}
	e, err := Parse(src)
	if err != nil {
		return src
	}
	changed := false
	e = rewriteCalls(e, func(c *Call) Expr {
		if !strings.EqualFold(c.Name, "regexp_match") {
			return c
		}
		changed = true
		like := &Call{P: c.P, Name: "regexp_like", Args: c.Args}
		return &Call{P: c.P, Name: "coalesce", Args: []Expr{like, &Literal{P: c.P, Kind: LitBool, Text: "false"}}}
	})
	if !changed {
		return src
	}
	return e.String()
}

// rewriteCalls replaces every call in e (its arguments first) by what f makes of it.
func rewriteCalls(e Expr, f func(*Call) Expr) Expr {
	r := func(x Expr) Expr { return rewriteCalls(x, f) }
	switch e := e.(type) {
	case *Unary:
		e.X = r(e.X)
	case *Binary:
		e.L, e.R = r(e.L), r(e.R)
	case *Is:
		e.X = r(e.X)
	case *InList:
		e.X = r(e.X)
		for i := range e.List {
			e.List[i] = r(e.List[i])
		}
	case *Between:
		e.X, e.Lo, e.Hi = r(e.X), r(e.Lo), r(e.Hi)
	case *Like:
		e.X, e.Pattern = r(e.X), r(e.Pattern)
	case *Cast:
		e.X = r(e.X)
	case *Case:
		if e.Operand != nil {
			e.Operand = r(e.Operand)
		}
		for i := range e.Whens {
			e.Whens[i].Cond, e.Whens[i].Then = r(e.Whens[i].Cond), r(e.Whens[i].Then)
		}
		if e.Else != nil {
			e.Else = r(e.Else)
		}
	case *Call:
		for i := range e.Args {
			e.Args[i] = r(e.Args[i])
		}
		return f(e)
	}
	return e
}
