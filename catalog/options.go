package catalog

// The options of the creating, destroying and moving operations, as parameters of the call
// (apache/iceberg-go's option parameters), not values hidden in its context: what a call may do
// is in its signature, a decorator cannot lose it by building a new context, and a client of a
// remote catalog sends what it was given.
//
// A catalog reads the options it has a rule for and ignores the others: the directory namespace
// keeps no protection and no trash, so it reads none; the governed catalog (catalog/governed)
// reads Force and Purge; a client of a remote catalog (catalogtest.HTTP) sends them as the
// doors' query parameters (force=true, purge=true).

// Option is an optional parameter of CreateNamespace, DropNamespace, CreateTable, RegisterTable,
// DropTable, DeregisterTable, RenameTable and CommitTableVersions.
type Option func(*Options)

// Options are the options of one call, resolved (Resolve).
type Options struct {
	// Force overrides protection: a protected object may be dropped, deregistered, renamed or
	// replaced by an overwriting create (or register), and a batch may deregister it.
	Force bool
	// Purge makes a drop destroy its objects even when the trash would keep them (a grace
	// period is configured).
	Purge bool
}

// WithForce overrides protection (Options.Force).
func WithForce() Option { return func(o *Options) { o.Force = true } }

// WithPurge makes a drop destroy rather than file in the trash (Options.Purge).
func WithPurge() Option { return func(o *Options) { o.Purge = true } }

// Resolve applies opts in order (a nil one is skipped) to the zero Options.
func Resolve(opts ...Option) Options {
	var o Options
	for _, opt := range opts {
		if opt != nil {
			opt(&o)
		}
	}
	return o
}
