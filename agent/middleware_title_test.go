package agent_test

import (
	"context"
	"errors"
	"iter"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	"go.uber.org/goleak"

	"github.com/antlerhq/antler/agent"
	"github.com/antlerhq/antler/model"
	"github.com/antlerhq/antler/model/modeltest"
	"github.com/antlerhq/antler/store"
	"github.com/antlerhq/antler/thread"
	"github.com/antlerhq/antler/tool"
)

// titleEvents returns the titles the run reported as state events.
func titleEvents(evs []agent.Event) []string {
	var out []string
	for _, ev := range evs {
		if ev.Type == agent.EventState && ev.Name == agent.TitleNode && ev.Update != nil && ev.Update.Title != nil {
			out = append(out, *ev.Update.Title)
		}
	}
	return out
}

// runTurn runs one user message on thread "t" and returns its events.
func runTurn(t *testing.T, ctx context.Context, a *agent.Agent, text string) []agent.Event {
	t.Helper()
	evs, err := collect(t, ctx, a, agent.Input{ThreadID: "t", UserID: "u", Messages: []model.Message{model.UserText(text)}})
	if err != nil {
		t.Fatalf("run: %v", err)
	}
	return evs
}

func latestState(t *testing.T, s store.Store) *thread.State {
	t.Helper()
	cp, err := s.LatestCheckpoint(context.Background(), "t")
	if err != nil {
		t.Fatal(err)
	}
	return cp.State
}

func TestTitleAfterFirstExchangeOnly(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	chat := modeltest.New(
		modeltest.Turn{Text: "Paris.", Usage: &model.Usage{InputTokens: 10, OutputTokens: 2, TotalTokens: 12}},
		modeltest.Turn{Text: "Again."},
	)
	titler := modeltest.New(modeltest.Turn{Text: "France's capital", Usage: &model.Usage{InputTokens: 500, OutputTokens: 5, TotalTokens: 505}})
	s := openStore(t, t.TempDir())
	defer s.Close()
	a := newAgent(t, agent.Options{Model: chat, Store: s, Title: &agent.TitleOptions{Model: titler, MaxWords: 4}})

	evs := runTurn(t, t.Context(), a, "What is the capital of France?")
	if diff := cmp.Diff([]string{"France's capital"}, titleEvents(evs)); diff != "" {
		t.Errorf("title events (-want +got):\n%s", diff)
	}
	if got := latestState(t, s).Title; got != "France's capital" {
		t.Errorf("checkpointed title = %q", got)
	}
	// The prompt is DeerFlow's with the first exchange; the call is not a
	// turn and its tokens are not the run's.
	want := "Generate a concise title (max 4 words) for this conversation.\nUser: What is the capital of France?\n" +
		"Assistant: Paris.\n\nReturn ONLY the title, no quotes, no explanation."
	req := titler.LastRequest()
	if len(req.Messages) != 1 || req.Messages[0].Role != model.RoleUser || req.Messages[0].Content != want ||
		len(req.Tools) != 0 || req.Thinking {
		t.Errorf("title request = %+v", req)
	}
	done := evs[len(evs)-1]
	if done.Turns != 1 || done.Usage == nil || done.Usage.TotalTokens != 12 {
		t.Errorf("done = turns %d usage %+v, want 1 turn and 12 tokens", done.Turns, done.Usage)
	}

	evs = runTurn(t, t.Context(), a, "And of Spain?")
	if got := titleEvents(evs); len(got) != 0 {
		t.Errorf("second turn titled the thread again: %q", got)
	}
	if n := titler.Calls(); n != 1 {
		t.Errorf("title model called %d times, want 1", n)
	}
	if got := latestState(t, s).Title; got != "France's capital" {
		t.Errorf("title after the second turn = %q", got)
	}
}

func TestTitleAlreadySetIsKept(t *testing.T) {
	tests := []struct {
		name  string
		state *thread.State
	}{
		{name: "renamed before the first run", state: &thread.State{Title: "My trip"}},
		{name: "renamed after an earlier exchange", state: &thread.State{Title: "My trip", Messages: []model.Message{
			model.UserText("earlier"), {Role: model.RoleAssistant, Content: "reply"}}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			titler := modeltest.New(modeltest.Turn{Text: "Other"})
			a := newAgent(t, agent.Options{Model: modeltest.New(modeltest.Turn{Text: "ok"}),
				Title: &agent.TitleOptions{Model: titler}})
			var evs []agent.Event
			out, err := a.Invoke(t.Context(), agent.Input{State: tt.state, Messages: []model.Message{model.UserText("hi")}},
				func(ev agent.Event) { evs = append(evs, ev) })
			if err != nil {
				t.Fatal(err)
			}
			if out.State.Title != "My trip" || titler.Calls() != 0 || len(titleEvents(evs)) != 0 {
				t.Errorf("title %q, title calls %d, events %q", out.State.Title, titler.Calls(), titleEvents(evs))
			}
		})
	}
}

