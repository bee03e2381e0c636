package agent_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"go.uber.org/goleak"

	"github.com/antlerhq/antler/agent"
	"github.com/antlerhq/antler/builtin"
	"github.com/antlerhq/antler/model"
	"github.com/antlerhq/antler/store"
	"github.com/antlerhq/antler/store/sqlite"
	"github.com/antlerhq/antler/thread"
	"github.com/antlerhq/antler/tool"
)

func newAgent(t *testing.T, opts agent.Options) *agent.Agent {
	t.Helper()
	a, err := agent.New(opts)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// collect runs the agent and returns its events and the final error.
func collect(t *testing.T, ctx context.Context, a *agent.Agent, in agent.Input) ([]agent.Event, error) {
	t.Helper()
	var evs []agent.Event
	var runErr error
	for ev, err := range a.Run(ctx, in) {
		evs = append(evs, ev)
		if err != nil {
			runErr = err
		}
	}
	return evs, runErr
}

func types(evs []agent.Event) []string {
	out := make([]string, len(evs))
	for i, ev := range evs {
		out[i] = string(ev.Type)
	}
	return out
}

func roles(msgs []model.Message) []string {
	out := make([]string, len(msgs))
	for i, m := range msgs {
		out[i] = string(m.Role)
		if m.Role == model.RoleTool {
			out[i] += ":" + m.Name
		}
	}
	return out
}

func openStore(t *testing.T, dir string) store.Store {
	t.Helper()
	s, err := sqlite.OpenDir(dir, sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestToolCallThenAnswer(t *testing.T) {
	m := &fakeModel{steps: []step{calls("echo", `{"x":1}`), answer("done")}}
	a := newAgent(t, agent.Options{Model: m, Tools: []*tool.Tool{
		handlerTool("echo", func(ctx context.Context, call *tool.Call, args json.RawMessage) (*tool.Result, error) {
			return tool.Text("echo " + string(args)), nil
		}),
	}, SystemPrompt: "be brief"})
	evs, err := collect(t, t.Context(), a, agent.Input{ThreadID: "t", UserID: "u", Messages: []model.Message{model.UserText("hi")}})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"message", "tool_start", "tool_end", "message_delta", "message", "done"}
	if diff := cmp.Diff(want, types(evs)); diff != "" {
		t.Fatalf("events (-want +got):\n%s", diff)
	}
	done := evs[len(evs)-1]
	if done.Reason != agent.StopCompleted || done.Turns != 2 || done.Usage.TotalTokens != 12 {
		t.Errorf("done = %+v", done)
	}
	end := evs[2]
	if end.Message.Content != `echo {"x":1}` || end.IsError || end.Name != "echo" {
		t.Errorf("tool_end = %+v", end)
	}
	req := m.request(1)
	if diff := cmp.Diff([]string{"system", "user", "assistant", "tool:echo"}, roles(req.Messages)); diff != "" {
		t.Errorf("second request (-want +got):\n%s", diff)
	}
	if req.Messages[0].Content != "be brief" || len(req.Tools) != 1 || req.Tools[0].Name != "echo" {
		t.Errorf("request lacks system prompt or tools: %+v", req)
	}
}

func TestParallelToolCallsBothStateUpdatesSurvive(t *testing.T) {
	// Both calls must be running at once; the first finishes last, yet its
	// result comes first.
	var started sync.WaitGroup
	started.Add(2)
	secondDone := make(chan struct{})
	present := func(ctx context.Context, call *tool.Call, args json.RawMessage) (*tool.Result, error) {
		var in struct{ Path string }
		json.Unmarshal(args, &in)
		started.Done()
		started.Wait()
		if in.Path == "a" {
			<-secondDone
		} else {
			defer close(secondDone)
		}
		return &tool.Result{Content: []tool.Block{{Type: tool.BlockText, Text: "presented " + in.Path}},
			Update: &thread.Update{Artifacts: []string{"/mnt/user-data/outputs/" + in.Path}}}, nil
	}
	m := &fakeModel{steps: []step{calls("present", `{"path":"a"}`, "present", `{"path":"b"}`), answer("ok")}}
	a := newAgent(t, agent.Options{Model: m, Tools: []*tool.Tool{handlerTool("present", present)}})
	out, err := a.Invoke(t.Context(), agent.Input{Messages: []model.Message{model.UserText("go")}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"/mnt/user-data/outputs/a", "/mnt/user-data/outputs/b"}, out.State.Artifacts); diff != "" {
		t.Errorf("artifacts (-want +got):\n%s", diff)
	}
	msgs := out.State.Messages
	if msgs[2].Content != "presented a" || msgs[3].Content != "presented b" || msgs[2].ToolCallID != "call_1" {
		t.Errorf("tool messages not in call order: %+v", msgs[2:4])
	}
}

func TestClarificationEndsRunAndResumesOnNextMessage(t *testing.T) {
	s := openStore(t, t.TempDir())
	defer s.Close()
	m := &fakeModel{steps: []step{
		calls("ask_clarification", `{"question":"Which colour?","clarification_type":"approach_choice","options":["red","blue"]}`),
		answer("Painting it blue."),
	}}
	a := newAgent(t, agent.Options{Model: m, Store: s, Tools: []*tool.Tool{builtin.AskClarification()},
		ToolMiddlewares: []tool.Middleware{agent.Clarification()}})
	evs, err := collect(t, t.Context(), a, agent.Input{ThreadID: "t1", UserID: "u", Messages: []model.Message{model.UserText("paint it")}})
	if err != nil {
		t.Fatal(err)
	}
	var clar *agent.Event
	for i := range evs {
		if evs[i].Type == agent.EventClarification {
			clar = &evs[i]
		}
	}
	if clar == nil {
		t.Fatalf("no clarification event in %v", types(evs))
	}
	payload := clar.Data.(map[string]any)
	if payload["input_mode"] != "choice_with_other" || payload["request_id"] != "clarification:call_1" {
		t.Errorf("payload = %v", payload)
	}
	if done := evs[len(evs)-1]; done.Reason != agent.StopClarification {
		t.Fatalf("first run stopped with %q", done.Reason)
	}
	if m.count() != 1 {
		t.Fatalf("model called %d times before the user answered", m.count())
	}
	th, err := s.GetThread(t.Context(), "t1")
	if err != nil || th.Status != store.ThreadInterrupted {
		t.Fatalf("thread status = %v, %v", th, err)
	}

	out, err := a.Invoke(t.Context(), agent.Input{ThreadID: "t1", UserID: "u", Messages: []model.Message{model.UserText("blue")}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if out.Reason != agent.StopCompleted {
		t.Fatalf("second run stopped with %q", out.Reason)
	}
	req := m.request(1)
	if diff := cmp.Diff([]string{"user", "assistant", "tool:ask_clarification", "user"}, roles(req.Messages)); diff != "" {
		t.Fatalf("resumed request (-want +got):\n%s", diff)
	}
	if q := req.Messages[2].Content; q != "🔀 Which colour?\n\n  1. red\n  2. blue" {
		t.Errorf("question text = %q", q)
	}
	if req.Messages[3].Content != "blue" {
		t.Errorf("last message = %+v", req.Messages[3])
	}
}

func TestUnknownToolName(t *testing.T) {
	m := &fakeModel{steps: []step{calls("lsls", `{}`), answer("sorry")}}
	a := newAgent(t, agent.Options{Model: m, Tools: []*tool.Tool{textTool("ls", "x"), textTool("read_file", "y")}})
	out, err := a.Invoke(t.Context(), agent.Input{Messages: []model.Message{model.UserText("list")}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	tm := out.State.Messages[2]
	if want := "Error: lsls is not a valid tool, try one of [ls, read_file]. Did you mean 'ls'?"; tm.Content != want || tm.Status != "error" {
		t.Errorf("tool message = %q (status %q), want %q", tm.Content, tm.Status, want)
	}
	if out.Reason != agent.StopCompleted {
		t.Errorf("reason = %q", out.Reason)
	}
}

func TestBadCallsBecomeErrorResults(t *testing.T) {
	boom := errors.New("disk on fire")
	tools := []*tool.Tool{
		textTool("ok", "fine"),
		handlerTool("fails", func(context.Context, *tool.Call, json.RawMessage) (*tool.Result, error) { return nil, boom }),
		handlerTool("panics", func(context.Context, *tool.Call, json.RawMessage) (*tool.Result, error) { panic("oops") }),
	}
	for _, tc := range []struct {
		name, tool, args, want string
	}{
		{"empty name", "", `{}`, "Error: the tool call has no tool name; call one of [ok, fails, panics] by its exact name."},
		{"blank name", "  ", `{}`, "Error: the tool call has no tool name; call one of [ok, fails, panics] by its exact name."},
		{"concatenated name", "okok", `{}`, "Error: okok is not a valid tool, try one of [ok, fails, panics]. Did you mean 'ok'?"},
		{"thrice concatenated name", "okokok", `{}`, "Error: okokok is not a valid tool, try one of [ok, fails, panics]. Did you mean 'ok'?"},
		{"other case", "OK", `{}`, "Error: OK is not a valid tool, try one of [ok, fails, panics]. Did you mean 'ok'?"},
		{"unknown name", "nope", `{}`, "Error: nope is not a valid tool, try one of [ok, fails, panics]."},
		{"prefix of a repetition is not one", "okokx", `{}`, "Error: okokx is not a valid tool, try one of [ok, fails, panics]."},
		{"invalid JSON", "ok", `{"a":`, `Error: invalid arguments for ok: arguments must be a JSON object, got {"a":`},
		{"array arguments", "ok", `[1]`, "Error: invalid arguments for ok: arguments must be a JSON object, got [1]"},
		{"handler error", "fails", `{}`, "Error: Tool 'fails' failed with Error: disk on fire. Continue with available context, or choose an alternative tool."},
		{"panic", "panics", `{}`, "Error: Tool 'panics' failed with panic: oops. Continue with available context, or choose an alternative tool."},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := &fakeModel{steps: []step{calls(tc.tool, tc.args), answer("k")}}
			a := newAgent(t, agent.Options{Model: m, Tools: tools})
			out, err := a.Invoke(t.Context(), agent.Input{Messages: []model.Message{model.UserText("x")}}, nil)
			if err != nil {
				t.Fatal(err)
			}
			tm := out.State.Messages[2]
			if tm.Content != tc.want || tm.Status != "error" {
				t.Errorf("got %q (status %q)\nwant %q", tm.Content, tm.Status, tc.want)
			}
		})
	}
}

func TestModelErrorMidStream(t *testing.T) {
	s := openStore(t, t.TempDir())
	defer s.Close()
	m := &fakeModel{steps: []step{failMidStream("partial", errProvider)}}
	a := newAgent(t, agent.Options{Model: m, Store: s})
	evs, err := collect(t, t.Context(), a, agent.Input{ThreadID: "t", UserID: "u", RunID: "r", Messages: []model.Message{model.UserText("hi")}})
	if !errors.Is(err, errProvider) {
		t.Fatalf("err = %v, want the provider's", err)
	}
	if diff := cmp.Diff([]string{"message_delta", "error", "done"}, types(evs)); diff != "" {
		t.Fatalf("events (-want +got):\n%s", diff)
	}
	if evs[2].Reason != agent.StopError || !strings.Contains(evs[1].Error, "502") {
		t.Errorf("error/done = %+v / %+v", evs[1], evs[2])
	}
	run, err := s.GetRun(t.Context(), "r")
	if err != nil || run.Status != store.RunError || !strings.Contains(run.Error, "502") {
		t.Errorf("run = %+v, %v", run, err)
	}
	cp, err := s.LatestCheckpoint(t.Context(), "t")
	if err != nil || len(cp.State.Messages) != 1 {
		t.Errorf("the user's message was not kept: %+v, %v", cp, err)
	}
}

func TestCancellationStopsModelAndTools(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	toolStarted := make(chan struct{})
	slow := handlerTool("slow", func(ctx context.Context, call *tool.Call, args json.RawMessage) (*tool.Result, error) {
		close(toolStarted)
		<-ctx.Done()
		return nil, ctx.Err()
	})
	m := &fakeModel{steps: []step{calls("slow", `{}`, "slow2", `{}`)}}
	fast := textTool("slow2", "quick")
	dir := t.TempDir()
	s := openStore(t, dir)
	a := newAgent(t, agent.Options{Model: m, Tools: []*tool.Tool{slow, fast}, Store: s})
	go func() {
		<-toolStarted
		cancel()
	}()
	start := time.Now()
	evs, err := collect(t, ctx, a, agent.Input{ThreadID: "t", UserID: "u", Messages: []model.Message{model.UserText("go")}})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("cancellation took %v", d)
	}
	if last := evs[len(evs)-1]; last.Type != agent.EventDone || last.Reason != agent.StopCancelled {
		t.Errorf("last event = %+v", last)
	}
	// The state reached so far (the assistant's unanswered calls) is saved,
	// and repaired before the next request.
	cp, err := s.LatestCheckpoint(context.Background(), "t")
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"user", "assistant"}, roles(cp.State.Messages)); diff != "" {
		t.Errorf("saved state (-want +got):\n%s", diff)
	}
	patched, n := agent.RepairToolCalls(cp.State.Messages)
	if n != 2 || patched[2].Content != agent.DanglingInterruptedText {
		t.Errorf("repair = %d placeholders, %+v", n, patched)
	}
	s.Close()
}

func TestModelCancellationMidStream(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	ctx, cancel := context.WithCancel(t.Context())
	m := &fakeModel{steps: []step{func(*model.Request) ([]model.Event, error) {
		cancel()
		return []model.Event{{TextDelta: "a"}, {TextDelta: "b"}}, nil
	}}}
	a := newAgent(t, agent.Options{Model: m})
	_, err := a.Invoke(ctx, agent.Input{Messages: []model.Message{model.UserText("x")}}, nil)
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v", err)
	}
}

