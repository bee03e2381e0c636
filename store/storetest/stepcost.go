package storetest

import (
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/antlerhq/antler/model"
	"github.com/antlerhq/antler/store"
	"github.com/antlerhq/antler/thread"
)

// Counts returns how many messages a store has encoded for writing and
// decoded from their rows so far.
type Counts func(s store.Store) (encoded, decoded int64)

// RunStepCost runs the suite of what a run's store work costs on a long
// thread: a run that continues the thread's latest checkpoint and writes
// checkpoints that only append (as the agent loop does, with
// KeptMessages) encodes only the new messages and decodes none, whether
// the thread holds 10 or 1,000 messages; a promise it cannot keep is
// ignored; and appending to what a read returned does not change the
// store's later reads.
func RunStepCost(t *testing.T, newStore func(t *testing.T) store.Store, counts Counts) {
	t.Helper()
	t.Run("RunDoesNotEncodeOrDecodeTheHistory", func(t *testing.T) { testStepCost(t, newStore(t), counts) })
	t.Run("WrongKeptMessagesIgnored", func(t *testing.T) { testWrongKept(t, newStore(t)) })
	t.Run("AppendToReadStateDoesNotLeak", func(t *testing.T) { testAppendToRead(t, newStore(t)) })
}

// testStepCost writes a thread of n messages, then runs as the loop
// does: read the latest checkpoint, append a message per step and write
// it with KeptMessages.
func testStepCost(t *testing.T, s store.Store, counts Counts) {
	ctx := t.Context()
	type cost struct{ encoded, decoded int64 }
	got := map[int]cost{}
	for _, n := range []int{10, 1000} {
		tid := fmt.Sprintf("t%d", n)
		if err := s.CreateThread(ctx, &store.Thread{ID: tid, UserID: "u"}); err != nil {
			t.Fatal(err)
		}
		put(t, s, tid, "", 0, chat(0, n))
		enc0, dec0 := counts(s)
		for run := range 2 {
			cp, err := s.LatestCheckpoint(ctx, tid)
			if err != nil {
				t.Fatal(err)
			}
			st, parent, step := cp.State, cp.ID, cp.Step+1
			for i := range 3 {
				next := *st
				next.Messages = append(st.Messages, chat(n+6*run+2*i, 2)...)
				w := &store.Checkpoint{ThreadID: tid, ParentID: parent, Step: step, State: &next,
					KeptMessages: len(st.Messages)}
				if err := s.PutCheckpoint(ctx, w); err != nil {
					t.Fatal(err)
				}
				st, parent, step = &next, w.ID, step+1
			}
		}
		enc1, dec1 := counts(s)
		got[n] = cost{enc1 - enc0, dec1 - dec0}
		cp, err := s.LatestCheckpoint(ctx, tid)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(chat(0, n+12), cp.State.Messages); diff != "" {
			t.Fatalf("thread of %d: latest checkpoint (-want +got):\n%s", n, diff)
		}
		if cp, err = s.GetCheckpoint(ctx, tid, cp.ParentID); err != nil {
			t.Fatal(err)
		} else if diff := cmp.Diff(chat(0, n+10), cp.State.Messages); diff != "" {
			t.Fatalf("thread of %d: checkpoint before the latest (-want +got):\n%s", n, diff)
		}
	}
	// 2 runs × 3 steps × 2 new messages, and nothing read back.
	want := cost{encoded: 12}
	for n, c := range got {
		if c != want {
			t.Errorf("thread of %d messages: 2 runs encoded %d and decoded %d messages, want %d and %d",
				n, c.encoded, c.decoded, want.encoded, want.decoded)
		}
	}
}

// testWrongKept: a KeptMessages larger than the parent's or the state's
// messages is ignored, and the state is written as it is.
func testWrongKept(t *testing.T, s store.Store) {
	ctx := t.Context()
	if err := s.CreateThread(ctx, &store.Thread{ID: "t", UserID: "u"}); err != nil {
		t.Fatal(err)
	}
	parent := put(t, s, "t", "", 0, chat(0, 3))
	for i, c := range []struct {
		msgs []model.Message
		kept int
	}{
		{chat(0, 5), 4},   // more than the parent has
		{chat(0, 2), 3},   // more than the state has
		{chat(0, 4), -1},  // negative
		{chat(10, 4), 0},  // nothing in common
		{chat(0, 6), 999}, // far beyond
	} {
		w := &store.Checkpoint{ThreadID: "t", ParentID: parent, Step: i + 1, KeptMessages: c.kept,
			State: &thread.State{Messages: c.msgs}}
		if err := s.PutCheckpoint(ctx, w); err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(c.msgs, messagesOf(t, s, "t", w.ID)); diff != "" {
			t.Errorf("case %d (kept %d): (-want +got):\n%s", i, c.kept, diff)
		}
		parent = w.ID
	}
}

// testAppendToRead: the messages a read returns may be the store's own,
// capped at their length: appending to them copies, and the store reads
// back what was written.
func testAppendToRead(t *testing.T, s store.Store) {
	ctx := t.Context()
	if err := s.CreateThread(ctx, &store.Thread{ID: "t", UserID: "u"}); err != nil {
		t.Fatal(err)
	}
	put(t, s, "t", "", 0, chat(0, 4))
	for range 2 {
		cp, err := s.LatestCheckpoint(ctx, "t")
		if err != nil {
			t.Fatal(err)
		}
		_ = append(cp.State.Messages, model.UserText("scribble"))
		cp.State.Title = "changed by the reader"
	}
	cp, err := s.LatestCheckpoint(ctx, "t")
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(chat(0, 4), cp.State.Messages[:len(cp.State.Messages):len(cp.State.Messages)]); diff != "" {
		t.Errorf("messages (-want +got):\n%s", diff)
	}
	if extra := cp.State.Messages[:cap(cp.State.Messages)]; len(extra) != 4 {
		t.Errorf("the read's messages have room past their length (%d of %d): an append would write the store's array",
			len(cp.State.Messages), cap(cp.State.Messages))
	}
	if cp.State.Title != "t" {
		t.Errorf("title %q: a reader's change reached the store", cp.State.Title)
	}
}
