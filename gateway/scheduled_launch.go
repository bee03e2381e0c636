package gateway

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"sync/atomic"

	"github.com/antlerhq/antler/model"
	"github.com/antlerhq/antler/scheduler"
	"github.com/antlerhq/antler/store"
)

// scheduledTasks is what the scheduled-task routes serve from: the
// store and the dispatcher (AttachScheduler).
type scheduledTasks struct {
	tasks store.ScheduledTasks
	d     *scheduler.Dispatcher
}

// schedulerSlot holds the attached scheduled tasks; nil until
// AttachScheduler, when the routes answer 503 as DeerFlow's do without
// its repositories.
type schedulerSlot = atomic.Pointer[scheduledTasks]

var _ scheduler.Launcher = (*Server)(nil)

// AttachScheduler serves the /api/scheduled-tasks routes from tasks and
// d, whose Launcher is this server. Call it before serving. The caller
// owns d: it starts it (when the scheduler section is enabled) and closes
// it after the server's Close, which ends the runs d watches.
func (s *Server) AttachScheduler(tasks store.ScheduledTasks, d *scheduler.Dispatcher) {
	s.scheduled.Store(&scheduledTasks{tasks: tasks, d: d})
}

// LaunchScheduled implements scheduler.Launcher: it starts a run of the
// task's prompt as the task's owner on r.ThreadID (created when missing),
// non-interactive, through the same path as POST .../runs/stream, without
// a client attached. A thread with an active run is scheduler.ErrConflict;
// a gateway shutting down (or without its run locks) is
// scheduler.ErrUnavailable.
func (s *Server) LaunchScheduled(ctx context.Context, r scheduler.LaunchRequest) (*scheduler.Launched, error) {
	u := s.principalFor(r.UserID)
	th, status := s.threadForRun(ctx, u, r.ThreadID, "", true)
	if status != 0 {
		return nil, fmt.Errorf("thread %s: %s", r.ThreadID, http.StatusText(status))
	}
	rc := map[string]any{"non_interactive": true}
	msgs := []model.Message{{Role: model.RoleUser, Content: r.Prompt}}
	rn, status, err := s.startRun(ctx, u, th, rc, modeValues, msgs)
	if err != nil {
		if status == http.StatusConflict {
			return nil, errors.Join(scheduler.ErrConflict, err)
		}
		if status == http.StatusServiceUnavailable {
			return nil, errors.Join(scheduler.ErrUnavailable, err)
		}
		return nil, err
	}
	return &scheduler.Launched{RunID: rn.id, ThreadID: th.ID, Done: rn.finished}, nil
}

// principalFor is the principal a scheduled run of userID runs as: the
// token entry of that user (its role), the default user without tokens,
// else a user of the default role.
func (s *Server) principalFor(userID string) *principal {
	if userID == s.defUser.ID && len(s.tokens) == 0 {
		return s.defUser
	}
	var found *principal
	for _, p := range s.tokens {
		// Several tokens may name one user: a non-admin one wins, then
		// the first role by name, so that the choice is stable.
		if p.ID == userID && (found == nil || found.Admin && !p.Admin || found.Admin == p.Admin && p.Role < found.Role) {
			found = p
		}
	}
	if found != nil {
		return found
	}
	return &principal{ID: userID, Role: s.authz.DefaultRole()}
}
