package postgres_test

import (
	"testing"

	"go.uber.org/goleak"

	"github.com/antlerhq/antler/store"
	"github.com/antlerhq/antler/store/postgres"
	"github.com/antlerhq/antler/store/postgres/pgtest"
)

// Close of Leases, Events and the store ends every goroutine they
// started (heartbeat, sweeper, listener, cleaner, pools).
func TestCloseLeavesNoGoroutines(t *testing.T) {
	url, schema := pgtest.Schema(t)
	ignore := goleak.IgnoreCurrent()
	s, err := postgres.Open(t.Context(), url, postgres.Options{Schema: schema})
	if err != nil {
		t.Fatal(err)
	}
	l := postgres.NewLeases(s, postgres.LeaseOptions{})
	e, err := postgres.NewEvents(s, postgres.EventsOptions{})
	if err != nil {
		t.Fatal(err)
	}
	ctx := t.Context()
	if err := s.CreateThread(ctx, &store.Thread{ID: "t", UserID: "u"}); err != nil {
		t.Fatal(err)
	}
	release, err := l.Acquire(ctx, "t", "r")
	if err != nil {
		t.Fatal(err)
	}
	release()
	_, stop := e.Watch("r")
	stop()
	e.Close()
	l.Close()
	s.Close()
	goleak.VerifyNone(t, ignore)
}
