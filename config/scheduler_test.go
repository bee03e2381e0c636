package config

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestScheduler: DeerFlow's defaults, the values as set, each value out
// of DeerFlow's range named by its key, and multi_instance refused
// without a shared database.
func TestScheduler(t *testing.T) {
	t.Run("defaults", func(t *testing.T) {
		c := mustParse(t, "models: []\n", anyEnv)
		want := Scheduler{PollIntervalSeconds: 5, LeaseSeconds: 120, MaxConcurrentRuns: 3, MinOnceDelaySeconds: 60}
		if diff := cmp.Diff(want, c.Scheduler); diff != "" {
			t.Errorf("scheduler (-want +got):\n%s", diff)
		}
	})
	t.Run("as set", func(t *testing.T) {
		src := "database: {backend: postgres, postgres_url: postgres://x/y}\n" +
			"scheduler: {enabled: true, multi_instance: true, poll_interval_seconds: 1, lease_seconds: 5, max_concurrent_runs: 32, min_once_delay_seconds: 86400}\n"
		c := mustParse(t, src, anyEnv)
		want := Scheduler{Enabled: true, MultiInstance: true, PollIntervalSeconds: 1, LeaseSeconds: 5, MaxConcurrentRuns: 32, MinOnceDelaySeconds: 86400}
		if diff := cmp.Diff(want, c.Scheduler); diff != "" {
			t.Errorf("scheduler (-want +got):\n%s", diff)
		}
		if len(c.Ignored) != 0 {
			t.Errorf("Ignored = %v, want none", c.Ignored)
		}
	})
	for _, tc := range []struct{ name, src, want string }{
		{"poll interval zero", "scheduler: {poll_interval_seconds: 0}\n", "scheduler.poll_interval_seconds: must be between 1 and 300, got 0"},
		{"lease too short", "scheduler: {lease_seconds: 4}\n", "scheduler.lease_seconds: must be between 5 and 3600, got 4"},
		{"too many runs", "scheduler: {max_concurrent_runs: 33}\n", "scheduler.max_concurrent_runs: must be between 1 and 32, got 33"},
		{"once delay too long", "scheduler: {min_once_delay_seconds: 86401}\n", "scheduler.min_once_delay_seconds: must be between 1 and 86400"},
		{"multi instance on sqlite", "scheduler: {multi_instance: true}\n", `scheduler.multi_instance: requires database.backend: postgres`},
		{"unknown key", "scheduler: {interval: 3}\n", "scheduler.interval"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse("config.yaml", []byte(tc.src), anyEnv)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error = %v, want one containing %q", err, tc.want)
			}
		})
	}
}
