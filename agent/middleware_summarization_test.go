package agent_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/antlerhq/antler/agent"
	"github.com/antlerhq/antler/config"
	"github.com/antlerhq/antler/model"
	"github.com/antlerhq/antler/model/modeltest"
	"github.com/antlerhq/antler/store"
	"github.com/antlerhq/antler/thread"
	"github.com/antlerhq/antler/tool"
)

func msg(id string, role model.Role, text string) model.Message {
	return model.Message{ID: id, Role: role, Content: text}
}

func callMsg(id string, callIDs ...string) model.Message {
	m := msg(id, model.RoleAssistant, "")
	for _, c := range callIDs {
		m.ToolCalls = append(m.ToolCalls, model.ToolCall{ID: c, Name: "echo", Arguments: json.RawMessage(`{}`)})
	}
	return m
}

func toolMsg(id, callID string) model.Message {
	return model.Message{ID: id, Role: model.RoleTool, ToolCallID: callID, Name: "echo", Content: "ok"}
}

func ids(msgs []model.Message) []string {
	out := make([]string, len(msgs))
	for i, m := range msgs {
		out[i] = m.ID
	}
	return out
}

// summaryEvents returns the summarization state events of a run.
func summaryEvents(evs []agent.Event) []*thread.Update {
	var out []*thread.Update
	for _, ev := range evs {
		if ev.Type == agent.EventState && ev.Name == agent.SummarizationNode {
			out = append(out, ev.Update)
		}
	}
	return out
}

func byMessages(n float64) []config.ContextSize {
	return []config.ContextSize{{Type: config.ContextMessages, Value: n}}
}

func keepMessages(n float64) config.ContextSize {
	return config.ContextSize{Type: config.ContextMessages, Value: n}
}

// runWith runs one user message "u-new" on a thread whose state holds
// history, without a store.
func runWith(t *testing.T, a *agent.Agent, st *thread.State) ([]agent.Event, *agent.Outcome) {
	t.Helper()
	var evs []agent.Event
	out, err := a.Invoke(t.Context(), agent.Input{ThreadID: "t", UserID: "u", State: st,
		Messages: []model.Message{msg("u-new", model.RoleUser, "next question")}}, func(ev agent.Event) { evs = append(evs, ev) })
	if err != nil {
		t.Fatalf("run: %v", err)
	}
	return evs, out
}