func TestBreakingOutOfRunCancels(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	blocked := make(chan struct{})
	m := &fakeModel{steps: []step{calls("wait", `{}`)}}
	a := newAgent(t, agent.Options{Model: m, Tools: []*tool.Tool{handlerTool("wait", func(ctx context.Context, call *tool.Call, args json.RawMessage) (*tool.Result, error) {
		close(blocked)
		<-ctx.Done()
		return nil, ctx.Err()
	})}})
	for ev := range a.Run(t.Context(), agent.Input{Messages: []model.Message{model.UserText("x")}}) {
		if ev.Type == agent.EventToolStart {
			break
		}
	}
	<-blocked
}

func TestThreadSurvivesStoreReopen(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "home")
	m := &fakeModel{steps: []step{answer("first"), answer("second")}}
	s := openStore(t, dir)
	a := newAgent(t, agent.Options{Model: m, Store: s})
	if _, err := a.Invoke(t.Context(), agent.Input{ThreadID: "t", UserID: "u", Messages: []model.Message{model.UserText("one")}}, nil); err != nil {
		t.Fatal(err)
	}
	s.Close()

	s2 := openStore(t, dir)
	defer s2.Close()
	a2 := newAgent(t, agent.Options{Model: m, Store: s2})
	out, err := a2.Invoke(t.Context(), agent.Input{ThreadID: "t", UserID: "u", Messages: []model.Message{model.UserText("two")}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, msg := range out.State.Messages {
		got = append(got, msg.Content)
	}
	if diff := cmp.Diff([]string{"one", "first", "two", "second"}, got); diff != "" {
		t.Errorf("history (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"user", "assistant", "user"}, roles(m.request(1).Messages)); diff != "" {
		t.Errorf("second request (-want +got):\n%s", diff)
	}
	runs, err := s2.ListRuns(t.Context(), "t")
	if err != nil || len(runs) != 2 || runs[0].Status != store.RunSuccess {
		t.Errorf("runs = %+v, %v", runs, err)
	}
	if _, err := a2.Invoke(t.Context(), agent.Input{ThreadID: "t", UserID: "mallory"}, nil); err == nil {
		t.Error("another user could run on the thread")
	}
}

func TestMaxTurns(t *testing.T) {
	m := &fakeModel{loop: calls("ok", `{}`)}
	a := newAgent(t, agent.Options{Model: m, MaxTurns: 3, Tools: []*tool.Tool{textTool("ok", "again")}})
	out, err := a.Invoke(t.Context(), agent.Input{Messages: []model.Message{model.UserText("x")}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if out.Reason != agent.StopMaxTurns || out.Turns != 3 || m.count() != 3 {
		t.Errorf("reason %q after %d turns (%d requests)", out.Reason, out.Turns, m.count())
	}
}

func TestEndAndReturnDirectStopTheRun(t *testing.T) {
	ender := handlerTool("ender", func(context.Context, *tool.Call, json.RawMessage) (*tool.Result, error) {
		return &tool.Result{Content: []tool.Block{{Type: tool.BlockText, Text: "bye"}}, End: true}, nil
	})
	direct := textTool("direct", "result")
	direct.ReturnDirect = true
	for _, tc := range []struct {
		tool string
		want agent.StopReason
	}{{"ender", agent.StopEnd}, {"direct", agent.StopReturnDirect}} {
		t.Run(tc.tool, func(t *testing.T) {
			m := &fakeModel{steps: []step{calls(tc.tool, `{}`)}}
			a := newAgent(t, agent.Options{Model: m, Tools: []*tool.Tool{ender, direct}})
			out, err := a.Invoke(t.Context(), agent.Input{Messages: []model.Message{model.UserText("x")}}, nil)
			if err != nil {
				t.Fatal(err)
			}
			if out.Reason != tc.want || m.count() != 1 {
				t.Errorf("reason %q after %d requests", out.Reason, m.count())
			}
		})
	}
}

func TestToolEmitsCustomEvents(t *testing.T) {
	task := handlerTool("task", func(ctx context.Context, call *tool.Call, args json.RawMessage) (*tool.Result, error) {
		call.EmitEvent("task_started", map[string]any{"task_id": "1"})
		call.EmitEvent("task_completed", map[string]any{"task_id": "1"})
		return tool.Text("Task Succeeded"), nil
	})
	m := &fakeModel{steps: []step{calls("task", `{}`), answer("ok")}}
	a := newAgent(t, agent.Options{Model: m, Tools: []*tool.Tool{task}})
	var got []string
	_, err := a.Invoke(t.Context(), agent.Input{Messages: []model.Message{model.UserText("x")}}, func(ev agent.Event) {
		if strings.HasPrefix(string(ev.Type), "task_") {
			got = append(got, fmt.Sprintf("%s %s %v", ev.Type, ev.ToolCallID, ev.Data))
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"task_started call_1 map[task_id:1]", "task_completed call_1 map[task_id:1]"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

func TestStateUpdateConflictFailsTheRun(t *testing.T) {
	sb := func(id string) *tool.Tool {
		return handlerTool("sb"+id, func(context.Context, *tool.Call, json.RawMessage) (*tool.Result, error) {
			return &tool.Result{Update: &thread.Update{Sandbox: &thread.Sandbox{SandboxID: id}}}, nil
		})
	}
	m := &fakeModel{steps: []step{calls("sba", `{}`, "sbb", `{}`)}}
	a := newAgent(t, agent.Options{Model: m, Tools: []*tool.Tool{sb("a"), sb("b")}})
	_, err := a.Invoke(t.Context(), agent.Input{Messages: []model.Message{model.UserText("x")}}, nil)
	if err == nil || !strings.Contains(err.Error(), "Conflicting sandbox state updates: 'a' != 'b'") {
		t.Fatalf("err = %v", err)
	}
}

func TestNewRejectsDuplicateTools(t *testing.T) {
	if _, err := agent.New(agent.Options{Model: &fakeModel{}, Tools: []*tool.Tool{textTool("a", ""), textTool("a", "")}}); err == nil {
		t.Error("duplicate names accepted")
	}
	if _, err := agent.New(agent.Options{}); err == nil {
		t.Error("missing model accepted")
	}
}

func TestEventJSON(t *testing.T) {
	b, err := json.Marshal(agent.Event{Type: agent.EventDone, Reason: agent.StopCompleted, Turns: 2})
	if err != nil {
		t.Fatal(err)
	}
	if string(b) != `{"type":"done","reason":"completed","turns":2}` {
		t.Errorf("got %s", b)
	}
}