func TestTitleDisabled(t *testing.T) {
	a := newAgent(t, agent.Options{Model: modeltest.New(modeltest.Turn{Text: "ok"})})
	var evs []agent.Event
	out, err := a.Invoke(t.Context(), agent.Input{Messages: []model.Message{model.UserText("hi")}},
		func(ev agent.Event) { evs = append(evs, ev) })
	if err != nil {
		t.Fatal(err)
	}
	if out.State.Title != "" || len(titleEvents(evs)) != 0 {
		t.Errorf("title %q, events %q; want none", out.State.Title, titleEvents(evs))
	}
}

func TestFactoryTitleConfig(t *testing.T) {
	tests := []struct {
		name string
		yaml string
		want string
	}{
		{name: "default: fallback from the user's message", yaml: factoryConfig, want: "hi there"},
		{name: "disabled", yaml: factoryConfig + "title:\n  enabled: false\n", want: ""},
		// The fake models answer with their model id: "m2" is the
		// second model's title.
		{name: "title model", yaml: factoryConfig + "title:\n  model_name: second\n", want: "m2"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFactory(t, tt.yaml, nil)
			lead, err := f.Build(t.Context(), agent.Request{ThreadID: "t", UserID: "u"})
			if err != nil {
				t.Fatal(err)
			}
			out, err := lead.Agent.Invoke(t.Context(), lead.Input(model.UserText("hi there")), nil)
			if err != nil {
				t.Fatal(err)
			}
			if out.State.Title != tt.want {
				t.Errorf("title = %q, want %q", out.State.Title, tt.want)
			}
		})
	}
}

func TestTitleCleanupAndFallback(t *testing.T) {
	long := "Please plan a three-week trip through Japan, Korea and Taiwan for two people in spring"
	tests := []struct {
		name     string
		user     string
		title    *modeltest.Turn // nil: no title model
		maxChars int
		want     string
	}{
		{name: "quotes and space stripped", user: "q", title: &modeltest.Turn{Text: "  \"Trip planning\"\n"}, want: "Trip planning"},
		{name: "double then single quotes", user: "q", title: &modeltest.Turn{Text: `"'Trip planning'"`}, want: "Trip planning"},
		{name: "think block removed", user: "q", title: &modeltest.Turn{Text: "<think>\nhmm\n</think>\nTrip planning"}, want: "Trip planning"},
		{name: "cut to max_chars", user: "q", title: &modeltest.Turn{Text: "A very long title that goes on and on"}, maxChars: 12, want: "A very long "},
		{name: "cut by characters, not bytes", user: "q", title: &modeltest.Turn{Text: "日本と韓国と台湾の旅行計画について"}, maxChars: 10, want: "日本と韓国と台湾の旅"},
		{name: "empty answer falls back", user: "Plan my trip", title: &modeltest.Turn{Text: " \"\" "}, want: "Plan my trip"},
		{name: "model error falls back", user: "Plan my trip", title: &modeltest.Turn{Status: 500, Error: "boom"}, want: "Plan my trip"},
		{name: "failure mid-stream falls back", user: "Plan my trip", title: &modeltest.Turn{Text: "Tri", Error: "reset"}, want: "Plan my trip"},
		{name: "no model: short message kept", user: "Plan my trip", want: "Plan my trip"},
		{name: "no model: long message cut at 50 plus ellipsis", user: long,
			want: "Please plan a three-week trip through Japan, Korea..."},
		{name: "no model: ellipsis fits in a small max_chars", user: long, maxChars: 20, want: "Please plan a thr..."},
		{name: "no model: trailing space trimmed before the ellipsis", user: "Please plan a three-week trip through Japan,       Korea", want: "Please plan a three-week trip through Japan,..."},
		{name: "no model: empty message", user: "", want: agent.NewConversationTitle},
		{name: "uploads block left out", user: "<uploaded_files>\nThe user uploaded these files:\n- a.txt (/mnt/user-data/uploads/a.txt)\n</uploaded_files>\n\nSummarise a.txt",
			want: "Summarise a.txt"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			opts := &agent.TitleOptions{MaxChars: tt.maxChars}
			if tt.title != nil {
				opts.Model = modeltest.New(*tt.title)
			}
			a := newAgent(t, agent.Options{Model: modeltest.New(modeltest.Turn{Text: "Sure."}), Title: opts})
			out, err := a.Invoke(t.Context(), agent.Input{Messages: []model.Message{model.UserText(tt.user)}}, nil)
			if err != nil {
				t.Fatal(err)
			}
			if out.State.Title != tt.want {
				t.Errorf("title = %q, want %q", out.State.Title, tt.want)
			}
			if n := len([]rune(out.State.Title)); n > 60 {
				t.Errorf("title has %d characters", n)
			}
		})
	}
}

