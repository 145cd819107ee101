package mview

// The SQL of a query-backed materialized view: one SELECT over one table of the catalog.
//
// Which parser: our own clause splitter feeding package expr. The expressions of a view (its
// select items, WHERE, GROUP BY, HAVING, ORDER BY keys) are exactly the dialect the data plane
// already parses, binds and evaluates (expr: DataFusion's dialect as the Lance clients send it),
// so a view's `price * qty` means what a query's projection `price * qty` means. A general SQL
// parser (vitess's sqlparser forks: ~10 MB of generated yacc tables and a MySQL dialect;
// pingcap/tidb's parser: a MySQL dialect with a large dependency tree) would parse a dialect
// other than the one our engine evaluates and still need a translation of every node into expr.
// What is left above expressions is small: a SELECT's clause keywords at parenthesis depth 0,
// which a tokenizer that respects quotes and parentheses finds.
//
// Every clause is handed to expr padded with spaces to its offset in the query, so every error
// position (ours and expr's) is a byte offset in the source query.

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	nserr "github.com/lancecat/lancecat/errors"
	"github.com/lancecat/lancecat/expr"
)

// Query is a parsed view query.
type Query struct {
	Items   []Item
	From    []string // the source table's id, as written (one part: in the view's namespace)
	FromPos int
	Where   expr.Expr
	GroupBy []expr.Expr
	Having  expr.Expr
	OrderBy []OrderKey
	Limit   *int64
	Offset  int64
	// distinct holds the positions of count(DISTINCT …) calls.
	distinct map[int]bool
}

// Item is one select item.
type Item struct {
	Expr  expr.Expr
	Alias string
}

// Name is the output column name of the item.
func (it Item) Name() string { return expr.SelectItem{Expr: it.Expr, Alias: it.Alias}.Name() }

// OrderKey is one ORDER BY key.
type OrderKey struct {
	Expr       expr.Expr
	Descending bool
	NullsFirst bool
}

// SyntaxError is a view query that does not parse (or uses what views do not support), with
// the byte offset it refers to.
type SyntaxError struct {
	Pos int
	Msg string
}

func (e *SyntaxError) Error() string { return fmt.Sprintf("%s at position %d", e.Msg, e.Pos) }

func syntaxErr(pos int, format string, args ...any) error {
	e := &SyntaxError{Pos: pos, Msg: fmt.Sprintf(format, args...)}
	return nserr.Wrap(nserr.InvalidInput, e, "invalid source_query: "+e.Error())
}

// exprErr re-words an error of package expr as a source_query error (its position is already
// an offset in the query: clauses are padded).
func exprErr(err error) error {
	var ee *expr.Error
	if errors.As(err, &ee) {
		msg := ee.Msg
		if ee.Column != "" {
			msg += fmt.Sprintf(" (column %q)", ee.Column)
		}
		pos := ee.Pos
		if pos < 0 {
			pos = 0
		}
		return syntaxErr(pos, "%s", msg)
	}
	return err
}

type tokKind int

const (
	tkEOF tokKind = iota
	tkWord
	tkQuoted
	tkString
	tkNumber
	tkPunct
)

type tok struct {
	kind  tokKind
	text  string
	pos   int
	end   int
	depth int // parenthesis depth before the token
}