func TestSummarizationKeepsTail(t *testing.T) {
	history := []model.Message{
		msg("u1", model.RoleUser, "first question"), msg("a1", model.RoleAssistant, "first answer"),
		msg("u2", model.RoleUser, "second question"), msg("a2", model.RoleAssistant, "second answer"),
	}
	tests := []struct {
		name      string
		history   []model.Message
		trigger   []config.ContextSize
		keep      config.ContextSize
		wantKept  []string // nil: no summarization
		wantCalls int      // summary model calls
	}{
		{name: "below the trigger", history: history, trigger: byMessages(6), keep: keepMessages(2)},
		{name: "no trigger", history: history, keep: keepMessages(2)},
		{name: "at the trigger", history: history, trigger: byMessages(5), keep: keepMessages(2),
			wantKept: []string{"a2", "u-new"}, wantCalls: 1},
		{name: "history within keep", history: history, trigger: byMessages(1), keep: keepMessages(5)},
		{
			name: "a cut on a tool result moves back to its call",
			history: []model.Message{msg("u1", model.RoleUser, "go"), callMsg("a1", "c1", "c2"), toolMsg("t1", "c1"),
				toolMsg("t2", "c2"), msg("a2", model.RoleAssistant, "done")},
			trigger: byMessages(6), keep: keepMessages(3),
			// len 6, target cut 3 = t2: back to a1, which is kept with both results.
			wantKept: []string{"a1", "t1", "t2", "a2", "u-new"}, wantCalls: 1,
		},
		{
			name: "orphan tool results are summarised, not kept alone",
			history: []model.Message{msg("u1", model.RoleUser, "go"), toolMsg("t1", "gone"), toolMsg("t2", "gone"),
				msg("a2", model.RoleAssistant, "done")},
			trigger: byMessages(5), keep: keepMessages(3),
			wantKept: []string{"a2", "u-new"}, wantCalls: 1,
		},
		{
			name: "a date reminder and the current request are kept",
			history: []model.Message{
				{ID: "r1", Role: model.RoleUser, Content: "<system-reminder>date</system-reminder>",
					Meta: map[string]any{"dynamic_context_reminder": true, "hide_from_ui": true}},
				msg("u1", model.RoleUser, "first"), msg("a1", model.RoleAssistant, "one"),
				msg("a2", model.RoleAssistant, "two"), msg("a3", model.RoleAssistant, "three"),
			},
			trigger: byMessages(6), keep: keepMessages(1),
			wantKept: []string{"r1", "u-new"}, wantCalls: 1,
		},
		{
			name: "keep by tokens",
			history: []model.Message{msg("u1", model.RoleUser, strings.Repeat("x", 400)),
				msg("a1", model.RoleAssistant, strings.Repeat("y", 400)), msg("a2", model.RoleAssistant, "short")},
			trigger: byMessages(4), keep: config.ContextSize{Type: config.ContextTokens, Value: 20},
			wantKept: []string{"a2", "u-new"}, wantCalls: 1,
		},
		{
			name: "tokens trigger",
			history: []model.Message{msg("u1", model.RoleUser, strings.Repeat("x", 400)),
				msg("a1", model.RoleAssistant, "y")},
			trigger: []config.ContextSize{{Type: config.ContextTokens, Value: 100}}, keep: keepMessages(1),
			wantKept: []string{"u-new"}, wantCalls: 1,
		},
		{
			name: "fraction of the context window",
			history: []model.Message{msg("u1", model.RoleUser, strings.Repeat("x", 400)),
				msg("a1", model.RoleAssistant, "y")},
			trigger: []config.ContextSize{{Type: config.ContextFraction, Value: 0.5}}, keep: keepMessages(1),
			wantKept: []string{"u-new"}, wantCalls: 1,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			chat := modeltest.New(modeltest.Turn{Text: "answer"})
			summ := modeltest.New(modeltest.Turn{Text: "  S1  "})
			a := newAgent(t, agent.Options{Model: chat, SystemPrompt: "You are helpful.", Summarization: &agent.SummarizationOptions{
				Model: summ, Trigger: tt.trigger, Keep: tt.keep, ContextWindow: 200}})
			evs, out := runWith(t, a, &thread.State{Messages: tt.history})
			if summ.Calls() != tt.wantCalls {
				t.Errorf("summary model calls = %d, want %d", summ.Calls(), tt.wantCalls)
			}
			ups := summaryEvents(evs)
			if tt.wantKept == nil {
				if len(ups) != 0 || out.State.SummaryText != "" {
					t.Fatalf("summarised below the trigger: %+v", ups)
				}
				if got := len(out.State.Messages); got != len(tt.history)+2 {
					t.Errorf("messages = %d, want %d", got, len(tt.history)+2)
				}
				return
			}
			if len(ups) != 1 {
				t.Fatalf("summarization events = %d, want 1", len(ups))
			}
			u := ups[0]
			if u.SummaryText == nil || *u.SummaryText != "S1" {
				t.Errorf("event summary_text = %v", u.SummaryText)
			}
			if len(u.Messages) == 0 || !u.Messages[0].Remove || u.Messages[0].ID != model.RemoveAllID {
				t.Fatalf("event messages do not start with the remove-all marker: %+v", u.Messages)
			}
			if diff := cmp.Diff(tt.wantKept, ids(u.Messages[1:])); diff != "" {
				t.Errorf("kept tail (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.wantKept, ids(out.State.Messages[:len(out.State.Messages)-1])); diff != "" {
				t.Errorf("state messages before the answer (-want +got):\n%s", diff)
			}
			if out.State.SummaryText != "S1" {
				t.Errorf("state summary_text = %q", out.State.SummaryText)
			}
			// The model sees the summary as hidden context data after
			// the system prompt, then the kept messages.
			req := chat.LastRequest()
			if !strings.HasPrefix(req.Messages[0].Content, "You are helpful.\n\n## Durable context authority contract\n") {
				t.Errorf("system prompt = %q", req.Messages[0].Content)
			}
			if got, want := req.Messages[1].Content, "<durable_context_data>\n## Conversation summary so far\nS1\n</durable_context_data>"; got != want {
				t.Errorf("summary message = %q, want %q", got, want)
			}
			if diff := cmp.Diff(tt.wantKept, ids(req.Messages[2:])); diff != "" {
				t.Errorf("request messages (-want +got):\n%s", diff)
			}
		})
	}
}

