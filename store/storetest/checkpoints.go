package storetest

import (
	"errors"
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/antlerhq/antler/model"
	"github.com/antlerhq/antler/store"
	"github.com/antlerhq/antler/thread"
)

// Sizes measures what a store keeps of a thread: the bytes of its
// checkpoint rows and message rows, and the number of message rows.
type Sizes func(t *testing.T, s store.Store, threadID string) (bytes int64, messageRows int)

// RunCheckpoints runs the suite of checkpoint storage: branches
// (rewinds), the size of a write and the retention policy. newStore
// returns an empty store with the given retention policy; sizes
// measures it.
func RunCheckpoints(t *testing.T, newStore func(t *testing.T, r store.Retention) store.Store, sizes Sizes) {
	t.Helper()
	t.Run("Branch", func(t *testing.T) { testBranch(t, newStore(t, store.Retention{})) })
	t.Run("WriteSizeDoesNotGrowWithHistory", func(t *testing.T) {
		testWriteSize(t, newStore(t, store.Retention{KeepLatest: -1}), sizes)
	})
	t.Run("Retention", func(t *testing.T) { testRetention(t, newStore(t, store.Retention{KeepLatest: 10}), sizes) })
	t.Run("KeepEverything", func(t *testing.T) { testKeepEverything(t, newStore(t, store.Retention{KeepLatest: -1})) })
}

// chat returns the messages of a thread of n messages, as the loop gives
// them ids.
func chat(from, n int) []model.Message {
	var out []model.Message
	for i := from; i < from+n; i++ {
		role := model.RoleUser
		if i%2 == 1 {
			role = model.RoleAssistant
		}
		out = append(out, model.Message{ID: fmt.Sprintf("m%d", i), Role: role,
			Content: fmt.Sprintf("message %d of the thread, a sentence of about one hundred characters for its size", i)})
	}
	return out
}

// put writes a checkpoint of messages after parent and returns its id.
func put(t *testing.T, s store.Store, threadID, parent string, step int, msgs []model.Message) string {
	t.Helper()
	cp := &store.Checkpoint{ThreadID: threadID, ParentID: parent, Step: step,
		State: &thread.State{Title: "t", Todos: []thread.Todo{{Content: "x", Status: "pending"}}, Messages: msgs}}
	if err := s.PutCheckpoint(t.Context(), cp); err != nil {
		t.Fatal(err)
	}
	return cp.ID
}

func messagesOf(t *testing.T, s store.Store, threadID, id string) []model.Message {
	t.Helper()
	cp, err := s.GetCheckpoint(t.Context(), threadID, id)
	if err != nil {
		t.Fatalf("checkpoint %s: %v", id, err)
	}
	return cp.State.Messages
}

// testBranch writes a thread, then a checkpoint whose parent is an older
// one (a rewind: its state is the parent's with an edited last message
// and a new one): every checkpoint reads back as written.
func testBranch(t *testing.T, s store.Store) {
	if err := s.CreateThread(t.Context(), &store.Thread{ID: "t", UserID: "u"}); err != nil {
		t.Fatal(err)
	}
	want := map[string][]model.Message{}
	var ids []string
	parent := ""
	for i := range 5 {
		msgs := chat(0, 2*i+1)
		parent = put(t, s, "t", parent, i, msgs)
		ids, want[parent] = append(ids, parent), msgs
	}
	branch := chat(0, 3)
	branch[2].Content = "edited"
	branch = append(branch, model.Message{ID: "b", Role: model.RoleAssistant, Content: "another answer"})
	b := put(t, s, "t", ids[1], 5, branch)
	want[b] = branch
	after := append(append([]model.Message(nil), chat(0, 9)...), model.Message{Role: model.RoleUser, Content: "no id"},
		model.Message{Role: model.RoleUser, Content: "no id"})
	c := put(t, s, "t", ids[4], 6, after)
	want[c] = after
	for id, msgs := range want {
		if diff := cmp.Diff(msgs, messagesOf(t, s, "t", id)); diff != "" {
			t.Errorf("checkpoint %s (-want +got):\n%s", id, diff)
		}
	}
	latest, err := s.LatestCheckpoint(t.Context(), "t")
	if err != nil || latest.ID != c || latest.ParentID != ids[4] {
		t.Fatalf("latest = %+v, %v; want %s after %s", latest, err, c, ids[4])
	}
}

