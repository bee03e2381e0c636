package cli

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/antlerhq/antler/store"
	"github.com/antlerhq/antler/store/postgres"
)

// runLeases give `run` and `chat` on the Postgres backend what a gateway
// replica has: every run holds its thread's run lease while it runs and
// is recorded as this process's own (postgres.Store.CreateRunOwned), so
// that the lease sweep of any replica fails it if this process dies
// mid-run. No run is ever left running without a live lease. On SQLite
// the store itself owns its runs per process (store/sqlite recovers
// them at its next open), and sessionStore returns no leases.
type runLeases struct {
	leases *postgres.Leases
}

// ownedStore records runs as owned by the lease holder.
type ownedStore struct {
	*postgres.Store
	owner string
}

// CreateRun records r as this process's run.
func (s ownedStore) CreateRun(ctx context.Context, r *store.Run) error {
	return s.Store.CreateRunOwned(ctx, r, s.owner)
}

// sessionStore opens the app's store for a session of runs; on Postgres
// it returns the store wrapped to own its runs and the leases to hold
// (closed with the app), else the store and nil.
func (a *app) sessionStore() (store.Store, *runLeases, error) {
	st, err := a.openStore()
	if err != nil {
		return nil, nil, err
	}
	pg, ok := st.(*postgres.Store)
	if !ok {
		return st, nil, nil
	}
	leases := postgres.NewLeases(pg, postgres.LeaseOptions{
		TTL:    time.Duration(a.cfg.Database.RunLeaseSeconds) * time.Second,
		Logger: a.logger,
	})
	a.onClose(leases.Close) // before the store closes
	return ownedStore{Store: pg, owner: leases.Owner()}, &runLeases{leases: leases}, nil
}

// hold creates the thread if it is new (a lease names an existing thread)
// and takes its run lease for runID; release gives it back. A thread
// leased by a run elsewhere (a gateway replica, another CLI) is refused.
func (l *runLeases) hold(ctx context.Context, st store.Store, threadID, userID, agentName, runID string) (release func(), err error) {
	if l == nil {
		return func() {}, nil
	}
	err = st.CreateThread(ctx, &store.Thread{ID: threadID, UserID: userID, AgentName: agentName, Status: store.ThreadIdle})
	if err != nil && !errors.Is(err, store.ErrExists) {
		return nil, err
	}
	release, err = l.leases.Acquire(ctx, threadID, runID)
	if errors.Is(err, postgres.ErrLeaseHeld) {
		return nil, fmt.Errorf("thread %s already has an active run; wait for it or cancel it", threadID)
	}
	return release, err
}