// tokenize splits src into words, quoted identifiers, strings, numbers and punctuation, with
// each token's parenthesis depth. It only needs to be right about where clauses start: the
// clauses themselves are parsed by expr.
func tokenize(src string) ([]tok, error) {
	var out []tok
	depth := 0
	for i := 0; i < len(src); {
		c := src[i]
		switch {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r':
			i++
		case c == '-' && i+1 < len(src) && src[i+1] == '-':
			for i < len(src) && src[i] != '\n' {
				i++
			}
		case c == '\'' || c == '"' || c == '`':
			start := i
			i++
			for {
				if i >= len(src) {
					return nil, syntaxErr(start, "unterminated %c", c)
				}
				if src[i] == c {
					if i+1 < len(src) && src[i+1] == c {
						i += 2
						continue
					}
					i++
					break
				}
				i++
			}
			k := tkQuoted
			if c == '\'' {
				k = tkString
			}
			out = append(out, tok{kind: k, text: src[start:i], pos: start, end: i, depth: depth})
		case c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= 0x80:
			start := i
			for i < len(src) && (src[i] == '_' || src[i] >= 'a' && src[i] <= 'z' || src[i] >= 'A' && src[i] <= 'Z' || src[i] >= '0' && src[i] <= '9' || src[i] >= 0x80) {
				i++
			}
			out = append(out, tok{kind: tkWord, text: src[start:i], pos: start, end: i, depth: depth})
		case c >= '0' && c <= '9':
			start := i
			for i < len(src) && (src[i] >= '0' && src[i] <= '9' || src[i] == '.' || src[i] == 'e' || src[i] == 'E') {
				i++
			}
			out = append(out, tok{kind: tkNumber, text: src[start:i], pos: start, end: i, depth: depth})
		default:
			if c == ')' {
				depth--
				if depth < 0 {
					return nil, syntaxErr(i, "unbalanced ')'")
				}
			}
			out = append(out, tok{kind: tkPunct, text: string(c), pos: i, end: i + 1, depth: depth})
			if c == '(' {
				depth++
			}
			i++
		}
	}
	if depth != 0 {
		return nil, syntaxErr(len(src), "unbalanced '('")
	}
	return append(out, tok{kind: tkEOF, pos: len(src), end: len(src)}), nil
}

func (t tok) is(word string) bool { return t.kind == tkWord && strings.EqualFold(t.text, word) }

// MaxQueryLen bounds a view query (it is stored in the view's metadata).
const MaxQueryLen = 64 << 10

