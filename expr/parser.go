package expr

import (
	"strconv"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
)

// The cost of one expression is bounded here, in the parser every door goes through (filters,
// projections, count_rows, update, delete, merge conditions, new columns, views): what parses can
// be bound and evaluated in time linear in its size, and the size is capped.
//
// A term is a node of the tree: an operand (column, literal, call, CASE, …) or an operator. A
// literal in an IN list is a value, not a term: the binder makes `x IN (v1, …, vn)` one hash
// lookup per row (a set built once), so a list of many values costs per row what a list of one
// does; only MaxBytes bounds them. (A list the binder cannot make a set, such as one on a float
// column, counts its values as terms there.)
const (
	// MaxBytes is the longest expression text: 1 MiB, room for `id IN (…)` of 100,000 ids.
	MaxBytes = 1 << 20
	// MaxTerms is the most terms one expression (or one projection list) may have: a generated
	// OR of 5,000 equalities (`id = 1 OR id = 2 OR …`) is 15,000. Every batch evaluates each
	// term once, so this bounds the work per row.
	MaxTerms = 20_000
	// MaxDepth is the deepest nesting (parentheses, NOT, unary minus, CASE, calls): each level is
	// a recursion of the parser and of every walk over the tree.
	MaxDepth = 200
)

// limitf is the error for an expression over a limit: InvalidInput (400, code 13), naming the
// limit and what the expression measured.
func limitf(pos int, format string, args ...any) error { return errorf(pos, "", format, args...) }

// Binding powers, as in sqlparser (DataFusion's parser): OR < AND < NOT < IS < comparison, LIKE, IN,
// BETWEEN < + - || < * / % < unary minus, ::.
const (
	precOr      = 5
	precAnd     = 10
	precNot     = 15
	precIs      = 17
	precCompare = 20
	precAdd     = 30
	precMul     = 40
	precUnary   = 50
)

type parser struct {
	lex   *lexer
	la    []token // the tokens read ahead (at most two)
	err   error   // the lexer's error: the parse ends there (an EOF token stands for the rest)
	depth int
	terms int // the tree's nodes so far, but for the literal values of IN lists
	size  int // the text's length
}

// newParser lexes s for a parser, refusing a text longer than MaxBytes before reading it.
func newParser(s string) (*parser, error) {
	if len(s) > MaxBytes {
		return nil, limitf(-1, "the expression is %d bytes long, more than the %d allowed", len(s), MaxBytes)
	}
	return &parser{lex: &lexer{src: s}, la: make([]token, 0, 2), size: len(s)}, nil
}

// term counts one node of the tree, failing once there are more than MaxTerms.
func (p *parser) term(pos int) error {
	p.terms++
	if p.terms > MaxTerms {
		return limitf(pos, "the expression has more than %d terms (operands and operators; it is %d bytes long): the limit is reached", MaxTerms, p.size)
	}
	return nil
}

// Parse parses one expression (a filter, a projected value, an update value).
func Parse(s string) (Expr, error) {
	p, err := newParser(s)
	if err != nil {
		return nil, err
	}
	e, err := p.whole()
	if err = p.done(err); err != nil {
		return nil, err
	}
	return e, nil
}

func (p *parser) whole() (Expr, error) {
	if p.peek().kind == tEOF {
		return nil, errorf(0, "", "empty expression")
	}
	e, err := p.expr(0)
	if err != nil {
		return nil, err
	}
	if t := p.peek(); t.kind != tEOF {
		return nil, errorf(t.pos, "", "unexpected %s after the expression", describe(t))
	}
	return e, nil
}

// SelectItem is one item of a projection list: an expression and its output name.
type SelectItem struct {
	Expr  Expr
	Alias string // empty: the expression's own name (a column's name, else its text)
}

// Name is the output column name of the item.
func (s SelectItem) Name() string {
	if s.Alias != "" {
		return s.Alias
	}
	if c, ok := s.Expr.(*Column); ok {
		return c.Path[len(c.Path)-1]
	}
	return s.Expr.String()
}

// ParseSelect parses a projection list: `expr [[AS] alias], …`.
func ParseSelect(s string) ([]SelectItem, error) {
	p, err := newParser(s)
	if err != nil {
		return nil, err
	}
	items, err := p.selectList()
	if err = p.done(err); err != nil {
		return nil, err
	}
	return items, nil
}

