package maintenance

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// Metrics are the maintenance counters, registered by the server on its own registry.
type Metrics struct {
	runs         *prometheus.CounterVec
	duration     prometheus.Histogram
	sweeps       prometheus.Histogram
	bytesRewrite prometheus.Counter
	bytesFreed   prometheus.Counter
	conflicts    prometheus.Counter
}

// NewMetrics returns the counters; Collectors lists them for registration.
func NewMetrics() *Metrics {
	return &Metrics{
		runs: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "lancecat_maintenance_runs_total",
			Help: "Maintenance passes over a table, by outcome (material, idle, failed).",
		}, []string{"outcome"}),
		duration: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name:    "lancecat_maintenance_run_duration_seconds",
			Help:    "Duration of one maintenance pass over a table.",
			Buckets: prometheus.ExponentialBuckets(0.01, 4, 10),
		}),
		sweeps: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name:    "lancecat_maintenance_sweep_duration_seconds",
			Help:    "Duration of one sweep over every table.",
			Buckets: prometheus.ExponentialBuckets(0.01, 4, 10),
		}),
		bytesRewrite: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "lancecat_maintenance_bytes_rewritten_total",
			Help: "Bytes of data files compaction wrote.",
		}),
		bytesFreed: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "lancecat_maintenance_bytes_freed_total",
			Help: "Bytes cleanup removed.",
		}),
		conflicts: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "lancecat_maintenance_lease_conflicts_total",
			Help: "Tables skipped because another replica held their lease.",
		}),
	}
}

// Collectors are the metrics to register.
func (m *Metrics) Collectors() []prometheus.Collector {
	return []prometheus.Collector{m.runs, m.duration, m.sweeps, m.bytesRewrite, m.bytesFreed, m.conflicts}
}

func (m *Metrics) run(rep RunReport, err error, took time.Duration) {
	outcome := "idle"
	switch {
	case err != nil:
		outcome = "failed"
	case rep.Material():
		outcome = "material"
	}
	m.runs.WithLabelValues(outcome).Inc()
	m.duration.Observe(took.Seconds())
	if rep.DryRun {
		return
	}
	m.bytesRewrite.Add(float64(rep.Step(StepCompact).BytesRewritten))
	m.bytesFreed.Add(float64(rep.Step(StepCleanup).BytesRemoved))
}

func (m *Metrics) sweep(took time.Duration) { m.sweeps.Observe(took.Seconds()) }

func (m *Metrics) leaseConflict() { m.conflicts.Inc() }
