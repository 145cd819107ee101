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
	"fmt"
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

func (e *Literal) String() string {
	switch e.Kind {
	case LitNull:
		return "NULL"
	case LitString:
		return "'" + strings.ReplaceAll(e.Text, "'", "''") + "'"
	case LitDate:
		return "DATE '" + e.Text + "'"
	case LitTimestamp:
		return "TIMESTAMP '" + e.Text + "'"
	case LitDecimal:
		return "DECIMAL '" + e.Text + "'"
	}
	return e.Text
}

func (e *Column) String() string {
	parts := make([]string, len(e.Path))
	for i, p := range e.Path {
		parts[i] = "`" + strings.ReplaceAll(p, "`", "``") + "`"
	}
	return strings.Join(parts, ".")
}

func (e *Unary) String() string {
	if e.Op == "NOT" {
		return "(NOT " + e.X.String() + ")"
	}
	return "(" + e.Op + e.X.String() + ")"
}

func (e *Binary) String() string {
	return "(" + e.L.String() + " " + e.Op + " " + e.R.String() + ")"
}

func (e *Is) String() string {
	not := ""
	if e.Not {
		not = "NOT "
	}
	return "(" + e.X.String() + " IS " + not + e.What + ")"
}

func (e *InList) String() string {
	items := make([]string, len(e.List))
	for i, x := range e.List {
		items[i] = x.String()
	}
	not := ""
	if e.Not {
		not = " NOT"
	}
	return "(" + e.X.String() + not + " IN (" + strings.Join(items, ", ") + "))"
}

func (e *Between) String() string {
	not := ""
	if e.Not {
		not = " NOT"
	}
	return "(" + e.X.String() + not + " BETWEEN " + e.Lo.String() + " AND " + e.Hi.String() + ")"
}

func (e *Like) String() string {
	op := " LIKE "
	if e.CaseFold {
		op = " ILIKE "
	}
	if e.Not {
		op = " NOT" + op
	}
	s := "(" + e.X.String() + op + e.Pattern.String()
	if e.Escape != "" {
		s += " ESCAPE '" + strings.ReplaceAll(e.Escape, "'", "''") + "'"
	}
	return s + ")"
}

func (e *Cast) String() string {
	fn := "CAST"
	if e.Try {
		fn = "TRY_CAST"
	}
	return fn + "(" + e.X.String() + " AS " + e.TypeName + ")"
}

func (e *Case) String() string {
	var b strings.Builder
	b.WriteString("CASE")
	if e.Operand != nil {
		b.WriteString(" " + e.Operand.String())
	}
	for _, w := range e.Whens {
		fmt.Fprintf(&b, " WHEN %s THEN %s", w.Cond, w.Then)
	}
	if e.Else != nil {
		b.WriteString(" ELSE " + e.Else.String())
	}
	b.WriteString(" END")
	return b.String()
}

func (e *Call) String() string {
	items := make([]string, len(e.Args))
	for i, x := range e.Args {
		items[i] = x.String()
	}
	return e.Name + "(" + strings.Join(items, ", ") + ")"
}