func (p *parser) selectList() ([]SelectItem, error) {
	var items []SelectItem
	for {
		if p.peek().kind == tEOF {
			return nil, errorf(p.peek().pos, "", "expected an expression")
		}
		e, err := p.expr(0)
		if err != nil {
			return nil, err
		}
		item := SelectItem{Expr: e}
		if p.keyword("AS") {
			p.next()
		}
		if t := p.peek(); t.kind == tQuotedIdent || t.kind == tIdent && !isReserved(t.text) {
			item.Alias = t.text
			p.next()
		}
		items = append(items, item)
		t := p.next()
		if t.kind == tEOF {
			return items, nil
		}
		if !(t.kind == tOp && t.text == ",") {
			return nil, errorf(t.pos, "", "unexpected %s in the projection list", describe(t))
		}
	}
}

func describe(t token) string {
	switch t.kind {
	case tEOF:
		return "end of input"
	case tString:
		return "string '" + t.text + "'"
	}
	return strconv.Quote(t.text)
}

var reserved = map[string]bool{
	"AND": true, "OR": true, "NOT": true, "IN": true, "IS": true, "NULL": true, "TRUE": true, "FALSE": true,
	"BETWEEN": true, "LIKE": true, "ILIKE": true, "CASE": true, "WHEN": true, "THEN": true, "ELSE": true,
	"END": true, "CAST": true, "AS": true, "ESCAPE": true, "FROM": true,
}

func isReserved(s string) bool { return reserved[strings.ToUpper(s)] }

// fill reads ahead until k+1 tokens are waiting (or the text ended).
func (p *parser) fill(k int) {
	for len(p.la) <= k {
		if n := len(p.la); n > 0 && p.la[n-1].kind == tEOF {
			return
		}
		t, err := p.lex.next()
		if err != nil {
			p.err = err
			t = token{tEOF, "", p.size}
		}
		p.la = append(p.la, t)
	}
}

func (p *parser) peek() token { return p.peekAt(0) }
func (p *parser) peekAt(k int) token {
	p.fill(k)
	if k < len(p.la) {
		return p.la[k]
	}
	return p.la[len(p.la)-1]
}
func (p *parser) next() token {
	t := p.peek()
	if t.kind != tEOF {
		p.la = append(p.la[:0], p.la[1:]...)
	}
	return t
}

// done is the parse's outcome: the lexer's error first (whatever the parser made of the EOF
// that stood for it), else err.
func (p *parser) done(err error) error {
	if p.err != nil {
		return p.err
	}
	return err
}

func (p *parser) keyword(kw string) bool {
	t := p.peek()
	return t.kind == tIdent && strings.EqualFold(t.text, kw)
}

func (p *parser) keywordAt(k int, kw string) bool {
	t := p.peekAt(k)
	return t.kind == tIdent && strings.EqualFold(t.text, kw)
}

func (p *parser) op(o string) bool {
	t := p.peek()
	return t.kind == tOp && t.text == o
}

func (p *parser) expect(o string) error {
	t := p.next()
	if t.kind == tOp && t.text == o {
		return nil
	}
	return errorf(t.pos, "", "expected %q, found %s", o, describe(t))
}

func (p *parser) expectKeyword(kw string) error {
	t := p.next()
	if t.kind == tIdent && strings.EqualFold(t.text, kw) {
		return nil
	}
	return errorf(t.pos, "", "expected %s, found %s", kw, describe(t))
}

func (p *parser) expr(prec int) (Expr, error) {
	p.depth++
	defer func() { p.depth-- }()
	if p.depth > MaxDepth {
		return nil, limitf(p.peek().pos, "the expression is nested more than %d levels deep", MaxDepth)
	}
	left, err := p.prefix()
	if err != nil {
		return nil, err
	}
	for {
		next := p.infixPrec()
		if next <= prec {
			return left, nil
		}
		left, err = p.infix(left, next)
		if err != nil {
			return nil, err
		}
	}
}

// infixPrec is the binding power of the token after an operand (0: it ends the expression).
func (p *parser) infixPrec() int {
	t := p.peek()
	switch t.kind {
	case tOp:
		switch t.text {
		case "=", "==", "!=", "<>", "<", "<=", ">", ">=":
			return precCompare
		case "+", "-", "||":
			return precAdd
		case "*", "/", "%":
			return precMul
		case "::":
			return precUnary
		}
	case tIdent:
		switch strings.ToUpper(t.text) {
		case "OR":
			return precOr
		case "AND":
			return precAnd
		case "IS":
			return precIs
		case "IN", "LIKE", "ILIKE", "BETWEEN":
			return precCompare
		case "NOT":
			if p.keywordAt(1, "IN") || p.keywordAt(1, "LIKE") || p.keywordAt(1, "ILIKE") || p.keywordAt(1, "BETWEEN") {
				return precCompare
			}
		}
	}
	return 0
}

