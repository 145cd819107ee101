package expr

// VisitColumns calls fn for every column reference in e, depth first, left to right. The
// planners use it to read only the columns an expression needs (query's scans, dml's writes).
func VisitColumns(e Expr, fn func(*Column)) {
	switch e := e.(type) {
	case nil:
	case *Column:
		fn(e)
	case *Unary:
		VisitColumns(e.X, fn)
	case *Binary:
		VisitColumns(e.L, fn)
		VisitColumns(e.R, fn)
	case *Is:
		VisitColumns(e.X, fn)
	case *InList:
		VisitColumns(e.X, fn)
		for _, x := range e.List {
			VisitColumns(x, fn)
		}
	case *Between:
		VisitColumns(e.X, fn)
		VisitColumns(e.Lo, fn)
		VisitColumns(e.Hi, fn)
	case *Like:
		VisitColumns(e.X, fn)
		VisitColumns(e.Pattern, fn)
	case *Cast:
		VisitColumns(e.X, fn)
	case *Case:
		VisitColumns(e.Operand, fn)
		for _, w := range e.Whens {
			VisitColumns(w.Cond, fn)
			VisitColumns(w.Then, fn)
		}
		VisitColumns(e.Else, fn)
	case *Call:
		for _, x := range e.Args {
			VisitColumns(x, fn)
		}
	}
}
