package gateway

import (
	"context"
	"errors"
	"sync"
)

// ErrThreadBusy is returned by RunLocks.Acquire when another run holds
// the thread.
var ErrThreadBusy = errors.New("thread has an active run")

// RunLocks grants at most one active run per thread. The gateway holds a
// thread's lock from the start of a run until its last checkpoint is
// written. An in-process map suffices for one gateway; replicas sharing a
// Postgres store need a shared lease (an advisory lock or a lease row
// with an expiry) behind the same interface.
type RunLocks interface {
	// Acquire claims threadID for runID and returns the function that
	// releases it (safe to call more than once), or ErrThreadBusy.
	Acquire(ctx context.Context, threadID, runID string) (release func(), err error)
}

// localRunLocks is the in-process RunLocks. It is safe for concurrent use.
type localRunLocks struct {
	mu   sync.Mutex
	held map[string]string // guarded by mu: thread id → run id
}

// newLocalRunLocks returns an empty localRunLocks.
func newLocalRunLocks() *localRunLocks { return &localRunLocks{held: map[string]string{}} }

// Acquire implements RunLocks.
func (l *localRunLocks) Acquire(_ context.Context, threadID, runID string) (func(), error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if _, busy := l.held[threadID]; busy {
		return nil, ErrThreadBusy
	}
	l.held[threadID] = runID
	var once sync.Once
	return func() {
		once.Do(func() {
			l.mu.Lock()
			if l.held[threadID] == runID {
				delete(l.held, threadID)
			}
			l.mu.Unlock()
		})
	}, nil
}