func (p *parser) infix(left Expr, prec int) (Expr, error) {
	t := p.next()
	if err := p.term(t.pos); err != nil {
		return nil, err
	}
	if t.kind == tOp {
		if t.text == "::" {
			typ, name, err := p.typeName()
			if err != nil {
				return nil, err
			}
			return &Cast{P: t.pos, X: left, Type: typ, TypeName: name}, nil
		}
		op := t.text
		switch op {
		case "==":
			op = "="
		case "<>":
			op = "!="
		}
		right, err := p.expr(prec)
		if err != nil {
			return nil, err
		}
		return &Binary{P: t.pos, Op: op, L: left, R: right}, nil
	}
	kw := strings.ToUpper(t.text)
	switch kw {
	case "OR", "AND":
		right, err := p.expr(prec)
		if err != nil {
			return nil, err
		}
		return &Binary{P: t.pos, Op: kw, L: left, R: right}, nil
	case "IS":
		not := false
		if p.keyword("NOT") {
			p.next()
			not = true
		}
		w := p.next()
		what := strings.ToUpper(w.text)
		if w.kind != tIdent || what != "NULL" && what != "TRUE" && what != "FALSE" {
			return nil, errorf(w.pos, "", "expected NULL, TRUE or FALSE after IS, found %s", describe(w))
		}
		return &Is{P: t.pos, X: left, Not: not, What: what}, nil
	}
	not := false
	if kw == "NOT" {
		not = true
		t = p.next()
		kw = strings.ToUpper(t.text)
	}
	switch kw {
	case "IN":
		if err := p.expect("("); err != nil {
			return nil, err
		}
		var list []Expr
		for {
			before := p.terms
			e, err := p.expr(0)
			if err != nil {
				return nil, err
			}
			if _, ok := e.(*Literal); ok {
				p.terms = before // a value of the list (see MaxTerms)
			}
			list = append(list, e)
			if p.op(",") {
				p.next()
				continue
			}
			if err := p.expect(")"); err != nil {
				return nil, err
			}
			break
		}
		return &InList{P: t.pos, X: left, List: list, Not: not}, nil
	case "BETWEEN":
		// The bounds bind tighter than AND, so `x BETWEEN 1 AND 2 AND y` groups as expected.
		lo, err := p.expr(precCompare)
		if err != nil {
			return nil, err
		}
		if err := p.expectKeyword("AND"); err != nil {
			return nil, err
		}
		hi, err := p.expr(precCompare)
		if err != nil {
			return nil, err
		}
		return &Between{P: t.pos, X: left, Lo: lo, Hi: hi, Not: not}, nil
	case "LIKE", "ILIKE":
		pat, err := p.expr(precCompare)
		if err != nil {
			return nil, err
		}
		l := &Like{P: t.pos, X: left, Pattern: pat, Not: not, CaseFold: kw == "ILIKE"}
		if p.keyword("ESCAPE") {
			p.next()
			e := p.next()
			if e.kind != tString {
				return nil, errorf(e.pos, "", "expected a string after ESCAPE, found %s", describe(e))
			}
			l.Escape = e.text
		}
		return l, nil
	}
	return nil, errorf(t.pos, "", "unexpected %s", describe(t))
}