func TestSummaryPromptAndFold(t *testing.T) {
	chat := modeltest.New(modeltest.Turn{Text: "answer"})
	summ := modeltest.New(modeltest.Turn{Text: "NEW_SUMMARY"})
	a := newAgent(t, agent.Options{Model: chat, Summarization: &agent.SummarizationOptions{
		Model: summ, Trigger: byMessages(4), Keep: keepMessages(1)}})
	history := []model.Message{
		msg("u1", model.RoleUser, "what is </new_messages> in <b>?"), callMsg("a1", "c1"), toolMsg("t1", "c1"),
	}
	_, out := runWith(t, a, &thread.State{Messages: history, SummaryText: "OLD_SUMMARY_SENTINEL"})
	prompt := summ.LastRequest().Messages[0].Content
	want := "Messages to summarize:\n<existing_summary>\nOLD_SUMMARY_SENTINEL\n</existing_summary>\n\n<new_messages>\n" +
		"Human: what is &lt;/new_messages&gt; in &lt;b&gt;?\nAI: [{\"name\":\"echo\",\"args\":{},\"id\":\"c1\"}]\nTool: ok\n</new_messages>\n</messages>"
	if !strings.HasSuffix(prompt, want) {
		t.Errorf("summary prompt ends with\n%s\nwant\n%s", prompt[max(0, len(prompt)-len(want)):], want)
	}
	if !strings.HasPrefix(prompt, "<role>\nContext Extraction Assistant\n</role>") {
		t.Errorf("summary prompt is not LangChain's: %.60q", prompt)
	}
	if out.State.SummaryText != "NEW_SUMMARY" {
		t.Errorf("summary_text = %q", out.State.SummaryText)
	}
}

func TestSummaryTextCountsTowardTrigger(t *testing.T) {
	// Three messages and the summary make four, the trigger.
	chat := modeltest.New(modeltest.Turn{Text: "answer"})
	summ := modeltest.New(modeltest.Turn{Text: "S2"})
	a := newAgent(t, agent.Options{Model: chat, Summarization: &agent.SummarizationOptions{
		Model: summ, Trigger: byMessages(4), Keep: keepMessages(1)}})
	_, out := runWith(t, a, &thread.State{Messages: []model.Message{msg("u1", model.RoleUser, "q"),
		msg("a1", model.RoleAssistant, "a")}, SummaryText: "S1"})
	if out.State.SummaryText != "S2" {
		t.Errorf("summary_text = %q, want S2", out.State.SummaryText)
	}
}

func TestReportedUsageTriggers(t *testing.T) {
	chat := modeltest.New(modeltest.Turn{Text: "answer"})
	summ := modeltest.New(modeltest.Turn{Text: "S1"})
	a := newAgent(t, agent.Options{Model: chat, Summarization: &agent.SummarizationOptions{
		Model: summ, Trigger: []config.ContextSize{{Type: config.ContextTokens, Value: 4000}}, Keep: keepMessages(1)}})
	last := msg("a1", model.RoleAssistant, "short")
	last.Usage = &model.Usage{InputTokens: 4990, OutputTokens: 10, TotalTokens: 5000}
	_, out := runWith(t, a, &thread.State{Messages: []model.Message{msg("u1", model.RoleUser, "q"), last}})
	if out.State.SummaryText != "S1" {
		t.Errorf("summary_text = %q; the reported 5000 tokens did not trigger", out.State.SummaryText)
	}
}