// Parse parses a view query: SELECT items FROM table [WHERE e] [GROUP BY e, …] [HAVING e]
// [ORDER BY e [ASC|DESC] [NULLS FIRST|LAST], …] [LIMIT n] [OFFSET n]. Joins, subqueries, set
// operations, WITH and DISTINCT are refused with their position.
func Parse(src string) (*Query, error) {
	if len(src) > MaxQueryLen {
		return nil, syntaxErr(MaxQueryLen, "the query is longer than %d bytes", MaxQueryLen)
	}
	toks, err := tokenize(src)
	if err != nil {
		return nil, err
	}
	if !toks[0].is("SELECT") {
		return nil, syntaxErr(toks[0].pos, "a view's query must start with SELECT")
	}
	if toks[1].is("DISTINCT") {
		return nil, syntaxErr(toks[1].pos, "SELECT DISTINCT is not supported: use GROUP BY")
	}
	// Rewrite count(*) to count(1) and count(DISTINCT x) to count(x) (remembered), in place so
	// every position stays.
	buf := []byte(src)
	q := &Query{distinct: map[int]bool{}}
	for i := 0; i+2 < len(toks); i++ {
		if !toks[i].is("count") || toks[i+1].text != "(" || toks[i+1].kind != tkPunct {
			continue
		}
		switch a := toks[i+2]; {
		case a.kind == tkPunct && a.text == "*":
			buf[a.pos] = '1'
		case a.is("DISTINCT"):
			for k := a.pos; k < a.end; k++ {
				buf[k] = ' '
			}
			q.distinct[toks[i].pos] = true
		}
	}
	text := string(buf)
	// Clause boundaries at depth 0.
	type clause struct {
		name       string
		start, end int // the clause's body
		kwPos      int
	}
	var clauses []clause
	for i := 1; i < len(toks); i++ {
		t := toks[i]
		if t.depth != 0 || t.kind != tkWord {
			if t.depth != 0 && (t.is("SELECT")) {
				return nil, syntaxErr(t.pos, "subqueries are not supported")
			}
			continue
		}
		name := ""
		body := t.end
		switch {
		case t.is("FROM"), t.is("WHERE"), t.is("HAVING"), t.is("LIMIT"), t.is("OFFSET"):
			name = strings.ToUpper(t.text)
		case t.is("GROUP"), t.is("ORDER"):
			if !toks[i+1].is("BY") {
				return nil, syntaxErr(toks[i+1].pos, "expected BY after %s", strings.ToUpper(t.text))
			}
			name = strings.ToUpper(t.text) + " BY"
			body = toks[i+1].end
			i++
		case t.is("JOIN"), t.is("INNER"), t.is("LEFT"), t.is("RIGHT"), t.is("FULL"), t.is("CROSS"), t.is("NATURAL"):
			return nil, syntaxErr(t.pos, "joins are not supported: a materialized view reads one source table")
		case t.is("UNION"), t.is("INTERSECT"), t.is("EXCEPT"):
			return nil, syntaxErr(t.pos, "set operations (%s) are not supported", strings.ToUpper(t.text))
		case t.is("WITH"), t.is("WINDOW"), t.is("QUALIFY"):
			return nil, syntaxErr(t.pos, "%s is not supported", strings.ToUpper(t.text))
		default:
			continue
		}
		if len(clauses) > 0 {
			clauses[len(clauses)-1].end = t.pos
		}
		clauses = append(clauses, clause{name: name, start: body, kwPos: t.pos})
	}
	if len(clauses) == 0 || clauses[0].name != "FROM" {
		return nil, syntaxErr(len(src), "expected FROM and the source table")
	}
	clauses[len(clauses)-1].end = len(src)
	order := []string{"FROM", "WHERE", "GROUP BY", "HAVING", "ORDER BY", "LIMIT", "OFFSET"}
	last := -1
	for _, c := range clauses {
		k := indexOf(order, c.name)
		if k <= last {
			return nil, syntaxErr(c.kwPos, "%s is out of place", c.name)
		}
		last = k
	}
	padded := func(start, end int) string { return strings.Repeat(" ", start) + text[start:end] }
	items, err := expr.ParseSelect(padded(toks[1].pos, clauses[0].kwPos))
	if err != nil {
		return nil, exprErr(err)
	}
	for _, it := range items {
		q.Items = append(q.Items, Item{Expr: it.Expr, Alias: it.Alias})
	}
	for _, c := range clauses {
		body := strings.TrimSpace(text[c.start:c.end])
		if body == "" {
			return nil, syntaxErr(c.end, "%s needs a body", c.name)
		}
		switch c.name {
		case "FROM":
			if q.From, err = parseFrom(toks, c.start, c.end); err != nil {
				return nil, err
			}
			q.FromPos = c.start
		case "WHERE", "HAVING":
			e, err := expr.Parse(padded(c.start, c.end))
			if err != nil {
				return nil, exprErr(err)
			}
			if c.name == "WHERE" {
				q.Where = e
			} else {
				q.Having = e
			}
		case "GROUP BY":
			gs, err := expr.ParseSelect(padded(c.start, c.end))
			if err != nil {
				return nil, exprErr(err)
			}
			for _, g := range gs {
				if g.Alias != "" {
					return nil, syntaxErr(g.Expr.Pos(), "unexpected alias %q in GROUP BY", g.Alias)
				}
				q.GroupBy = append(q.GroupBy, g.Expr)
			}
		case "ORDER BY":
			if q.OrderBy, err = parseOrder(toks, text, c.start, c.end); err != nil {
				return nil, err
			}
		case "LIMIT", "OFFSET":
			n, err := strconv.ParseInt(body, 10, 64)
			if err != nil || n < 0 {
				return nil, syntaxErr(c.start+strings.Index(text[c.start:c.end], body), "%s takes a non-negative integer", c.name)
			}
			if c.name == "LIMIT" {
				q.Limit = &n
			} else {
				q.Offset = n
			}
		}
	}
	return q, nil
}