func (p *parser) prefix() (Expr, error) {
	t := p.next()
	if !(t.kind == tOp && t.text == "(") {
		if err := p.term(t.pos); err != nil {
			return nil, err
		}
	}
	switch t.kind {
	case tEOF:
		return nil, errorf(t.pos, "", "unexpected end of input")
	case tString:
		return &Literal{P: t.pos, Kind: LitString, Text: t.text}, nil
	case tInt:
		return &Literal{P: t.pos, Kind: LitInt, Text: t.text}, nil
	case tFloat:
		return &Literal{P: t.pos, Kind: LitFloat, Text: t.text}, nil
	case tQuotedIdent:
		return p.columnPath(t)
	case tOp:
		switch t.text {
		case "(":
			e, err := p.expr(0)
			if err != nil {
				return nil, err
			}
			if err := p.expect(")"); err != nil {
				return nil, err
			}
			return e, nil
		case "[":
			return p.arrayLiteral(t)
		case "-", "+":
			x, err := p.expr(precUnary)
			if err != nil {
				return nil, err
			}
			// A signed number is one literal, so `i = -5` compares with a constant (and
			// -9223372036854775808 fits an int64).
			if l, ok := x.(*Literal); ok && (l.Kind == LitInt || l.Kind == LitFloat) {
				if t.text == "-" {
					if strings.HasPrefix(l.Text, "-") {
						return &Literal{P: t.pos, Kind: l.Kind, Text: l.Text[1:]}, nil
					}
					return &Literal{P: t.pos, Kind: l.Kind, Text: "-" + l.Text}, nil
				}
				return &Literal{P: t.pos, Kind: l.Kind, Text: l.Text}, nil
			}
			return &Unary{P: t.pos, Op: t.text, X: x}, nil
		}
		return nil, errorf(t.pos, "", "unexpected %s", describe(t))
	}
	// identifier or keyword
	switch strings.ToUpper(t.text) {
	case "NULL":
		return &Literal{P: t.pos, Kind: LitNull, Text: "NULL"}, nil
	case "TRUE", "FALSE":
		return &Literal{P: t.pos, Kind: LitBool, Text: strings.ToLower(t.text)}, nil
	case "NOT":
		x, err := p.expr(precNot)
		if err != nil {
			return nil, err
		}
		return &Unary{P: t.pos, Op: "NOT", X: x}, nil
	case "DATE", "TIMESTAMP", "DECIMAL":
		if s := p.peek(); s.kind == tString {
			p.next()
			kind := map[string]LitKind{"DATE": LitDate, "TIMESTAMP": LitTimestamp, "DECIMAL": LitDecimal}[strings.ToUpper(t.text)]
			return &Literal{P: t.pos, Kind: kind, Text: s.text}, nil
		}
	case "CASE":
		return p.caseExpr(t)
	case "CAST", "TRY_CAST":
		if p.op("(") {
			p.next()
			x, err := p.expr(0)
			if err != nil {
				return nil, err
			}
			if err := p.expectKeyword("AS"); err != nil {
				return nil, err
			}
			typ, name, err := p.typeName()
			if err != nil {
				return nil, err
			}
			if err := p.expect(")"); err != nil {
				return nil, err
			}
			return &Cast{P: t.pos, X: x, Type: typ, TypeName: name, Try: strings.EqualFold(t.text, "TRY_CAST")}, nil
		}
	}
	if isReserved(t.text) {
		return nil, errorf(t.pos, "", "unexpected keyword %s", strings.ToUpper(t.text))
	}
	if p.op("(") {
		return p.call(t)
	}
	return p.columnPath(t)
}

func (p *parser) columnPath(first token) (Expr, error) {
	c := &Column{P: first.pos, Path: []string{first.text}}
	for p.op(".") {
		p.next()
		t := p.next()
		if t.kind != tIdent && t.kind != tQuotedIdent {
			return nil, errorf(t.pos, "", "expected a field name after '.', found %s", describe(t))
		}
		c.Path = append(c.Path, t.text)
	}
	return c, nil
}

func (p *parser) call(name token) (Expr, error) {
	p.next() // (
	c := &Call{P: name.pos, Name: strings.ToLower(name.text)}
	if p.op(")") {
		p.next()
		return c, nil
	}
	for {
		e, err := p.expr(0)
		if err != nil {
			return nil, err
		}
		c.Args = append(c.Args, e)
		if p.op(",") {
			p.next()
			continue
		}
		if err := p.expect(")"); err != nil {
			return nil, err
		}
		return c, nil
	}
}

// arrayLiteral parses [a, b, …] (the open bracket taken) as DataFusion does: make_array(a, b, …),
// which is also how it prints.
func (p *parser) arrayLiteral(open token) (Expr, error) {
	c := &Call{P: open.pos, Name: "make_array"}
	if p.op("]") {
		p.next()
		return c, nil
	}
	for {
		e, err := p.expr(0)
		if err != nil {
			return nil, err
		}
		c.Args = append(c.Args, e)
		if p.op(",") {
			p.next()
			continue
		}
		if err := p.expect("]"); err != nil {
			return nil, err
		}
		return c, nil
	}
}

