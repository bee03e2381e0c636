package agent_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"testing/synctest"

	"github.com/google/go-cmp/cmp"

	"github.com/antlerhq/antler/agent"
	"github.com/antlerhq/antler/model"
	"github.com/antlerhq/antler/store"
)

// journalStore is an in-memory store of one thread that records every
// write, as "<method> <status>"; the methods a run does not use are
// left to the nil embedded interface.
type journalStore struct {
	store.Store
	mu      sync.Mutex
	thread  *store.Thread
	run     *store.Run
	writes  []string
	putHook func(ctx context.Context, cp *store.Checkpoint) error
}

func (s *journalStore) log(format string, args ...any) {
	s.writes = append(s.writes, fmt.Sprintf(format, args...))
}

func (s *journalStore) GetThread(_ context.Context, id string) (*store.Thread, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.thread == nil || s.thread.ID != id {
		return nil, store.ErrNotFound
	}
	th := *s.thread
	return &th, nil
}

func (s *journalStore) CreateThread(_ context.Context, t *store.Thread) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.log("CreateThread %s", t.Status)
	th := *t
	s.thread = &th
	return nil
}

func (s *journalStore) UpdateThread(ctx context.Context, t *store.Thread) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := ctx.Err(); err != nil {
		return err
	}
	s.log("UpdateThread %s", t.Status)
	th := *t
	s.thread = &th
	return nil
}

func (s *journalStore) LatestCheckpoint(context.Context, string) (*store.Checkpoint, error) {
	return nil, store.ErrNotFound
}

func (s *journalStore) CreateRun(_ context.Context, r *store.Run) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.log("CreateRun %s", r.Status)
	run := *r
	s.run = &run
	return nil
}

func (s *journalStore) UpdateRun(ctx context.Context, _ string, u store.RunUpdate) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := ctx.Err(); err != nil {
		return err
	}
	s.log("UpdateRun %s", u.Status)
	s.run.Status, s.run.Error = u.Status, u.Error
	return nil
}

func (s *journalStore) PutCheckpoint(ctx context.Context, cp *store.Checkpoint) error {
	if s.putHook != nil {
		if err := s.putHook(ctx, cp); err != nil {
			return err
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.log("PutCheckpoint %v", cp.Metadata["source"])
	cp.ID = fmt.Sprint("cp", len(s.writes))
	return nil
}

// TestLoad_recordsTheRunBeforeTheThreadIsBusy: a thread is marked busy
// only once its run is recorded as running, so that a crash between the
// two never leaves a busy thread without a run to recover.
func TestLoad_recordsTheRunBeforeTheThreadIsBusy(t *testing.T) {
	for _, existing := range []bool{false, true} {
		t.Run(fmt.Sprintf("existing thread %v", existing), func(t *testing.T) {
			s := &journalStore{}
			if existing {
				s.thread = &store.Thread{ID: "t", UserID: "u", Status: store.ThreadIdle}
			}
			a := newAgent(t, agent.Options{Model: &fakeModel{steps: []step{answer("hi")}}, Store: s})
			if _, err := collect(t, t.Context(), a, agent.Input{ThreadID: "t", UserID: "u",
				Messages: []model.Message{model.UserText("hello")}}); err != nil {
				t.Fatal(err)
			}
			want := []string{"CreateRun running", "UpdateThread busy", "PutCheckpoint input", "PutCheckpoint loop",
				"UpdateRun success", "UpdateThread idle"}
			if !existing {
				want = append([]string{"CreateThread idle"}, want...)
			}
			if diff := cmp.Diff(want, s.writes); diff != "" {
				t.Errorf("writes (-want +got):\n%s", diff)
			}
		})
	}
}

// TestFinish_recordsOutcomeAfterASlowStateSave: saving a failed run's
// state may use its whole write timeout (a database that does not
// answer); the run's outcome and the thread's status are still written,
// each with a context of its own. (Fake time: the timeout passes at
// once.)
func TestFinish_recordsOutcomeAfterASlowStateSave(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := &journalStore{putHook: func(ctx context.Context, cp *store.Checkpoint) error {
			if cp.Metadata["source"] == "interrupted" {
				<-ctx.Done()
				return ctx.Err()
			}
			return nil
		}}
		failing := func(*model.Request) ([]model.Event, error) { return nil, errors.New("model down") }
		a := newAgent(t, agent.Options{Model: &fakeModel{steps: []step{failing}}, Store: s})
		_, err := collect(t, t.Context(), a, agent.Input{ThreadID: "t", UserID: "u",
			Messages: []model.Message{model.UserText("hello")}})
		if err == nil {
			t.Fatal("the run did not fail")
		}
		if s.run == nil || s.run.Status != store.RunError || s.run.Error == "" {
			t.Errorf("recorded run = %+v, want status error with the failure", s.run)
		}
		if s.thread.Status != store.ThreadError {
			t.Errorf("thread status = %q, want error", s.thread.Status)
		}
	})
}