func indexOf(xs []string, x string) int {
	for i, v := range xs {
		if v == x {
			return i
		}
	}
	return -1
}

// parseFrom reads `name[.name…] [[AS] alias]` from the tokens in [start, end).
func parseFrom(toks []tok, start, end int) ([]string, error) {
	var in []tok
	for _, t := range toks {
		if t.pos >= start && t.end <= end && t.kind != tkEOF {
			in = append(in, t)
		}
	}
	var id []string
	i := 0
	for {
		if i >= len(in) {
			return nil, syntaxErr(end, "expected a table name")
		}
		t := in[i]
		switch t.kind {
		case tkWord:
			id = append(id, t.text)
		case tkQuoted:
			q := t.text[0]
			id = append(id, strings.ReplaceAll(t.text[1:len(t.text)-1], string([]byte{q, q}), string(q)))
		case tkPunct:
			if t.text == "(" {
				return nil, syntaxErr(t.pos, "subqueries are not supported")
			}
			return nil, syntaxErr(t.pos, "expected a table name, found %q", t.text)
		default:
			return nil, syntaxErr(t.pos, "expected a table name, found %q", t.text)
		}
		i++
		if i < len(in) && in[i].kind == tkPunct && in[i].text == "." {
			i++
			continue
		}
		break
	}
	if i < len(in) && in[i].is("AS") {
		i++
	}
	if i < len(in) && (in[i].kind == tkWord || in[i].kind == tkQuoted) {
		i++ // an alias: columns are not qualified by it (one source table)
	}
	if i < len(in) {
		t := in[i]
		if t.kind == tkPunct && t.text == "," {
			return nil, syntaxErr(t.pos, "joins are not supported: a materialized view reads one source table")
		}
		return nil, syntaxErr(t.pos, "unexpected %q after the table name", t.text)
	}
	return id, nil
}

// parseOrder reads ORDER BY keys from [start, end): comma-separated at depth 0, each an
// expression then optional ASC|DESC and NULLS FIRST|LAST.
func parseOrder(toks []tok, text string, start, end int) ([]OrderKey, error) {
	var keys []OrderKey
	var cur []tok
	flush := func(at int) error {
		if len(cur) == 0 {
			return syntaxErr(at, "expected an ORDER BY key")
		}
		k := OrderKey{}
		nullsSet := false
		n := len(cur)
		if n >= 2 && cur[n-2].is("NULLS") && (cur[n-1].is("FIRST") || cur[n-1].is("LAST")) {
			k.NullsFirst, nullsSet = cur[n-1].is("FIRST"), true
			n -= 2
		}
		if n >= 1 && (cur[n-1].is("ASC") || cur[n-1].is("DESC")) {
			k.Descending = cur[n-1].is("DESC")
			n--
		}
		if n == 0 {
			return syntaxErr(cur[0].pos, "expected an ORDER BY key")
		}
		if !nullsSet {
			k.NullsFirst = k.Descending // Lance's and DataFusion's default: NULLS LAST ascending
		}
		s, e := cur[0].pos, cur[n-1].end
		x, err := expr.Parse(strings.Repeat(" ", s) + text[s:e])
		if err != nil {
			return exprErr(err)
		}
		k.Expr = x
		keys = append(keys, k)
		cur = nil
		return nil
	}
	base := -1
	for _, t := range toks {
		if t.pos < start || t.end > end || t.kind == tkEOF {
			continue
		}
		if base < 0 {
			base = t.depth
		}
		if t.kind == tkPunct && t.text == "," && t.depth == base {
			if err := flush(t.pos); err != nil {
				return nil, err
			}
			continue
		}
		cur = append(cur, t)
	}
	if err := flush(end); err != nil {
		return nil, err
	}
	return keys, nil
}
