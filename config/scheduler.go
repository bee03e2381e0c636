package config

// Scheduler is the scheduler section: DeerFlow's scheduled tasks, prompts
// run once or on a cron schedule (package scheduler, the
// /api/scheduled-tasks routes). The routes and the manual trigger work
// whether or not the section is enabled; enabled starts the dispatcher
// that fires due tasks. Ranges are DeerFlow's.
type Scheduler struct {
	// Enabled starts the dispatcher with `antler serve` (default false).
	Enabled bool `yaml:"enabled"`
	// MultiInstance declares that several replicas share the database
	// and each runs a dispatcher (default false). It requires
	// database.backend postgres. Antler always claims due tasks with a
	// lease in the database, so the dispatcher is safe either way.
	MultiInstance bool `yaml:"multi_instance"`
	// PollIntervalSeconds is how often the dispatcher looks for due
	// tasks (default 5, 1 to 300).
	PollIntervalSeconds int `yaml:"poll_interval_seconds"`
	// LeaseSeconds is how long a claim reserves a task before its run
	// starts: a dispatcher that dies holding one delays the task by at
	// most this long (default 120, 5 to 3600).
	LeaseSeconds int `yaml:"lease_seconds"`
	// MaxConcurrentRuns bounds the scheduled runs going at once, across
	// every replica sharing the database (default 3, 1 to 32).
	MaxConcurrentRuns int `yaml:"max_concurrent_runs"`
	// MinOnceDelaySeconds is how far in the future a once task must be
	// when it is created or rescheduled (default 60, 1 to 86400).
	MinOnceDelaySeconds int `yaml:"min_once_delay_seconds"`
}

func defaultScheduler() Scheduler {
	return Scheduler{PollIntervalSeconds: 5, LeaseSeconds: 120, MaxConcurrentRuns: 3, MinOnceDelaySeconds: 60}
}

func (p *parser) validateScheduler() {
	s := p.cfg.Scheduler
	for _, r := range []struct {
		key       string
		v, lo, hi int
	}{
		{"poll_interval_seconds", s.PollIntervalSeconds, 1, 300},
		{"lease_seconds", s.LeaseSeconds, 5, 3600},
		{"max_concurrent_runs", s.MaxConcurrentRuns, 1, 32},
		{"min_once_delay_seconds", s.MinOnceDelaySeconds, 1, 86400},
	} {
		if r.v < r.lo || r.v > r.hi {
			p.invalid("scheduler."+r.key, "must be between %d and %d, got %d", r.lo, r.hi, r.v)
		}
	}
	if s.MultiInstance && p.cfg.Database.Backend != "postgres" {
		p.invalid("scheduler.multi_instance", "requires database.backend: postgres (replicas share scheduled tasks through the database), got %q", p.cfg.Database.Backend)
	}
}