func TestSummaryFailureKeepsHistory(t *testing.T) {
	history := []model.Message{msg("u1", model.RoleUser, "q1"), msg("a1", model.RoleAssistant, "a1"),
		msg("u2", model.RoleUser, "q2"), msg("a2", model.RoleAssistant, "a2")}
	tests := []struct {
		name string
		turn modeltest.Turn
	}{
		{name: "provider error", turn: modeltest.Turn{Status: 500, Error: "boom"}},
		{name: "blank answer", turn: modeltest.Turn{Text: " \n\t "}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			// No summary model: the run's model writes summaries, so its
			// first turn is the failed summary and its second the answer.
			chat := modeltest.New(tt.turn, modeltest.Turn{Text: "answer"})
			a := newAgent(t, agent.Options{Model: chat, Summarization: &agent.SummarizationOptions{
				Trigger: byMessages(3), Keep: keepMessages(1)}})
			evs, out := runWith(t, a, &thread.State{Messages: history})
			if len(summaryEvents(evs)) != 0 || out.State.SummaryText != "" {
				t.Errorf("a failed summary changed the state")
			}
			if out.Reason != agent.StopCompleted {
				t.Errorf("reason = %s, want completed", out.Reason)
			}
			want := append(ids(history), "u-new", "")
			got := ids(out.State.Messages)
			got[len(got)-1] = ""
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("messages (-want +got):\n%s", diff)
			}
			if chat.Calls() != 2 {
				t.Errorf("run model calls = %d, want 2 (summary, answer)", chat.Calls())
			}
		})
	}
}

// A failed summary is not tried again in the same run: a summary model
// that is down would otherwise cost every later model call its timeout.
func TestSummaryNotRetriedInARunAfterAFailure(t *testing.T) {
	history := []model.Message{msg("u1", model.RoleUser, "q1"), msg("a1", model.RoleAssistant, "a1"),
		msg("u2", model.RoleUser, "q2"), msg("a2", model.RoleAssistant, "a2")}
	summ := modeltest.New(modeltest.Turn{Status: 500, Error: "down"})
	run := modeltest.New(
		modeltest.Turn{Status: 500, Error: "also down"}, // the fallback summary
		modeltest.Turn{ToolCalls: []model.ToolCall{{Name: "echo", Arguments: json.RawMessage(`{}`)}}},
		modeltest.Turn{Text: "done"},
		modeltest.Turn{Text: "summary at last"},
		modeltest.Turn{Text: "next run"})
	a := newAgent(t, agent.Options{Model: run, Tools: []*tool.Tool{textTool("echo", "ok")},
		Summarization: &agent.SummarizationOptions{Model: summ, Trigger: byMessages(3), Keep: keepMessages(1)}})
	evs, out := runWith(t, a, &thread.State{Messages: history})
	if len(summaryEvents(evs)) != 0 || out.Reason != agent.StopCompleted {
		t.Fatalf("summaries = %d, reason %s", len(summaryEvents(evs)), out.Reason)
	}
	// Two model calls of the loop and one summary attempt on each model:
	// none before the second loop call.
	if summ.Calls() != 1 || run.Calls() != 3 {
		t.Errorf("summary model calls = %d (want 1), run model calls = %d (want 3: fallback summary, tool call, answer)",
			summ.Calls(), run.Calls())
	}
	// The next run tries again.
	evs, out = runWith(t, a, out.State)
	if len(summaryEvents(evs)) != 1 || out.State.SummaryText != "summary at last" {
		t.Errorf("second run: summaries = %d, summary_text %q", len(summaryEvents(evs)), out.State.SummaryText)
	}
}

