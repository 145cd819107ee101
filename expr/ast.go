// Package expr is the expression engine of Lance's filter and projection dialect: the SQL expressions
// the official LanceDB clients send in `filter`/`where`, `columns` projections, `update` values, merge
// conditions and new-column expressions. Lance parses them with DataFusion's SQL parser and resolves
// them against the table schema; this package does the same in three steps:
//
//	Parse (text → AST with byte positions) → Bind (AST + Arrow schema → typed plan) → Eval/Filter
//
// Evaluation is column-at-a-time over an arrow.Record, with arrow-go's compute kernels where one exists
// (comparison of non-float types, arithmetic, boolean Kleene logic, casts, abs, round, null tests,
// filter, take, concatenate). Where arrow-go has no kernel (LIKE, string functions, list functions,
// float comparison in Lance's total order, modulo, date_part) a small typed loop runs over the
// column's buffers; each such place says so.
//
// Errors (syntax, unknown column, type mismatch, division by zero) are *Error values wrapped in an
// nserr error of code InvalidInput (13, HTTP 400); errors.As(err, **Error) gives the position and
// the column.
package expr

import (
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
)

// Expr is a parsed expression. Pos is the byte offset of the node in the source text.
type Expr interface {
	Pos() int
	String() string
}

// LitKind says which kind of literal a Literal is.
type LitKind int

const (
	LitNull LitKind = iota
	LitBool
	LitInt
	LitFloat
	LitString
	LitDate      // date '2024-01-01'
	LitTimestamp // timestamp '2024-01-01 10:00:00'
	LitDecimal   // decimal '1.25' (or a CAST to DECIMAL folded at bind time)
)

// Literal is a constant; Text is its source spelling (the unquoted string for strings).
type Literal struct {
	P    int
	Kind LitKind
	Text string
}

// Column is a column reference; Path has more than one element for nested fields (a.b).
type Column struct {
	P    int
	Path []string
}

// Unary is NOT x, -x or +x.
type Unary struct {
	P  int
	Op string
	X  Expr
}

// Binary is a binary operator: AND OR = != < <= > >= + - * / % ||.
type Binary struct {
	P    int
	Op   string
	L, R Expr
}

// Is is x IS [NOT] NULL|TRUE|FALSE.
type Is struct {
	P    int
	X    Expr
	Not  bool
	What string // "NULL", "TRUE", "FALSE"
}

// InList is x [NOT] IN (list).
type InList struct {
	P    int
	X    Expr
	List []Expr
	Not  bool
}

// Between is x [NOT] BETWEEN lo AND hi.
type Between struct {
	P         int
	X, Lo, Hi Expr
	Not       bool
}

// Like is x [NOT] LIKE|ILIKE pattern [ESCAPE 'c'].
type Like struct {
	P        int
	X        Expr
	Pattern  Expr
	Escape   string
	Not      bool
	CaseFold bool
}

// Cast is CAST(x AS type), TRY_CAST(x AS type) or x::type.
type Cast struct {
	P        int
	X        Expr
	Type     arrow.DataType
	TypeName string
	Try      bool
}

// When is one WHEN … THEN … arm of a Case.
type When struct {
	Cond, Then Expr
}

// Case is CASE [operand] WHEN … THEN … [ELSE …] END.
type Case struct {
	P       int
	Operand Expr
	Whens   []When
	Else    Expr
}

// Call is a function call; Name is lower case.
type Call struct {
	P    int
	Name string
	Args []Expr
}

func (e *Literal) Pos() int { return e.P }
func (e *Column) Pos() int  { return e.P }
func (e *Unary) Pos() int   { return e.P }
func (e *Binary) Pos() int  { return e.P }
func (e *Is) Pos() int      { return e.P }
func (e *InList) Pos() int  { return e.P }
func (e *Between) Pos() int { return e.P }
func (e *Like) Pos() int    { return e.P }
func (e *Cast) Pos() int    { return e.P }
func (e *Case) Pos() int    { return e.P }
func (e *Call) Pos() int    { return e.P }

