package faults

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"time"
)

// CampaignConfig bounds a campaign.
type CampaignConfig struct {
	Dir      string
	Repo     string // the repository root (to build lancecat and find scripts/tools.sh)
	OpenFGA  string
	Duration time.Duration
	Workers  int
	MaxOps   int
	Faults   bool   // inject faults (the mutant run may go without)
	Tags     string // build tags of the lancecat binary ("lancecat_faults_mutant" for the mutant)
	Seed     uint64
	Logf     func(format string, args ...any)
}

// Report is a campaign's outcome.
type Report struct {
	Ops       []Op
	Faults    []Fault
	Anomalies []Anomaly
	TimedOut  bool // porcupine gave up on some object (reported, not an anomaly)
	Rows      int
	Events    int  // events read back from the journal
	Journaled bool // the catalog keeps a shared journal (so CheckJournal ran)
	// Inversions: the data table's events the journal holds after a later version's (across
	// replicas; see CheckJournal).
	Inversions []string
}

// Summary is the campaign's last line.
func (r Report) Summary() string {
	return fmt.Sprintf("faults: %d operations, %d faults, %d anomalies", len(r.Ops), len(r.Faults), len(r.Anomalies))
}

// Build builds lancecat from repo with tags into dir.
func Build(ctx context.Context, repo, dir, tags string) (string, error) {
	bin := filepath.Join(dir, "lancecat")
	args := []string{"build", "-o", bin}
	if tags != "" {
		args = append(args, "-tags", tags)
	}
	cmd := exec.CommandContext(ctx, "go", append(args, "./cmd/lancecat")...)
	cmd.Dir = repo
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("go build: %w: %s", err, out)
	}
	return bin, nil
}

// MinIOBinary is the cached MinIO of scripts/tools.sh.
func MinIOBinary(ctx context.Context, repo string) (string, error) {
	cmd := exec.CommandContext(ctx, filepath.Join(repo, "scripts", "tools.sh"), "minio")
	return output(cmd, "tools.sh minio")
}

// RunCampaign starts the cluster, runs the workload under the nemesis for cfg.Duration, heals
// everything, reads the data back and checks the history.
func RunCampaign(ctx context.Context, cfg CampaignConfig) (Report, error) {
	var rep Report
	bin, err := Build(ctx, cfg.Repo, cfg.Dir, cfg.Tags)
	if err != nil {
		return rep, err
	}
	mbin, err := MinIOBinary(ctx, cfg.Repo)
	if err != nil {
		return rep, err
	}
	c, err := StartCluster(ctx, Config{Dir: cfg.Dir, Lancecat: bin, MinIO: mbin, OpenFGA: cfg.OpenFGA,
		Replicas: 3, StoreName: fmt.Sprintf("faults-%d-%d", os.Getpid(), time.Now().UnixNano())})
	if err != nil {
		return rep, err
	}
	defer c.Close()
	start := time.Now()
	h := NewHistory(start, cfg.MaxOps)
	w, err := NewWorkers(c, h)
	if err != nil {
		return rep, err
	}
	if err := w.Setup(ctx); err != nil {
		return rep, err
	}
	runCtx, cancel := context.WithTimeout(ctx, cfg.Duration)
	defer cancel()
	n := NewNemesis(c, start, cfg.Seed)
	n.Logf = cfg.Logf
	nemDone := make(chan struct{})
	go func() {
		defer close(nemDone)
		if cfg.Faults {
			n.Run(runCtx, cfg.Duration/2)
		}
	}()
	w.Run(runCtx, cfg.Workers, cfg.Seed)
	cancel()
	<-nemDone
	// Heal: every toxic off, every replica up.
	for _, r := range c.Replicas {
		heal(r.S3, r.FGA)
		if err := r.WaitReady(ctx, 5*time.Second); err != nil {
			_ = r.Start()
			if err := r.WaitReady(ctx, time.Minute); err != nil {
				return rep, fmt.Errorf("replica %s did not come back: %w", r.Name, err)
			}
		}
	}
	rep.Ops, rep.Faults = h.Ops(), n.Faults()
	final, err := w.ReadData(ctx)
	if err != nil {
		return rep, fmt.Errorf("reading the data table back: %w", err)
	}
	rep.Rows = len(final)
	// The journal's flushers retry with backoff; give them a moment after the heal.
	time.Sleep(3 * time.Second)
	events, journaled, err := w.Journal(ctx)
	if err != nil {
		return rep, fmt.Errorf("reading the journal: %w", err)
	}
	rep.Events = len(events)
	rep.Journaled = journaled
	lin, timedOut := CheckLinearizable(rep.Ops, time.Minute)
	rep.TimedOut = timedOut
	rep.Anomalies = append(append(lin, CheckData(rep.Ops, final)...), CheckAuthz(rep.Ops, AllowCacheTTL)...)
	if journaled {
		anomalies, inversions := CheckJournal(rep.Ops, events, rep.Faults)
		rep.Anomalies = append(rep.Anomalies, anomalies...)
		rep.Inversions = inversions
	}
	return rep, nil
}