// blockingModel signals when it is called and then waits for its context,
// recording why it ended.
type blockingModel struct {
	started chan struct{}
	ended   chan error
}

func newBlockingModel() *blockingModel {
	return &blockingModel{started: make(chan struct{}), ended: make(chan error, 1)}
}

func (m *blockingModel) Generate(ctx context.Context, req *model.Request) iter.Seq2[model.Event, error] {
	return func(yield func(model.Event, error) bool) {
		close(m.started)
		<-ctx.Done()
		m.ended <- ctx.Err()
		yield(model.Event{}, ctx.Err())
	}
}

// signalStore closes put after the first checkpoint with the given
// source.
type signalStore struct {
	store.Store
	source string
	put    chan struct{}
	once   sync.Once
}

func (s *signalStore) PutCheckpoint(ctx context.Context, cp *store.Checkpoint) error {
	err := s.Store.PutCheckpoint(ctx, cp)
	if err == nil && cp.Metadata["source"] == s.source {
		s.once.Do(func() { close(s.put) })
	}
	return err
}

func TestTitleCallCancelledWithTheRun(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	titler := newBlockingModel()
	s := openStore(t, t.TempDir())
	defer s.Close()
	saved := &signalStore{Store: s, source: "loop", put: make(chan struct{})}
	a := newAgent(t, agent.Options{Model: modeltest.New(modeltest.Turn{Text: "Sure."}), Store: saved,
		Title: &agent.TitleOptions{Model: titler}})
	go func() {
		<-titler.started
		<-saved.put // the answer's checkpoint
		cancel()
	}()
	// The answer was complete when the title call was cancelled: the run
	// completes and keeps the fallback title.
	evs := runTurn(t, ctx, a, "Plan my trip")
	if err := <-titler.ended; !errors.Is(err, context.Canceled) {
		t.Errorf("title call ended with %v, want context.Canceled", err)
	}
	if done := evs[len(evs)-1]; done.Reason != agent.StopCompleted {
		t.Errorf("reason = %s", done.Reason)
	}
	if got := latestState(t, s).Title; got != "Plan my trip" {
		t.Errorf("checkpointed title = %q", got)
	}
}

func TestTitleCallTimesOut(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	titler := newBlockingModel()
	a := newAgent(t, agent.Options{Model: modeltest.New(modeltest.Turn{Text: "Sure."}),
		Title: &agent.TitleOptions{Model: titler, Timeout: 1}})
	out, err := a.Invoke(t.Context(), agent.Input{Messages: []model.Message{model.UserText("Plan my trip")}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := <-titler.ended; !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("title call ended with %v, want context.DeadlineExceeded", err)
	}
	if out.State.Title != "Plan my trip" {
		t.Errorf("title = %q", out.State.Title)
	}
}

func TestCancelledFirstTurnGetsFallbackTitle(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	chat := newBlockingModel()
	titler := modeltest.New(modeltest.Turn{Text: "never asked"})
	s := openStore(t, t.TempDir())
	defer s.Close()
	a := newAgent(t, agent.Options{Model: chat, Store: s, Title: &agent.TitleOptions{Model: titler}})
	go func() {
		<-chat.started
		cancel()
	}()
	evs, err := collect(t, ctx, a, agent.Input{ThreadID: "t", UserID: "u", Messages: []model.Message{model.UserText("Plan my trip")}})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
	// DeerFlow titles an interrupted first turn from the user's message,
	// without a model call.
	if diff := cmp.Diff([]string{"Plan my trip"}, titleEvents(evs)); diff != "" {
		t.Errorf("title events (-want +got):\n%s", diff)
	}
	if got := latestState(t, s).Title; got != "Plan my trip" || titler.Calls() != 0 {
		t.Errorf("checkpointed title = %q, title calls %d", got, titler.Calls())
	}
}

func TestTitleWhileToolsRun(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	// The first answer calls a tool; the title call runs beside it and
	// the title is in the state by the end of the run.
	m := &fakeModel{steps: []step{calls("echo", `{}`), answer("done")}}
	titler := modeltest.New(modeltest.Turn{Text: "Echo test"})
	a := newAgent(t, agent.Options{Model: m, Tools: []*tool.Tool{textTool("echo", "hi")}, Title: &agent.TitleOptions{Model: titler}})
	out, err := a.Invoke(t.Context(), agent.Input{Messages: []model.Message{model.UserText("run echo")}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if out.State.Title != "Echo test" {
		t.Errorf("title = %q", out.State.Title)
	}
	// The first answer had only tool calls: the prompt's assistant text
	// is empty, as in DeerFlow.
	if got := titler.LastRequest().Messages[0].Content; !strings.Contains(got, "User: run echo\nAssistant: \n") {
		t.Errorf("prompt = %q", got)
	}
}