// String prints the expression in a canonical form (fully parenthesised) that parses back to the
// same tree. Every node writes into one builder: a String per node, each concatenating its
// children's, copied a left-deep chain's text once per level (`a + b + … ` of 60,000 terms took
// 37 s to print).
func (e *Literal) String() string { return format(e) }
func (e *Column) String() string  { return format(e) }
func (e *Unary) String() string   { return format(e) }
func (e *Binary) String() string  { return format(e) }
func (e *Is) String() string      { return format(e) }
func (e *InList) String() string  { return format(e) }
func (e *Between) String() string { return format(e) }
func (e *Like) String() string    { return format(e) }
func (e *Cast) String() string    { return format(e) }
func (e *Case) String() string    { return format(e) }
func (e *Call) String() string    { return format(e) }
func format(e Expr) string {
	var b strings.Builder
	write(&b, e)
	return b.String()
}

// write appends e's canonical text to b.
func write(b *strings.Builder, e Expr) {
	switch e := e.(type) {
	case *Literal:
		switch e.Kind {
		case LitNull:
			b.WriteString("NULL")
		case LitString:
			b.WriteString("'" + strings.ReplaceAll(e.Text, "'", "''") + "'")
		case LitDate:
			b.WriteString("DATE '" + e.Text + "'")
		case LitTimestamp:
			b.WriteString("TIMESTAMP '" + e.Text + "'")
		case LitDecimal:
			b.WriteString("DECIMAL '" + e.Text + "'")
		default:
			b.WriteString(e.Text)
		}
	case *Column:
		for i, p := range e.Path {
			if i > 0 {
				b.WriteByte('.')
			}
			b.WriteString("`" + strings.ReplaceAll(p, "`", "``") + "`")
		}
	case *Unary:
		b.WriteByte('(')
		if e.Op == "NOT" {
			b.WriteString("NOT ")
		} else {
			b.WriteString(e.Op)
		}
		write(b, e.X)
		b.WriteByte(')')
	case *Binary:
		// A left-deep chain in a loop, not a recursion as deep as it (see binder.chain).
		var spine []*Binary
		var cur Expr = e
		for bn, ok := cur.(*Binary); ok; bn, ok = cur.(*Binary) {
			spine = append(spine, bn)
			cur = bn.L
		}
		for range spine {
			b.WriteByte('(')
		}
		write(b, cur)
		for i := len(spine) - 1; i >= 0; i-- {
			b.WriteString(" " + spine[i].Op + " ")
			write(b, spine[i].R)
			b.WriteByte(')')
		}
	case *Is:
		b.WriteByte('(')
		write(b, e.X)
		b.WriteString(" IS ")
		if e.Not {
			b.WriteString("NOT ")
		}
		b.WriteString(e.What + ")")
	case *InList:
		b.WriteByte('(')
		write(b, e.X)
		if e.Not {
			b.WriteString(" NOT")
		}
		b.WriteString(" IN (")
		for i, x := range e.List {
			if i > 0 {
				b.WriteString(", ")
			}
			write(b, x)
		}
		b.WriteString("))")
	case *Between:
		b.WriteByte('(')
		write(b, e.X)
		if e.Not {
			b.WriteString(" NOT")
		}
		b.WriteString(" BETWEEN ")
		write(b, e.Lo)
		b.WriteString(" AND ")
		write(b, e.Hi)
		b.WriteByte(')')
	case *Like:
		b.WriteByte('(')
		write(b, e.X)
		if e.Not {
			b.WriteString(" NOT")
		}
		if e.CaseFold {
			b.WriteString(" ILIKE ")
		} else {
			b.WriteString(" LIKE ")
		}
		write(b, e.Pattern)
		if e.Escape != "" {
			b.WriteString(" ESCAPE '" + strings.ReplaceAll(e.Escape, "'", "''") + "'")
		}
		b.WriteByte(')')
	case *Cast:
		if e.Try {
			b.WriteString("TRY_CAST(")
		} else {
			b.WriteString("CAST(")
		}
		write(b, e.X)
		b.WriteString(" AS " + e.TypeName + ")")
	case *Case:
		b.WriteString("CASE")
		if e.Operand != nil {
			b.WriteByte(' ')
			write(b, e.Operand)
		}
		for _, w := range e.Whens {
			b.WriteString(" WHEN ")
			write(b, w.Cond)
			b.WriteString(" THEN ")
			write(b, w.Then)
		}
		if e.Else != nil {
			b.WriteString(" ELSE ")
			write(b, e.Else)
		}
		b.WriteString(" END")
	case *Call:
		b.WriteString(e.Name + "(")
		for i, x := range e.Args {
			if i > 0 {
				b.WriteString(", ")
			}
			write(b, x)
		}
		b.WriteByte(')')
	case nil:
	default:
		b.WriteString(e.String()) // a node of another package
	}
}
