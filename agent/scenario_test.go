package agent_test

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"iter"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"go.yaml.in/yaml/v3"
	"golang.org/x/tools/txtar"

	"github.com/antlerhq/antler/agent"
	"github.com/antlerhq/antler/builtin"
	"github.com/antlerhq/antler/config"
	"github.com/antlerhq/antler/model"
	"github.com/antlerhq/antler/model/modeltest"
	"github.com/antlerhq/antler/thread"
	"github.com/antlerhq/antler/tool"
	"github.com/antlerhq/antler/toolset"
	"github.com/antlerhq/antler/vpath"
)

var update = flag.Bool("update", false, "rewrite the transcript sections of testdata/scenarios/*.txtar")

// TestScenarios runs every testdata/scenarios/*.txtar file through the
// lead agent as the Factory builds it (the real tool and model middleware
// chain, a SQLite store) and compares the run's transcript with the file's
// transcript section. With -update it rewrites those sections instead.
//
// A scenario file holds, after a comment saying what it shows:
//
//	-- config.yaml --   optional: DeerFlow config.yaml, appended to a models
//	                    section naming the scripted model. Fake tools are
//	                    entries with use: scenario:tool and these keys:
//	                    result (text; {key} is replaced by the string
//	                    argument key), artifacts (a list, with the same
//	                    replacement), fail (the handler returns this error),
//	                    panic (the handler panics with this value).
//	-- options --       optional YAML, see scenarioOptions.
//	-- history --       optional: the thread's messages before the first
//	                    run, one JSON model.Message a line.
//	-- outputs/NAME --  optional: a file written to the thread's outputs
//	                    folder (for present_files).
//	-- script --        the model's turns: modeltest's JSON Script.
//	-- input --         the user's message; each input section is one
//	                    run on the same thread, in order.
//	-- transcript --    the expected transcript (scenarioTranscript).
func TestScenarios(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("testdata", "scenarios", "*.txtar"))
	if err != nil {
		t.Fatal(err)
	}
	if len(files) == 0 {
		t.Fatal("no scenarios in testdata/scenarios")
	}
	for _, file := range files {
		t.Run(strings.TrimSuffix(filepath.Base(file), ".txtar"), func(t *testing.T) {
			t.Parallel()
			ar, err := txtar.ParseFile(file)
			if err != nil {
				t.Fatal(err)
			}
			sc := parseScenario(t, ar)
			if sc.opts.Skip != "" {
				t.Skip(sc.opts.Skip)
			}
			got := runScenario(t, sc)
			if *update {
				setSection(ar, "transcript", got)
				if err := os.WriteFile(file, txtar.Format(ar), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			if diff := cmp.Diff(strings.Split(sc.transcript, "\n"), strings.Split(got, "\n")); diff != "" {
				t.Errorf("%s: transcript (-want +got):\n%s\n(go test ./agent -run TestScenarios -update rewrites it)", file, diff)
			}
		})
	}
}

// scenarioOptions is the options section.
type scenarioOptions struct {
	// MaxTurns is FactoryOptions.MaxTurns (0: the default).
	MaxTurns int `yaml:"max_turns"`
	// NonInteractive and Context (the run context) go into
	// agent.Request.
	NonInteractive bool           `yaml:"non_interactive"`
	Context        map[string]any `yaml:"context"`
	// Requests adds to the transcript, before each model answer, the
	// messages the model received after its previous answer, as the
	// model middlewares left them.
	Requests bool `yaml:"requests"`
	// Checkpoints adds the checkpoints each run wrote.
	Checkpoints bool `yaml:"checkpoints"`
	// State adds the thread state after each run, less its messages.
	State bool `yaml:"state"`
	// Skip names a known bug: the scenario, whose transcript says what
	// should happen, is skipped (and not rewritten by -update) until the
	// bug is fixed.
	Skip string `yaml:"skip"`
}

type scenario struct {
	config     string
	opts       scenarioOptions
	history    []model.Message
	outputs    map[string]string
	script     modeltest.Script
	inputs     []string
	transcript string
}

func parseScenario(t *testing.T, ar *txtar.Archive) *scenario {
	t.Helper()
	sc := &scenario{outputs: map[string]string{}}
	seen := map[string]bool{}
	for _, f := range ar.Files {
		if seen[f.Name] && f.Name != "input" {
			t.Fatalf("section %q appears twice", f.Name)
		}
		seen[f.Name] = true
		switch name := f.Name; {
		case name == "config.yaml":
			sc.config = string(f.Data)
		case name == "options":
			dec := yaml.NewDecoder(bytes.NewReader(f.Data))
			dec.KnownFields(true)
			if err := dec.Decode(&sc.opts); err != nil {
				t.Fatalf("options: %v", err)
			}
		case name == "history":
			for i, line := range strings.Split(strings.TrimSpace(string(f.Data)), "\n") {
				var m model.Message
				if err := json.Unmarshal([]byte(line), &m); err != nil {
					t.Fatalf("history line %d: %v", i+1, err)
				}
				sc.history = append(sc.history, m)
			}
		case strings.HasPrefix(name, "outputs/"):
			sc.outputs[strings.TrimPrefix(name, "outputs/")] = string(f.Data)
		case name == "script":
			s, err := modeltest.ParseScript(f.Data)
			if err != nil {
				t.Fatal(err)
			}
			sc.script = s
		case name == "input":
			sc.inputs = append(sc.inputs, strings.TrimSuffix(string(f.Data), "\n"))
		case name == "transcript":
			sc.transcript = string(f.Data)
		default:
			t.Fatalf("unknown section %q", name)
		}
	}
	if len(sc.inputs) == 0 || !seen["script"] {
		t.Fatal("a scenario needs a script and at least one input")
	}
	if !seen["transcript"] && !*update {
		t.Fatal("no transcript section (run with -update to write one)")
	}
	return sc
}

// setSection replaces the data of the named section, appending it when
// it is missing.
func setSection(ar *txtar.Archive, name, data string) {
	for i := range ar.Files {
		if ar.Files[i].Name == name {
			ar.Files[i].Data = []byte(data)
			return
		}
	}
	ar.Files = append(ar.Files, txtar.File{Name: name, Data: []byte(data)})
}

const (
	scenarioThread = "thread-1"
	scenarioUser   = "user-1"
	scenarioModels = "models:\n  - name: scripted\n    use: scenario:model\n    model: scripted\n"
)

// runScenario builds the lead agent with the scenario's config and runs
// each input, returning the transcript.
func runScenario(t *testing.T, sc *scenario) string {
	t.Helper()
	home := t.TempDir()
	cfg, err := config.Parse("config.yaml", []byte(scenarioModels+sc.config), func(string) (string, bool) { return "", false })
	if err != nil {
		t.Fatal(err)
	}
	layout, err := vpath.New(vpath.Options{Home: home})
	if err != nil {
		t.Fatal(err)
	}
	if len(sc.outputs) > 0 {
		tp, err := layout.EnsureThreadDirs(scenarioUser, scenarioThread)
		if err != nil {
			t.Fatal(err)
		}
		for name, data := range sc.outputs {
			if err := os.WriteFile(filepath.Join(tp.Outputs, name), []byte(data), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	chat := modeltest.FromScript(sc.script)
	reg := toolset.NewRegistry()
	var tr scenarioTranscript
	reg.RegisterModel(func(ctx context.Context, env *toolset.Env, m config.Model) (model.ChatModel, error) {
		return &watchedModel{ChatModel: chat, tr: &tr, show: sc.opts.Requests}, nil
	}, "scenario:model")
	reg.RegisterTool(fakeScenarioTool, "scenario:tool")
	asm := &toolset.Assembler{Registry: reg, Env: &toolset.Env{Config: cfg}, Builtins: toolset.Builtins{
		PresentFiles:     builtin.NewPresentFiles(layout),
		AskClarification: builtin.AskClarification(),
	}}
	st := openStore(t, filepath.Join(home, "db"))
	t.Cleanup(func() { st.Close() })
	f, err := agent.NewFactory(agent.FactoryOptions{Assembler: asm, Store: st, MaxTurns: sc.opts.MaxTurns,
		Now: func() time.Time { return time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC) }})
	if err != nil {
		t.Fatal(err)
	}

	for i, text := range sc.inputs {
		runID := fmt.Sprintf("run-%d", i+1)
		lead, err := f.Build(t.Context(), agent.Request{ThreadID: scenarioThread, UserID: scenarioUser, RunID: runID,
			NonInteractive: sc.opts.NonInteractive, Context: sc.opts.Context})
		if err != nil {
			t.Fatal(err)
		}
		if i == 0 {
			tr.line("tools: %s", strings.Join(lead.Agent.Tools(), ", "))
		}
		tr.line("=== %s", runID)
		tr.block("user: ", text)
		in := lead.Input(model.UserText(text))
		if i == 0 && len(sc.history) > 0 {
			in.State = &thread.State{Messages: sc.history}
		}
		// Run's iterator calls the model on this goroutine, so the
		// requests watchedModel writes interleave with the events.
		for ev := range lead.Agent.Run(t.Context(), in) {
			tr.event(ev)
		}
		if sc.opts.State {
			cp, err := st.LatestCheckpoint(t.Context(), scenarioThread)
			if err != nil {
				t.Fatal(err)
			}
			var end map[string]json.RawMessage
			if err := json.Unmarshal([]byte(mustJSON(cp.State)), &end); err != nil {
				t.Fatal(err)
			}
			delete(end, "messages")
			tr.line("state at end: %s", mustJSON(end))
		}
		if sc.opts.Checkpoints {
			cps, err := st.ListCheckpoints(t.Context(), scenarioThread, 0, "")
			if err != nil {
				t.Fatal(err)
			}
			tr.line("checkpoints of %s:", runID)
			for _, cp := range slices.Backward(cps) {
				if cp.RunID != runID {
					continue
				}
				tr.line("  step %d %s %v messages=%d", cp.Step, cp.RunID, cp.Metadata["source"], len(cp.State.Messages))
			}
		}
	}
	// Host paths (thread_data, error texts) differ from run to run.
	return strings.ReplaceAll(tr.String(), home, "$HOME")
}

// fakeScenarioTool builds a use: scenario:tool entry.
func fakeScenarioTool(ctx context.Context, env *toolset.Env, e config.ToolEntry) (*tool.Tool, error) {
	var spec struct {
		Result    string   `yaml:"result"`
		Artifacts []string `yaml:"artifacts"`
		Fail      string   `yaml:"fail"`
		Panic     string   `yaml:"panic"`
	}
	b, err := yaml.Marshal(e.Options)
	if err != nil {
		return nil, err
	}
	dec := yaml.NewDecoder(bytes.NewReader(b))
	dec.KnownFields(true)
	if err := dec.Decode(&spec); err != nil && len(e.Options) > 0 {
		return nil, fmt.Errorf("tools[%d]: %w", e.Index, err)
	}
	return &tool.Tool{Name: e.Name, Description: "Scenario tool " + e.Name + ".",
		InputSchema: json.RawMessage(`{"type":"object"}`),
		Handler: func(ctx context.Context, call *tool.Call, args json.RawMessage) (*tool.Result, error) {
			var in map[string]any
			_ = json.Unmarshal(args, &in)
			fill := func(s string) string {
				for k, v := range in {
					if str, ok := v.(string); ok {
						s = strings.ReplaceAll(s, "{"+k+"}", str)
					}
				}
				return s
			}
			switch {
			case spec.Panic != "":
				panic(fill(spec.Panic))
			case spec.Fail != "":
				return nil, fmt.Errorf("%s", fill(spec.Fail))
			}
			res := tool.Text(fill(spec.Result))
			if len(spec.Artifacts) > 0 {
				u := &thread.Update{}
				for _, a := range spec.Artifacts {
					u.Artifacts = append(u.Artifacts, fill(a))
				}
				res.Update = u
			}
			return res, nil
		}}, nil
}

// watchedModel writes what the model receives into the transcript.
type watchedModel struct {
	model.ChatModel
	tr   *scenarioTranscript
	show bool
}

func (m *watchedModel) Generate(ctx context.Context, req *model.Request) iter.Seq2[model.Event, error] {
	m.tr.calls++
	if m.show {
		m.tr.request(req)
	}
	return m.ChatModel.Generate(ctx, req)
}

// scenarioTranscript renders a run's events as text, one line each:
//
//	user: <text>                     the input
//	model call N sees:               (options.requests) the messages the
//	  <role> [name] [id]: <content>  model got after its previous answer
//	assistant: <text>                an answer; its tool calls follow as
//	  call <id> <name> <args>        lines, and meta (stop_reason) as JSON
//	tool_start <id> <name> <args>
//	tool_end <id> <name> [error]: <content>
//	  meta <status>/<error_type>/<next action> (<source>)
//	state <id> <name> <update JSON>
//	state TitleMiddleware.after_model <update JSON>   the thread's title
//	clarification <id> <name> <human_input JSON>
//	error: <text>
//	done: <reason> turns=<n>
//
// Message deltas are not listed; a difference between the streamed text
// and the final message is ("streamed: ..."). The tool events of one step
// are listed by call, in call order, since parallel calls run in any
// order; everything else is in the order the run emitted it. Durations,
// message ids and token usage are left out.
type scenarioTranscript struct {
	b        strings.Builder
	calls    int
	streamed strings.Builder
	order    map[string]int // tool call id -> position in its message
	pending  []agent.Event  // the current step's tool events
}

func (tr *scenarioTranscript) String() string {
	tr.flush()
	return tr.b.String()
}

func (tr *scenarioTranscript) line(format string, args ...any) {
	fmt.Fprintf(&tr.b, format, args...)
	tr.b.WriteByte('\n')
}

// block writes prefix and text, indenting the text's further lines.
func (tr *scenarioTranscript) block(prefix, text string) {
	if text == "" {
		tr.b.WriteString(strings.TrimRight(prefix, " ") + "\n")
		return
	}
	indent := strings.Repeat(" ", len(prefix)-len(strings.TrimLeft(prefix, " "))+4)
	for i, l := range strings.Split(text, "\n") {
		switch {
		case i == 0:
			tr.b.WriteString(prefix + l)
		case l != "":
			tr.b.WriteString(indent + l)
		}
		tr.b.WriteByte('\n')
	}
}

func (tr *scenarioTranscript) request(req *model.Request) {
	tr.flush()
	start := 0
	for i, m := range req.Messages {
		if m.Role == model.RoleAssistant {
			start = i + 1
		}
	}
	tr.line("model call %d sees:", tr.calls)
	for _, m := range req.Messages[start:] {
		if m.Role == model.RoleSystem {
			continue
		}
		head := "  " + string(m.Role)
		if m.ToolCallID != "" {
			head += " " + m.ToolCallID
		}
		if m.Name != "" {
			head += " " + m.Name
		}
		if m.Status == "error" {
			head += " error"
		}
		tr.block(head+": ", m.Content)
	}
}

func (tr *scenarioTranscript) event(ev agent.Event) {
	switch ev.Type {
	case agent.EventMessageDelta:
		tr.streamed.WriteString(ev.Delta)
		return
	case agent.EventToolStart, agent.EventToolEnd, agent.EventTaskStarted, agent.EventTaskRunning,
		agent.EventTaskCompleted, agent.EventTaskFailed:
		tr.pending = append(tr.pending, ev)
		return
	}
	tr.flush()
	switch ev.Type {
	case agent.EventMessage:
		m := ev.Message
		if m.Reasoning != "" {
			tr.block("assistant reasoning: ", m.Reasoning)
		}
		tr.block("assistant: ", m.Content)
		if s := tr.streamed.String(); s != m.Content {
			tr.block("  streamed: ", s)
		}
		tr.streamed.Reset()
		tr.order = map[string]int{}
		for i, tc := range m.ToolCalls {
			tr.order[tc.ID] = i
			tr.line("  call %s %s %s", tc.ID, tc.Name, compactJSON(tc.Arguments))
		}
		if len(m.Meta) > 0 {
			tr.line("  meta %s", mustJSON(m.Meta))
		}
	case agent.EventState:
		if ev.ToolCallID == "" { // the title, a summarization
			tr.line("state %s %s", ev.Name, mustJSON(stableUpdate(ev.Update)))
			break
		}
		tr.line("state %s %s %s", ev.ToolCallID, ev.Name, mustJSON(stableUpdate(ev.Update)))
	case agent.EventClarification:
		tr.line("clarification %s %s %s", ev.ToolCallID, ev.Name, mustJSON(ev.Data))
	case agent.EventError:
		tr.line("error: %s", ev.Error)
	case agent.EventDone:
		tr.line("done: %s turns=%d", ev.Reason, ev.Turns)
	default:
		tr.line("%s %s %s %s", ev.Type, ev.ToolCallID, ev.Name, mustJSON(ev.Data))
	}
}

// stableUpdate is u with the messages' ids (but the remove-all marker's)
// and token usage left out, as elsewhere in transcripts.
func stableUpdate(u *thread.Update) *thread.Update {
	if u == nil || len(u.Messages) == 0 {
		return u
	}
	c := *u
	c.Messages = make([]model.Message, len(u.Messages))
	for i, m := range u.Messages {
		if m.ID != model.RemoveAllID {
			m.ID = ""
		}
		m.Usage = nil
		c.Messages[i] = m
	}
	return &c
}

// flush writes the pending tool events, grouped by call in call order.
func (tr *scenarioTranscript) flush() {
	slices.SortStableFunc(tr.pending, func(a, b agent.Event) int { return tr.order[a.ToolCallID] - tr.order[b.ToolCallID] })
	for _, ev := range tr.pending {
		switch ev.Type {
		case agent.EventToolStart:
			tr.line("tool_start %s %s %s", ev.ToolCallID, ev.Name, compactJSON(ev.Arguments))
		case agent.EventToolEnd:
			head := fmt.Sprintf("tool_end %s %s", ev.ToolCallID, ev.Name)
			if ev.IsError {
				head += " error"
			}
			tr.block(head+": ", ev.Message.Content)
			for _, k := range slices.Sorted(maps.Keys(ev.Message.Meta)) {
				v := ev.Message.Meta[k]
				if k != agent.ToolMetaKey {
					tr.line("  meta %s %s", k, mustJSON(v))
					continue
				}
				meta, _ := v.(map[string]any)
				et, _ := meta["error_type"].(string)
				tr.line("  meta %v/%s/%v (%v)", meta["status"], cmpOr(et, "-"), meta["recommended_next_action"], meta["source"])
			}
		default:
			tr.line("%s %s %s %s", ev.Type, ev.ToolCallID, ev.Name, mustJSON(ev.Data))
		}
	}
	tr.pending = nil
}

func cmpOr(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

func compactJSON(raw json.RawMessage) string {
	var b bytes.Buffer
	if err := json.Compact(&b, raw); err != nil {
		return string(raw) // malformed arguments are shown as sent
	}
	return b.String()
}

func mustJSON(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprintf("<%v>", err)
	}
	return string(b)
}
