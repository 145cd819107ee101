package namespace

// SetIndexPhaseHook makes n's background index builds call hook at each phase they reach (after
// recording it): it may block, and true kills the build there (fault injection: a replica that
// died mid-build). Set it before n builds anything.
func (n *Namespace) SetIndexPhaseHook(hook func(phase string) bool) {
	n.indexBuilds().SetPhaseHook(hook)
}