func (p *parser) caseExpr(t token) (Expr, error) {
	c := &Case{P: t.pos}
	if !p.keyword("WHEN") {
		op, err := p.expr(0)
		if err != nil {
			return nil, err
		}
		c.Operand = op
	}
	for p.keyword("WHEN") {
		p.next()
		cond, err := p.expr(0)
		if err != nil {
			return nil, err
		}
		if err := p.expectKeyword("THEN"); err != nil {
			return nil, err
		}
		then, err := p.expr(0)
		if err != nil {
			return nil, err
		}
		c.Whens = append(c.Whens, When{Cond: cond, Then: then})
	}
	if len(c.Whens) == 0 {
		return nil, errorf(p.peek().pos, "", "CASE needs at least one WHEN")
	}
	if p.keyword("ELSE") {
		p.next()
		e, err := p.expr(0)
		if err != nil {
			return nil, err
		}
		c.Else = e
	}
	if err := p.expectKeyword("END"); err != nil {
		return nil, err
	}
	return c, nil
}

// typeName parses a SQL type name as DataFusion maps it to Arrow.
func (p *parser) typeName() (arrow.DataType, string, error) {
	t := p.next()
	if t.kind != tIdent {
		return nil, "", errorf(t.pos, "", "expected a type name, found %s", describe(t))
	}
	name := strings.ToUpper(t.text)
	// Optional (n) or (p, s) arguments.
	var args []int
	if p.op("(") {
		p.next()
		for {
			a := p.next()
			if a.kind != tInt {
				return nil, "", errorf(a.pos, "", "expected a number in the type arguments of %s", name)
			}
			v, err := strconv.Atoi(a.text)
			if err != nil || v > 76 {
				return nil, "", errorf(a.pos, "", "type argument %s out of range", a.text)
			}
			args = append(args, v)
			if p.op(",") {
				p.next()
				continue
			}
			if err := p.expect(")"); err != nil {
				return nil, "", err
			}
			break
		}
	}
	full := name
	if len(args) > 0 {
		parts := make([]string, len(args))
		for i, a := range args {
			parts[i] = strconv.Itoa(a)
		}
		full += "(" + strings.Join(parts, ",") + ")"
	}
	// Lance parses CAST types itself and knows these (an unknown one is an error, e.g. VARCHAR).
	unsigned := false
	if p.keyword("UNSIGNED") {
		p.next()
		unsigned = true
		full += " UNSIGNED"
	}
	switch name {
	case "BOOLEAN":
		return arrow.FixedWidthTypes.Boolean, full, nil
	case "TINYINT":
		return intType(8, !unsigned), full, nil
	case "SMALLINT":
		return intType(16, !unsigned), full, nil
	case "INT", "INTEGER":
		return intType(32, !unsigned), full, nil
	case "BIGINT":
		return intType(64, !unsigned), full, nil
	case "FLOAT":
		return arrow.PrimitiveTypes.Float32, full, nil
	case "DOUBLE":
		return arrow.PrimitiveTypes.Float64, full, nil
	case "STRING":
		return arrow.BinaryTypes.String, full, nil
	case "BINARY":
		return arrow.BinaryTypes.Binary, full, nil
	case "DATE":
		return arrow.FixedWidthTypes.Date32, full, nil
	case "TIMESTAMP", "DATETIME":
		unit := arrow.Microsecond
		if len(args) == 1 {
			switch args[0] {
			case 0:
				unit = arrow.Second
			case 3:
				unit = arrow.Millisecond
			case 6:
				unit = arrow.Microsecond
			case 9:
				unit = arrow.Nanosecond
			default:
				return nil, "", errorf(t.pos, "", "unsupported timestamp precision %d (0, 3, 6 or 9)", args[0])
			}
		}
		return &arrow.TimestampType{Unit: unit}, full, nil
	case "DECIMAL":
		prec, scale := int32(38), int32(10)
		if len(args) >= 1 {
			prec, scale = int32(args[0]), 0
		}
		if len(args) >= 2 {
			scale = int32(args[1])
		}
		if prec < 1 || prec > 38 || scale > prec {
			return nil, "", errorf(t.pos, "", "invalid DECIMAL(%d,%d)", prec, scale)
		}
		return &arrow.Decimal128Type{Precision: prec, Scale: scale}, full, nil
	}
	return nil, "", errorf(t.pos, "", "unsupported type %s", name)
}
