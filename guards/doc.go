// Package guards holds the checks every door runs before it writes, in the documented order:
// identity → shape → parent exists → authorization → conflict. Shape checks (safe id segments,
// depth, warehouse scope), protection and live-trash checks live here; guards never write anything.
//
// Id segment safety is in package ident today; the hierarchy guards arrive with governance (issue 6).
package guards
