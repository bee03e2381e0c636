package tool

import (
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// fakeClock is a clock the test moves by hand.
type fakeClock struct{ t time.Time }

func (c *fakeClock) now() time.Time { return c.t }

func TestThrottleProgress(t *testing.T) {
	type step struct {
		advance time.Duration
		p       Progress
	}
	for _, c := range []struct {
		name  string
		steps []step
		want  []string // messages passed, with their percentage
	}{
		{name: "reports that say something new all pass",
			steps: []step{{0, Progress{Progress: 1, Total: 3, Message: "a"}}, {0, Progress{Progress: 2, Total: 3, Message: "a"}}, {0, Progress{Progress: 3, Total: 3, Message: "b"}}},
			want:  []string{"a 33", "a 67", "b 100"}},
		{name: "a repeat within the interval is dropped",
			steps: []step{{0, Progress{Progress: 10, Total: 1000, Message: "x"}}, {100 * time.Millisecond, Progress{Progress: 11, Total: 1000, Message: "x"}},
				{ProgressMinInterval, Progress{Progress: 12, Total: 1000, Message: "x"}}},
			want: []string{"x 1", "x 1"}},
		{name: "reports without a total compare by message",
			steps: []step{{0, Progress{Progress: 1, Message: "m"}}, {0, Progress{Progress: 2, Message: "m"}}, {0, Progress{Progress: 3, Message: "n"}}},
			want:  []string{"m -1", "n -1"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			clock := &fakeClock{t: time.Unix(1000, 0)}
			var got []string
			emit := throttleProgress(func(event string, data any) {
				p := data.(Progress)
				pct, ok := p.Percent()
				if !ok {
					pct = -1
				}
				got = append(got, p.Message+" "+strconv.Itoa(pct))
			}, clock.now)
			for _, s := range c.steps {
				clock.t = clock.t.Add(s.advance)
				emit(ProgressEvent, s.p)
			}
			if diff := cmp.Diff(c.want, got); diff != "" {
				t.Errorf("passed (-want +got):\n%s", diff)
			}
		})
	}
}

func TestThrottleProgress_boundsCountAndMessage(t *testing.T) {
	clock := &fakeClock{t: time.Unix(1000, 0)}
	var got []Progress
	var other int
	emit := throttleProgress(func(event string, data any) {
		if event != ProgressEvent {
			other++
			return
		}
		got = append(got, data.(Progress))
	}, clock.now)
	for i := range MaxProgressEvents + 50 {
		clock.t = clock.t.Add(time.Millisecond)
		emit(ProgressEvent, Progress{Progress: float64(i), Message: "step " + strconv.Itoa(i) + strings.Repeat("é", 400)})
	}
	emit("task_running", map[string]any{})
	if len(got) != MaxProgressEvents || other != 1 {
		t.Fatalf("%d reports and %d other events passed, want %d and 1", len(got), other, MaxProgressEvents)
	}
	if m := got[0].Message; len(m) > 500+len("…") || !strings.HasSuffix(m, "…") || !strings.HasPrefix(m, "step 0") {
		t.Errorf("message of %d bytes not cut to 500: %.40q", len(m), m)
	}
	if got[0].ElapsedMS != 1 || got[9].ElapsedMS != 10 {
		t.Errorf("elapsed %d, %d ms, want 1 and 10", got[0].ElapsedMS, got[9].ElapsedMS)
	}
}

func TestCallReportProgress_namesTheTool(t *testing.T) {
	var got any
	c := &Call{Name: "big_job", Emit: func(event string, data any) { got = data }}
	c.ReportProgress(Progress{Progress: 1})
	if p, ok := got.(Progress); !ok || p.Name != "big_job" {
		t.Errorf("emitted %#v", got)
	}
	(&Call{}).ReportProgress(Progress{}) // no sink: nothing happens
}
