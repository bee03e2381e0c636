package scheduler

import (
	"strings"
	"testing"
	"time"
)

func mustTime(t *testing.T, s string) time.Time {
	t.Helper()
	v, err := time.Parse(time.RFC3339, s)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func TestNextRun(t *testing.T) {
	now := "2026-03-07T12:00:00Z" // a Saturday
	for _, tc := range []struct {
		name, typ, tz string
		spec          map[string]any
		now           string
		want          string // "" means no next firing
	}{
		{"cron every minute", TypeCron, "UTC", map[string]any{"cron": "* * * * *"}, now, "2026-03-07T12:01:00Z"},
		{"cron strictly after now", TypeCron, "UTC", map[string]any{"cron": "0 12 * * *"}, now, "2026-03-08T12:00:00Z"},
		{"cron in the task's timezone", TypeCron, "Asia/Shanghai", map[string]any{"cron": "0 9 * * *"}, now, "2026-03-08T01:00:00Z"},
		{"cron extra spaces normalised", TypeCron, "UTC", map[string]any{"cron": "  30   8 * *  1 "}, now, "2026-03-09T08:30:00Z"},
		{"cron across the DST change", TypeCron, "America/New_York", map[string]any{"cron": "0 9 * * *"}, "2026-03-08T15:00:00Z", "2026-03-09T13:00:00Z"},
		{"cron before the DST change", TypeCron, "America/New_York", map[string]any{"cron": "0 9 * * *"}, now, "2026-03-07T14:00:00Z"},
		{"cron that never matches", TypeCron, "UTC", map[string]any{"cron": "0 0 30 2 *"}, now, ""},
		{"once with offset", TypeOnce, "UTC", map[string]any{"run_at": "2026-03-07T15:00:00+02:00"}, now, "2026-03-07T13:00:00Z"},
		{"once with Z", TypeOnce, "UTC", map[string]any{"run_at": "2026-03-07T13:00:00Z"}, now, "2026-03-07T13:00:00Z"},
		{"once naive is wall clock in the timezone", TypeOnce, "Asia/Shanghai", map[string]any{"run_at": "2026-03-07T22:30:00"}, now, "2026-03-07T14:30:00Z"},
		{"once with a space and fraction", TypeOnce, "UTC", map[string]any{"run_at": "2026-03-07 13:00:00.5"}, now, "2026-03-07T13:00:00.5Z"},
		{"once without seconds", TypeOnce, "UTC", map[string]any{"run_at": "2026-03-07T13:00"}, now, "2026-03-07T13:00:00Z"},
		{"once date only", TypeOnce, "UTC", map[string]any{"run_at": "2026-03-08"}, now, "2026-03-08T00:00:00Z"},
		{"once in the past", TypeOnce, "UTC", map[string]any{"run_at": "2026-03-07T11:00:00Z"}, now, ""},
		{"once exactly now is past", TypeOnce, "UTC", map[string]any{"run_at": now}, now, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			next, ok, err := NextRun(tc.typ, tc.spec, tc.tz, mustTime(t, tc.now))
			if err != nil {
				t.Fatal(err)
			}
			if tc.want == "" {
				if ok {
					t.Fatalf("next = %v, want none", next)
				}
				return
			}
			want, err := time.Parse(time.RFC3339Nano, tc.want)
			if err != nil {
				t.Fatal(err)
			}
			if !ok || !next.Equal(want) || next.Location() != time.UTC {
				t.Fatalf("next = %v (ok %v), want %v in UTC", next, ok, want)
			}
		})
	}
}

func TestParse_errors(t *testing.T) {
	for _, tc := range []struct {
		name, typ, tz string
		spec          map[string]any
		want          string
	}{
		{"unknown type", "interval", "UTC", map[string]any{}, "Unsupported schedule_type: interval"},
		{"unknown timezone", TypeCron, "Mars/Base", map[string]any{"cron": "* * * * *"}, "Unknown timezone: Mars/Base"},
		{"empty timezone", TypeCron, "", map[string]any{"cron": "* * * * *"}, "Unknown timezone"},
		{"Local timezone", TypeCron, "Local", map[string]any{"cron": "* * * * *"}, "Unknown timezone"},
		{"cron missing", TypeCron, "UTC", map[string]any{}, "cron schedule requires schedule_spec.cron"},
		{"cron not a string", TypeCron, "UTC", map[string]any{"cron": 5.0}, "requires schedule_spec.cron"},
		{"cron four fields", TypeCron, "UTC", map[string]any{"cron": "* * * *"}, "exactly 5 fields"},
		{"cron six fields", TypeCron, "UTC", map[string]any{"cron": "0 * * * * *"}, "exactly 5 fields"},
		{"cron descriptor", TypeCron, "UTC", map[string]any{"cron": "@daily"}, "exactly 5 fields"},
		{"cron zone prefix", TypeCron, "UTC", map[string]any{"cron": "CRON_TZ=UTC * * * *"}, "Invalid cron expression"},
		{"cron out of range", TypeCron, "UTC", map[string]any{"cron": "61 * * * *"}, "Invalid cron expression"},
		{"cron garbage", TypeCron, "UTC", map[string]any{"cron": "a b c d e"}, "Invalid cron expression"},
		{"once missing", TypeOnce, "UTC", map[string]any{}, "once schedule requires run_at"},
		{"once not a string", TypeOnce, "UTC", map[string]any{"run_at": 12.0}, "once schedule requires run_at"},
		{"once garbage", TypeOnce, "UTC", map[string]any{"run_at": "tomorrow"}, "Invalid isoformat string"},
		{"once too long", TypeOnce, "UTC", map[string]any{"run_at": strings.Repeat("1", 300)}, "longer than"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse(tc.typ, tc.spec, tc.tz)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want it to contain %q", err, tc.want)
			}
		})
	}
}

// FuzzParse: no input panics, and a schedule that parses has a next
// firing strictly after now (or none).
func FuzzParse(f *testing.F) {
	for _, s := range []string{"* * * * *", "0 9 * * 1-5", "*/15 0-6 1,15 * SUN", "0 0 30 2 *", "@daily", "2026-03-07T13:00:00Z", "2026-03-07 13:00", "61 * * * *"} {
		f.Add(s, "UTC")
	}
	f.Add("0 2 * * *", "America/New_York")
	f.Fuzz(func(t *testing.T, text, tz string) {
		now := time.Date(2026, 3, 7, 12, 0, 0, 0, time.UTC)
		for _, typ := range []string{TypeCron, TypeOnce} {
			key := "cron"
			if typ == TypeOnce {
				key = "run_at"
			}
			s, err := Parse(typ, map[string]any{key: text}, tz)
			if err != nil {
				continue
			}
			if next, ok := s.Next(now); ok && !next.After(now) {
				t.Fatalf("%s %q in %q: next %v is not after %v", typ, text, tz, next, now)
			}
		}
	})
}
