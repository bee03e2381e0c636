package agent_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/antlerhq/antler/agent"
	"github.com/antlerhq/antler/model"
	"github.com/antlerhq/antler/store"
	"github.com/antlerhq/antler/store/sqlite"
	"github.com/antlerhq/antler/thread"
)

// keptStore records, for each checkpoint written, how many messages it
// holds and how many the writer promised unchanged since its parent.
type keptStore struct {
	store.Store
	writes [][2]int // {messages, kept}
}

func (s *keptStore) PutCheckpoint(ctx context.Context, cp *store.Checkpoint) error {
	s.writes = append(s.writes, [2]int{len(cp.State.Messages), cp.KeptMessages})
	return s.Store.PutCheckpoint(ctx, cp)
}

func openKept(t *testing.T, history *thread.State) *keptStore {
	t.Helper()
	s, err := sqlite.OpenDir(t.TempDir(), sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	if err := s.CreateThread(t.Context(), &store.Thread{ID: "t", UserID: "u"}); err != nil {
		t.Fatal(err)
	}
	if err := s.PutCheckpoint(t.Context(), &store.Checkpoint{ThreadID: "t", State: history}); err != nil {
		t.Fatal(err)
	}
	return &keptStore{Store: s}
}

// TestLoop_checkpointsKeepTheHistory: a run on a thread of 10 or 1,000
// messages tells the store, at every checkpoint, that all of the
// previous checkpoint's messages are unchanged (KeptMessages), so the
// store encodes only what the step added: the same for both threads.
func TestLoop_checkpointsKeepTheHistory(t *testing.T) {
	for _, n := range []int{10, 1000} {
		t.Run(fmt.Sprint(n), func(t *testing.T) {
			s := openKept(t, historyState(n))
			m := &fakeModel{steps: []step{calls("echo", `{}`), answer("done")}}
			a, err := agent.New(agent.Options{Model: m, Tools: benchTools(1), Store: s})
			if err != nil {
				t.Fatal(err)
			}
			// With an id of its own the input is appended too.
			in := []model.Message{{ID: "input-1", Role: model.RoleUser, Content: "go"}}
			if _, err := a.Invoke(t.Context(), agent.Input{ThreadID: "t", UserID: "u", Messages: in}, nil); err != nil {
				t.Fatal(err)
			}
			// input, the call, its result, the answer: each keeps all
			// of the one before.
			want := [][2]int{{n + 1, n}, {n + 2, n + 1}, {n + 3, n + 2}, {n + 4, n + 3}}
			if diff := cmp.Diff(want, s.writes); diff != "" {
				t.Errorf("checkpoints {messages, kept} (-want +got):\n%s", diff)
			}
		})
	}
}

// TestLoop_rewrittenMessageIsNotKept: an input message with the id of a
// message of the thread replaces it (the reducer); that checkpoint keeps
// nothing, and the store writes the replacement.
func TestLoop_rewrittenMessageIsNotKept(t *testing.T) {
	s := openKept(t, historyState(10))
	m := &fakeModel{steps: []step{answer("done")}}
	a, err := agent.New(agent.Options{Model: m, Store: s})
	if err != nil {
		t.Fatal(err)
	}
	edit := model.Message{ID: "m4", Role: model.RoleUser, Content: "edited"}
	if _, err := a.Invoke(t.Context(), agent.Input{ThreadID: "t", UserID: "u", Messages: []model.Message{edit}}, nil); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([][2]int{{10, 0}, {11, 10}}, s.writes); diff != "" {
		t.Errorf("checkpoints {messages, kept} (-want +got):\n%s", diff)
	}
	cp, err := s.LatestCheckpoint(t.Context(), "t")
	if err != nil {
		t.Fatal(err)
	}
	if got := cp.State.Messages[4]; got.Content != "edited" {
		t.Errorf("message 4 reads %q, want the edit", got.Content)
	}
}
