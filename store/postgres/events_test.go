package postgres_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/antlerhq/antler/store"
	"github.com/antlerhq/antler/store/postgres"
)

func newEvents(t *testing.T, s *postgres.Store, o postgres.EventsOptions) *postgres.Events {
	t.Helper()
	e, err := postgres.NewEvents(s, o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Close() })
	return e
}

// TestEventsFollowAcrossReplicas: frames appended on A wake a watcher on
// B through LISTEN/NOTIFY, and B reads them in order.
func TestEventsFollowAcrossReplicas(t *testing.T) {
	a, b := twoReplicas(t)
	ctx := t.Context()
	if err := a.CreateThread(ctx, &store.Thread{ID: "t", UserID: "u"}); err != nil {
		t.Fatal(err)
	}
	ea := newEvents(t, a, postgres.EventsOptions{})
	eb := newEvents(t, b, postgres.EventsOptions{})
	wake, stop := eb.Watch("r1")
	defer stop()
	time.Sleep(100 * time.Millisecond) // the listener connects
	drain(wake)

	const total = 50
	go func() {
		for i := 1; i <= total; i += 5 {
			var batch [][]byte
			for j := range 5 {
				batch = append(batch, fmt.Appendf(nil, "frame %d", i+j))
			}
			if err := ea.Append(ctx, "t", "r1", i, batch); err != nil {
				t.Error(err)
				return
			}
		}
	}()
	var got []string
	next := 0
	for len(got) < total {
		select {
		case <-wake:
		case <-time.After(5 * time.Second):
			t.Fatalf("no wake-up after %d frames", len(got))
		}
		frames, err := eb.Read(ctx, "r1", next, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range frames {
			if f.Seq != next+1 {
				t.Fatalf("frame seq %d after %d", f.Seq, next)
			}
			next = f.Seq
			got = append(got, string(f.Data))
		}
	}
	var want []string
	for i := 1; i <= total; i++ {
		want = append(want, fmt.Sprint("frame ", i))
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("frames (-want +got):\n%s", diff)
	}
	// An append repeated (a retry) keeps the first copy.
	if err := ea.Append(ctx, "t", "r1", 1, [][]byte{[]byte("again")}); err != nil {
		t.Fatal(err)
	}
	first, err := eb.Read(ctx, "r1", 0, 1)
	if err != nil || len(first) != 1 || string(first[0].Data) != "frame 1" {
		t.Errorf("first frame after a repeated append = %v %v", first, err)
	}
}

func TestEventsCancelReachesEveryReplica(t *testing.T) {
	a, b := twoReplicas(t)
	got := make(chan string, 1)
	newEvents(t, a, postgres.EventsOptions{OnCancel: func(id string) { got <- id }})
	eb := newEvents(t, b, postgres.EventsOptions{})
	time.Sleep(100 * time.Millisecond)
	if err := eb.RequestCancel(t.Context(), "run-7"); err != nil {
		t.Fatal(err)
	}
	select {
	case id := <-got:
		if id != "run-7" {
			t.Errorf("cancel for %q", id)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("cancel request not delivered")
	}
}

func TestEventsCleanKeepsActiveRuns(t *testing.T) {
	s := open(t)
	ctx := t.Context()
	if err := s.CreateThread(ctx, &store.Thread{ID: "t", UserID: "u"}); err != nil {
		t.Fatal(err)
	}
	for _, r := range []store.Run{{ID: "live", Status: store.RunRunning}, {ID: "done", Status: store.RunSuccess}} {
		r.ThreadID = "t"
		if err := s.CreateRun(ctx, &r); err != nil {
			t.Fatal(err)
		}
	}
	e := newEvents(t, s, postgres.EventsOptions{Retention: time.Millisecond})
	for _, id := range []string{"live", "done", "orphan"} {
		if err := e.Append(ctx, "t", id, 1, [][]byte{[]byte("x")}); err != nil {
			t.Fatal(err)
		}
	}
	time.Sleep(20 * time.Millisecond)
	n, err := e.Clean(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if n != 2 {
		t.Errorf("cleaned %d frames, want 2 (ended and orphan runs)", n)
	}
	if fs, _ := e.Read(ctx, "live", 0, 0); len(fs) != 1 {
		t.Errorf("frames of the running run were cleaned")
	}
}

func drain(ch <-chan struct{}) {
	for {
		select {
		case <-ch:
		default:
			return
		}
	}
}
