// Package scheduler runs DeerFlow's scheduled tasks: a prompt run once at
// a given time or on a cron schedule, on a thread of its own or on a new
// thread per run. It parses schedules and computes their next firing
// (schedule.go), and its [Dispatcher] claims due tasks from the store with
// a lease, so that replicas sharing a database never run one firing twice,
// starts their runs through a [Launcher] within the max_concurrent_runs
// budget and records each run's outcome (dispatcher.go).
package scheduler

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/robfig/cron/v3"
)

// Schedule types, DeerFlow's schedule_type values.
const (
	TypeOnce = "once"
	TypeCron = "cron"
)

// Context modes, DeerFlow's context_mode values: a new thread for every
// run, or every run on the task's thread.
const (
	FreshThreadPerRun = "fresh_thread_per_run"
	ReuseThread       = "reuse_thread"
)

// Limits of a schedule's text.
const (
	// MaxTimezoneLen bounds a timezone name (DeerFlow's column is 64).
	MaxTimezoneLen = 64
	// maxSpecText bounds a cron expression or a run_at string.
	maxSpecText = 256
)

// cronParser reads the five standard fields (minute, hour, day of month,
// month, day of week), as DeerFlow's croniter does; descriptors such as
// @daily are refused earlier, by the five-field rule.
var cronParser = cron.NewParser(cron.Minute | cron.Hour | cron.Dom | cron.Month | cron.Dow)

// LoadTimezone returns the IANA location name (DeerFlow's
// validate_timezone). The error says the name is unknown.
func LoadTimezone(name string) (*time.Location, error) {
	// time.LoadLocation reads "" and "UTC" as UTC and "Local" as the
	// host's zone; DeerFlow's ZoneInfo refuses the first and the last.
	if name == "" || name == "Local" || len(name) > MaxTimezoneLen || strings.ContainsAny(name, "\x00\\") {
		return nil, fmt.Errorf("Unknown timezone: %s", name) //lint:ignore ST1005 DeerFlow's detail
	}
	loc, err := time.LoadLocation(name)
	if err != nil {
		return nil, fmt.Errorf("Unknown timezone: %s", name) //lint:ignore ST1005 DeerFlow's detail
	}
	return loc, nil
}

// NormalizeCron checks that expr has exactly five fields and returns them
// joined by single spaces (DeerFlow's normalize_cron_expression), after
// checking that they parse.
func NormalizeCron(expr string) (string, error) {
	if len(expr) > maxSpecText {
		return "", fmt.Errorf("Cron expression is longer than %d bytes", maxSpecText)
	}
	parts := strings.Fields(expr)
	if len(parts) != 5 {
		return "", errors.New("Cron expression must contain exactly 5 fields")
	}
	for _, p := range parts {
		// robfig/cron reads a leading CRON_TZ= or TZ= as a zone; the
		// task's own timezone is the only one.
		if strings.Contains(p, "=") {
			return "", fmt.Errorf("Invalid cron expression: field %q", p) //lint:ignore ST1005 DeerFlow's detail style
		}
	}
	norm := strings.Join(parts, " ")
	if _, err := cronParser.Parse(norm); err != nil {
		return "", fmt.Errorf("Invalid cron expression: %v", err) //lint:ignore ST1005 DeerFlow's detail style
	}
	return norm, nil
}

// ParseRunAt reads a once schedule's run_at as Python's
// datetime.fromisoformat does for the forms a client sends: a date, or a
// date and time ('T' or ' ' between them) with optional seconds,
// fractional seconds and a UTC offset or Z. A time without an offset is
// the wall-clock time in loc.
func ParseRunAt(s string, loc *time.Location) (time.Time, error) {
	if len(s) > maxSpecText {
		return time.Time{}, fmt.Errorf("Invalid isoformat string: longer than %d bytes", maxSpecText) //lint:ignore ST1005 DeerFlow's detail style
	}
	s = strings.TrimSpace(s)
	if len(s) > 10 && s[10] == ' ' {
		s = s[:10] + "T" + s[11:]
	}
	withZone := []string{"2006-01-02T15:04:05.999999999Z07:00", "2006-01-02T15:04Z07:00"}
	for _, layout := range withZone {
		if t, err := time.Parse(layout, s); err == nil {
			return t.UTC(), nil
		}
	}
	naive := []string{"2006-01-02T15:04:05.999999999", "2006-01-02T15:04", "2006-01-02"}
	for _, layout := range naive {
		if t, err := time.ParseInLocation(layout, s, loc); err == nil {
			return t.UTC(), nil
		}
	}
	return time.Time{}, fmt.Errorf("Invalid isoformat string: %q", s) //lint:ignore ST1005 DeerFlow's detail
}

// Spec is a parsed schedule.
type Spec struct {
	Type string
	loc  *time.Location
	// runAt is a once schedule's time (UTC).
	runAt time.Time
	// cron is a cron schedule's expression, normalised.
	cron  string
	sched cron.Schedule
}

// Parse checks a schedule: its type (once or cron), its spec (run_at for
// once, cron for cron) and its timezone. The error is the detail DeerFlow
// answers with 422.
func Parse(scheduleType string, spec map[string]any, timezone string) (*Spec, error) {
	loc, err := LoadTimezone(timezone)
	if err != nil {
		return nil, err
	}
	switch scheduleType {
	case TypeOnce:
		raw, ok := spec["run_at"].(string)
		if !ok {
			return nil, errors.New("once schedule requires run_at")
		}
		at, err := ParseRunAt(raw, loc)
		if err != nil {
			return nil, err
		}
		return &Spec{Type: TypeOnce, loc: loc, runAt: at}, nil
	case TypeCron:
		raw, ok := spec["cron"].(string)
		if !ok {
			return nil, errors.New("cron schedule requires schedule_spec.cron")
		}
		norm, err := NormalizeCron(raw)
		if err != nil {
			return nil, err
		}
		sched, err := cronParser.Parse(norm)
		if err != nil {
			return nil, fmt.Errorf("Invalid cron expression: %v", err) //lint:ignore ST1005 DeerFlow's detail style
		}
		return &Spec{Type: TypeCron, loc: loc, cron: norm, sched: sched}, nil
	}
	return nil, fmt.Errorf("Unsupported schedule_type: %s", scheduleType) //lint:ignore ST1005 DeerFlow's detail
}

// Cron returns a cron schedule's normalised expression ("" for once).
func (s *Spec) Cron() string { return s.cron }

// Next returns the first firing strictly after now, in UTC; ok is false
// when there is none (a once schedule whose time has passed, or a cron
// expression that never matches, such as 30 February).
func (s *Spec) Next(now time.Time) (next time.Time, ok bool) {
	switch s.Type {
	case TypeOnce:
		if s.runAt.After(now) {
			return s.runAt, true
		}
		return time.Time{}, false
	case TypeCron:
		n := s.sched.Next(now.In(s.loc))
		if n.IsZero() {
			return time.Time{}, false
		}
		return n.UTC(), true
	}
	return time.Time{}, false
}

// NextRun parses a schedule and returns its first firing after now (ok
// false: none), DeerFlow's next_run_at.
func NextRun(scheduleType string, spec map[string]any, timezone string, now time.Time) (next time.Time, ok bool, err error) {
	s, err := Parse(scheduleType, spec, timezone)
	if err != nil {
		return time.Time{}, false, err
	}
	next, ok = s.Next(now)
	return next, ok, nil
}
