package agent_test

import (
	"context"
	"sync"
	"testing"

	"github.com/antlerhq/antler/agent"
	"github.com/antlerhq/antler/builtin"
	"github.com/antlerhq/antler/config"
	"github.com/antlerhq/antler/model"
	"github.com/antlerhq/antler/model/modeltest"
	"github.com/antlerhq/antler/toolset"
)

// runEnds records RunEnded calls.
type runEnds struct {
	mu    sync.Mutex
	calls []string // "thread:reason:error?"
}

func (r *runEnds) record(in agent.Input, out *agent.Outcome, err error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	failed := "ok"
	if err != nil {
		failed = "err"
	}
	r.calls = append(r.calls, in.ThreadID+":"+string(out.Reason)+":"+failed)
}

// TestRunEnded_calledForEveryOutcome checks that Options.RunEnded runs
// once at the end of a completed, a failed and a cancelled run (the CLI
// closes the thread's browser there).
func TestRunEnded_calledForEveryOutcome(t *testing.T) {
	cancelled, cancel := context.WithCancel(t.Context())
	cancel()
	tests := []struct {
		name  string
		turn  modeltest.Turn
		ctx   context.Context
		want  string
		isErr bool
	}{
		{"completed", modeltest.Turn{Text: "done"}, t.Context(), "t1:" + string(agent.StopCompleted) + ":ok", false},
		{"model fails", modeltest.Turn{Status: 500, Error: "boom"}, t.Context(), "t1:", true},
		{"cancelled", modeltest.Turn{Text: "never"}, cancelled, "t1:", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var ends runEnds
			a, err := agent.New(agent.Options{Model: modeltest.New(tt.turn), RunEnded: ends.record})
			if err != nil {
				t.Fatal(err)
			}
			_, runErr := a.Invoke(tt.ctx, agent.Input{ThreadID: "t1", Messages: []model.Message{model.UserText("hi")}}, nil)
			if (runErr != nil) != tt.isErr {
				t.Fatalf("Invoke error = %v, want error %v", runErr, tt.isErr)
			}
			if len(ends.calls) != 1 {
				t.Fatalf("RunEnded calls = %v, want one", ends.calls)
			}
			got := ends.calls[0]
			if tt.isErr {
				if got[len(got)-4:] != ":err" || got[:3] != tt.want {
					t.Errorf("RunEnded got %q, want thread t1 with the run's error", got)
				}
			} else if got != tt.want {
				t.Errorf("RunEnded got %q, want %q", got, tt.want)
			}
		})
	}
}

// TestRunEnded_factoryPassesIt checks that the lead agent built by the
// factory calls FactoryOptions.RunEnded for its thread.
func TestRunEnded_factoryPassesIt(t *testing.T) {
	cfg, err := config.Parse("config.yaml", []byte(factoryConfig), nil)
	if err != nil {
		t.Fatal(err)
	}
	var ends runEnds
	asm := &toolset.Assembler{Registry: testRegistry(), Env: &toolset.Env{Config: cfg},
		Builtins: toolset.Builtins{AskClarification: builtin.AskClarification()}}
	f, err := agent.NewFactory(agent.FactoryOptions{Assembler: asm, RunEnded: ends.record})
	if err != nil {
		t.Fatal(err)
	}
	lead, err := f.Build(t.Context(), agent.Request{ThreadID: "th", UserID: "u"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := lead.Agent.Invoke(t.Context(), lead.Input(model.UserText("hi")), nil); err != nil {
		t.Fatal(err)
	}
	if len(ends.calls) != 1 || ends.calls[0][:3] != "th:" {
		t.Errorf("RunEnded calls = %v, want one for thread th", ends.calls)
	}
}
