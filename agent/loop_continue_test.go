package agent_test

import (
	"runtime"
	"sync"
	"testing"
	"unsafe"

	"github.com/google/go-cmp/cmp"

	"github.com/antlerhq/antler/agent"
	"github.com/antlerhq/antler/model"
	"github.com/antlerhq/antler/store/sqlite"
	"github.com/antlerhq/antler/thread"
	"github.com/antlerhq/antler/tool"
)

// continueAgent is an agent without a store whose model calls tool t0,
// then answers.
func continueAgent(t *testing.T, prompt string) *agent.Agent {
	t.Helper()
	a, err := agent.New(agent.Options{Model: benchModel{}, Tools: benchTools(1), SystemPrompt: prompt,
		ModelMiddlewares: []tool.ModelMiddleware{agent.DanglingToolCalls()}})
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// continueRun runs a fresh agent with in and fails the test on an error.
func continueRun(t *testing.T, prompt string, in agent.Input) *agent.Outcome {
	t.Helper()
	in.ThreadID, in.UserID = "t", "u"
	in.Messages = []model.Message{model.UserText("go")}
	out, err := continueAgent(t, prompt).Invoke(t.Context(), in, nil)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestLoop_continueAllocatesNothingForTheHistory checks that a run that
// continues an outcome (Input.Continue) allocates nothing that grows with
// the thread: the bytes a run allocates at 1,000 messages are those at 10
// plus much less than one copy of the history (which a run on a lent
// State makes, to hold its messages and the system prompt in one
// request). Counts of bytes, not timings.
func TestLoop_continueAllocatesNothingForTheHistory(t *testing.T) {
	const runs = 20
	perRun := func(n int, cont bool) uint64 {
		out := continueRun(t, "sys", agent.Input{State: historyState(n)})
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		for range runs {
			in := agent.Input{State: out.State}
			if cont {
				in = agent.Input{Continue: out}
			}
			next := continueRun(t, "sys", in)
			if cont {
				out = next
			}
		}
		runtime.ReadMemStats(&after)
		return (after.TotalAlloc - before.TotalAlloc) / runs
	}
	history := uint64(1000-10) * uint64(unsafe.Sizeof(model.Message{}))
	small, large := perRun(10, true), perRun(1000, true)
	if large > small+history/4 {
		t.Errorf("a continued run allocates %d bytes at 1,000 messages, %d at 10: it copies the history (%d bytes)",
			large, small, history)
	}
	// The lent state is copied: the measure sees a copy when there is one.
	if lent := perRun(1000, false); lent < small+history {
		t.Errorf("a run on a lent state allocates %d bytes at 1,000 messages, %d at 10: the measure misses the copy (%d bytes)",
			lent, small, history)
	}
}

// TestLoop_continueExtendsInPlace checks that a continued run's state
// and requests are those of a run on a copy of the same state, in the
// earlier run's array, and that the earlier outcome's messages stay as
// they were.
func TestLoop_continueExtendsInPlace(t *testing.T) {
	first := continueRun(t, "sys", agent.Input{State: historyState(30)})
	kept := append([]model.Message(nil), first.State.Messages...)
	m := &fakeModel{steps: []step{calls("t0", `{}`), answer("done")}}
	a, err := agent.New(agent.Options{Model: m, Tools: benchTools(1), SystemPrompt: "sys"})
	if err != nil {
		t.Fatal(err)
	}
	got, err := a.Invoke(t.Context(), agent.Input{ThreadID: "t", UserID: "u", Continue: first,
		Messages: []model.Message{model.UserText("again")}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if &got.State.Messages[0] != &first.State.Messages[0] {
		t.Error("the continued run copied the history")
	}
	if diff := cmp.Diff(kept, first.State.Messages); diff != "" {
		t.Errorf("the continued outcome's messages changed (-before +after):\n%s", diff)
	}
	if diff := cmp.Diff(kept, got.State.Messages[:len(kept)]); diff != "" {
		t.Errorf("the continued run's history (-want +got):\n%s", diff)
	}
	if n := len(got.State.Messages) - len(kept); n != 4 {
		t.Errorf("the run added %d messages, want 4", n)
	}
	req := m.request(1).Messages
	want := append([]model.Message{model.SystemText("sys")}, got.State.Messages[:len(got.State.Messages)-1]...)
	if diff := cmp.Diff(want, req); diff != "" {
		t.Errorf("second request (-want +got):\n%s", diff)
	}
}

// TestLoop_continueCopiesWhenItMust checks the cases where a continued
// run cannot take the earlier run's buffer and copies the history: the
// outcome was continued already, the system prompt changed, the state's
// messages were replaced.
func TestLoop_continueCopiesWhenItMust(t *testing.T) {
	tests := []struct {
		name   string
		prompt string
		setup  func(t *testing.T, out *agent.Outcome)
	}{
		{name: "continued twice", prompt: "sys", setup: func(t *testing.T, out *agent.Outcome) {
			continueRun(t, "sys", agent.Input{Continue: out})
		}},
		{name: "another system prompt", prompt: "other"},
		{name: "replaced messages", prompt: "sys", setup: func(t *testing.T, out *agent.Outcome) {
			out.State.Messages = append([]model.Message(nil), out.State.Messages...)
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out := continueRun(t, "sys", agent.Input{State: historyState(20)})
			if tt.setup != nil {
				tt.setup(t, out)
			}
			kept := append([]model.Message(nil), out.State.Messages...)
			m := &fakeModel{steps: []step{answer("done")}}
			a, err := agent.New(agent.Options{Model: m, SystemPrompt: tt.prompt})
			if err != nil {
				t.Fatal(err)
			}
			got, err := a.Invoke(t.Context(), agent.Input{ThreadID: "t", UserID: "u", Continue: out,
				Messages: []model.Message{model.UserText("again")}}, nil)
			if err != nil {
				t.Fatal(err)
			}
			if &got.State.Messages[0] == &out.State.Messages[0] {
				t.Error("the run extended an array that was not its to extend")
			}
			if diff := cmp.Diff(kept, out.State.Messages); diff != "" {
				t.Errorf("the continued outcome's messages changed (-before +after):\n%s", diff)
			}
			want := append([]model.Message{model.SystemText(tt.prompt)}, kept...)
			want = append(want, got.State.Messages[len(kept)])
			if diff := cmp.Diff(want, m.request(0).Messages); diff != "" {
				t.Errorf("request (-want +got):\n%s", diff)
			}
		})
	}
}

// TestLoop_continueConcurrently continues one outcome from two runs at
// once: one takes the buffer, the other copies; run with -race.
func TestLoop_continueConcurrently(t *testing.T) {
	out := continueRun(t, "sys", agent.Input{State: historyState(50)})
	n := len(out.State.Messages)
	var wg sync.WaitGroup
	outs := make([]*agent.Outcome, 2)
	for i := range outs {
		wg.Go(func() {
			o, err := continueAgent(t, "sys").Invoke(t.Context(), agent.Input{ThreadID: "t", UserID: "u", Continue: out,
				Messages: []model.Message{model.UserText("go")}}, nil)
			if err != nil {
				t.Error(err)
				return
			}
			outs[i] = o
		})
	}
	wg.Wait()
	for i, o := range outs {
		if o == nil {
			continue
		}
		if got := len(o.State.Messages); got != n+4 {
			t.Errorf("run %d: %d messages, want %d", i, got, n+4)
		}
		if diff := cmp.Diff(out.State.Messages, o.State.Messages[:n]); diff != "" {
			t.Errorf("run %d: history (-want +got):\n%s", i, diff)
		}
	}
}

// TestLoop_continueErrors checks the inputs Continue refuses.
func TestLoop_continueErrors(t *testing.T) {
	out := continueRun(t, "sys", agent.Input{State: historyState(4)})
	s, err := sqlite.OpenDir(t.TempDir(), sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	withStore, err := agent.New(agent.Options{Model: benchModel{}, Store: s})
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		a    *agent.Agent
		in   agent.Input
	}{
		{name: "with a store", a: withStore, in: agent.Input{Continue: out}},
		{name: "another state", a: continueAgent(t, "sys"), in: agent.Input{Continue: out, State: &thread.State{}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.in.ThreadID, tt.in.UserID = "t", "u"
			if _, err := tt.a.Invoke(t.Context(), tt.in, nil); err == nil {
				t.Error("no error")
			}
		})
	}
}