// testWriteSize appends one message per step to a thread of 10 and to a
// thread of 1,000 messages: a write adds as many bytes to the second as
// to the first (give or take the digits of its ids).
func testWriteSize(t *testing.T, s store.Store, sizes Sizes) {
	growth := map[int]int64{}
	for _, n := range []int{10, 1000} {
		tid := fmt.Sprintf("t%d", n)
		if err := s.CreateThread(t.Context(), &store.Thread{ID: tid, UserID: "u"}); err != nil {
			t.Fatal(err)
		}
		parent := put(t, s, tid, "", 0, chat(0, n))
		parent = put(t, s, tid, parent, 1, chat(0, n+1)) // the first write after a read or a restart may read its parent
		before, _ := sizes(t, s, tid)
		const steps = 8
		for i := range steps {
			parent = put(t, s, tid, parent, 2+i, chat(0, n+2+i))
		}
		after, _ := sizes(t, s, tid)
		growth[n] = (after - before) / steps
		if diff := cmp.Diff(chat(0, n+1+steps), messagesOf(t, s, tid, parent)); diff != "" {
			t.Fatalf("thread of %d: last checkpoint (-want +got):\n%s", n, diff)
		}
	}
	if growth[10] <= 0 || growth[1000] > growth[10]+16 {
		t.Errorf("a write adds %d bytes at 10 messages and %d bytes at 1,000; want the same (within 16 bytes)",
			growth[10], growth[1000])
	}
}

// testRetention writes 200 steps with a retention of 10, summarising the
// thread at step 60 (its state becomes a summary and a tail) and
// branching off an old checkpoint at step 5: the newest checkpoints, the
// one before the summarization (the messages page needs it) are kept and
// read back as written; the others, and the message rows only they had,
// are deleted.
func testRetention(t *testing.T, s store.Store, sizes Sizes) {
	ctx := t.Context()
	if err := s.CreateThread(ctx, &store.Thread{ID: "t", UserID: "u"}); err != nil {
		t.Fatal(err)
	}
	want := map[string][]model.Message{}
	var ids []string
	parent, msgs := "", []model.Message(nil)
	const steps = 200
	for i := range steps {
		switch {
		case i == 5:
			// A branch off step 2, with a message nothing else has;
			// the main line goes on from step 4.
			branch := append(append([]model.Message(nil), want[ids[2]]...), model.Message{ID: "lost", Role: model.RoleUser, Content: "branch"})
			id := put(t, s, "t", ids[2], i, branch)
			ids, want[id] = append(ids, id), branch
			continue
		case i == 60:
			msgs = append([]model.Message{{ID: "summary", Role: model.RoleUser, Content: "summary"}}, msgs[len(msgs)-4:]...)
		default:
			msgs = append(msgs[:len(msgs):len(msgs)], chat(i, 1)...)
		}
		parent = put(t, s, "t", parent, i, msgs)
		ids, want[parent] = append(ids, parent), msgs
	}
	all, err := s.ListCheckpoints(ctx, "t", 0, "")
	if err != nil {
		t.Fatal(err)
	}
	kept := map[string]bool{}
	for _, cp := range all {
		kept[cp.ID] = true
		if diff := cmp.Diff(want[cp.ID], cp.State.Messages); diff != "" {
			t.Errorf("kept checkpoint of step %d (-want +got):\n%s", cp.Step, diff)
		}
	}
	for i := steps - 10; i < steps; i++ {
		if !kept[ids[i]] {
			t.Errorf("checkpoint of step %d (one of the newest 10) was deleted", i)
		}
	}
	if !kept[ids[59]] {
		t.Error("the checkpoint before the summarization was deleted")
	}
	if kept[ids[5]] || kept[ids[100]] {
		t.Errorf("old checkpoints kept: branch %v, step 100 %v", kept[ids[5]], kept[ids[100]])
	}
	if max := 10 + store.PruneEvery - 1 + 1; len(all) > max {
		t.Errorf("%d checkpoints kept, want at most %d", len(all), max)
	}
	if _, err := s.GetCheckpoint(ctx, "t", ids[5]); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("GetCheckpoint(pruned) = %v, want ErrNotFound", err)
	}
	// Message rows: the 200 of the main line (the branch's own is gone).
	if _, rows := sizes(t, s, "t"); rows != steps-1 {
		t.Errorf("%d message rows kept, want %d", rows, steps-1)
	}
}

// testKeepEverything: a negative KeepLatest keeps every checkpoint.
func testKeepEverything(t *testing.T, s store.Store) {
	if err := s.CreateThread(t.Context(), &store.Thread{ID: "t", UserID: "u"}); err != nil {
		t.Fatal(err)
	}
	parent := ""
	const steps = 3 * store.PruneEvery
	for i := range steps {
		parent = put(t, s, "t", parent, i, chat(0, i+1))
	}
	all, err := s.ListCheckpoints(t.Context(), "t", 0, "")
	if err != nil {
		t.Fatal(err)
	}
	if len(all) != steps {
		t.Errorf("%d checkpoints kept, want all %d", len(all), steps)
	}
}