func TestSummaryFallsBackToRunModel(t *testing.T) {
	chat := modeltest.New(modeltest.Turn{Text: "from the run model"}, modeltest.Turn{Text: "answer"})
	summ := modeltest.New(modeltest.Turn{Status: 401, Error: "expired key"})
	a := newAgent(t, agent.Options{Model: chat, Summarization: &agent.SummarizationOptions{
		Model: summ, Trigger: byMessages(2), Keep: keepMessages(1)}})
	_, out := runWith(t, a, &thread.State{Messages: []model.Message{msg("u1", model.RoleUser, "q")}})
	if out.State.SummaryText != "from the run model" {
		t.Errorf("summary_text = %q", out.State.SummaryText)
	}
	// The summary call streams nothing and is not part of the run's usage.
	if out.Turns != 1 {
		t.Errorf("turns = %d, want 1", out.Turns)
	}
}

func TestSummarizationCheckpointedAndCompact(t *testing.T) {
	s := openStore(t, t.TempDir())
	defer s.Close()
	chat := modeltest.New(modeltest.Turn{Text: "one"}, modeltest.Turn{Text: "two"}, modeltest.Turn{Text: "three"},
		modeltest.Turn{Text: "four"})
	summ := modeltest.New(modeltest.Turn{Text: "S1"}, modeltest.Turn{Text: "S2"}, modeltest.Turn{Text: "S3"})
	opts := agent.SummarizationOptions{Model: summ, Trigger: byMessages(3), Keep: keepMessages(1)}
	a := newAgent(t, agent.Options{Model: chat, Store: s, Summarization: &opts})
	runTurn(t, t.Context(), a, "first")  // first, one: below 3
	runTurn(t, t.Context(), a, "second") // first, one, second: summarised, the new request kept
	st := latestState(t, s)
	if st.SummaryText != "S1" || len(st.Messages) != 2 || st.Messages[0].Content != "second" {
		t.Fatalf("checkpointed state: summary %q, messages %+v", st.SummaryText, st.Messages)
	}
	runTurn(t, t.Context(), a, "third") // second, two, third: summarised again
	st = latestState(t, s)
	if st.SummaryText != "S2" || len(st.Messages) != 2 || st.Messages[0].Content != "third" {
		t.Fatalf("checkpointed state: summary %q, messages %+v", st.SummaryText, st.Messages)
	}
	if !strings.Contains(summ.LastRequest().Messages[0].Content, "<existing_summary>\nS1\n</existing_summary>") {
		t.Errorf("the second summary did not fold in the first")
	}
	// The current request is never summarised away.
	res, err := a.Compact(t.Context(), "t", true)
	if err != nil || res.Compacted || res.Reason != "not_enough_messages" {
		t.Errorf("Compact of one exchange = %+v, %v", res, err)
	}

	// Without a trigger only Compact summarises.
	opts.Trigger = nil
	manual := newAgent(t, agent.Options{Model: chat, Store: s, Summarization: &opts})
	runTurn(t, t.Context(), manual, "fourth") // third, three, fourth, four
	res, err = manual.Compact(t.Context(), "t", true)
	if err != nil {
		t.Fatal(err)
	}
	cp, err := s.LatestCheckpoint(t.Context(), "t")
	if err != nil {
		t.Fatal(err)
	}
	want := &agent.CompactResult{ThreadID: "t", Compacted: true, RemovedMessageCount: 2, PreservedMessageCount: 2,
		SummaryUpdated: true, CheckpointID: cp.ID, TotalTokens: res.TotalTokens}
	if diff := cmp.Diff(want, res); diff != "" {
		t.Errorf("Compact (-want +got):\n%s", diff)
	}
	if res.TotalTokens <= 0 {
		t.Errorf("total_tokens = %d", res.TotalTokens)
	}
	if got := []string{cp.State.SummaryText, cp.State.Messages[0].Content, cp.State.Messages[1].Content}; !cmp.Equal(got, []string{"S3", "fourth", "four"}) {
		t.Errorf("compacted checkpoint = %q", got)
	}
	if _, err := manual.Compact(t.Context(), "nope", true); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("Compact of an unknown thread: %v", err)
	}
	plain := newAgent(t, agent.Options{Model: chat, Store: s})
	if _, err := plain.Compact(context.Background(), "t", true); !errors.Is(err, agent.ErrCompactionDisabled) {
		t.Errorf("Compact without summarization: %v", err)
	}
}
