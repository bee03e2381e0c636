package agent_test

import (
	"context"
	"encoding/json"
	"fmt"
	"iter"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/antlerhq/antler/agent"
	"github.com/antlerhq/antler/model"
	"github.com/antlerhq/antler/store"
	"github.com/antlerhq/antler/store/sqlite"
	"github.com/antlerhq/antler/tool"
)

// benchModel answers with zero latency: a call to tool t0 when the last
// message is the user's, a short answer otherwise.
type benchModel struct{}

var (
	benchCall = &model.Response{Message: model.Message{Role: model.RoleAssistant,
		ToolCalls: []model.ToolCall{{ID: "call_1", Name: "t0", Arguments: json.RawMessage(`{"path":"/mnt/user-data/workspace"}`)}}},
		FinishReason: model.FinishToolCalls}
	benchAnswer = &model.Response{Message: model.Message{Role: model.RoleAssistant, Content: "done"}, FinishReason: model.FinishStop}
)

func (benchModel) Generate(ctx context.Context, req *model.Request) iter.Seq2[model.Event, error] {
	return func(yield func(model.Event, error) bool) {
		if req.Messages[len(req.Messages)-1].Role == model.RoleUser {
			yield(model.Event{Response: benchCall}, nil)
			return
		}
		if yield(model.Event{TextDelta: "done"}, nil) {
			yield(model.Event{Response: benchAnswer}, nil)
		}
	}
}

func benchTools(n int) []*tool.Tool {
	out := make([]*tool.Tool, n)
	for i := range n {
		out[i] = textTool(fmt.Sprintf("t%d", i), "ok")
	}
	return out
}

// BenchmarkLoopStep measures the harness overhead per step (one model
// call, plus one tool call every other step) with a zero-latency model,
// no persistence, and 1, 10 or 100 tools bound. Each op is one run of two
// steps.
func BenchmarkLoopStep(b *testing.B) {
	for _, n := range []int{1, 10, 100} {
		b.Run(fmt.Sprintf("tools=%d", n), func(b *testing.B) {
			a, err := agent.New(agent.Options{Model: benchModel{}, Tools: benchTools(n), SystemPrompt: "bench",
				ToolMiddlewares:  []tool.Middleware{agent.Clarification()},
				ModelMiddlewares: []tool.ModelMiddleware{agent.DanglingToolCalls()}})
			if err != nil {
				b.Fatal(err)
			}
			in := agent.Input{ThreadID: "t", UserID: "u", Messages: []model.Message{model.UserText("go")}}
			b.ReportAllocs()
			for b.Loop() {
				if _, err := a.Invoke(b.Context(), in, nil); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*2), "ns/step")
		})
	}
}

// BenchmarkLoopStepSQLite is BenchmarkLoopStep with a checkpoint after
// every step in SQLite (new thread per run: thread, run and three
// checkpoints written).
func BenchmarkLoopStepSQLite(b *testing.B) {
	s, err := sqlite.OpenDir(b.TempDir(), sqlite.Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	a, err := agent.New(agent.Options{Model: benchModel{}, Tools: benchTools(10), Store: s})
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		i++
		in := agent.Input{ThreadID: fmt.Sprintf("t%d", i), UserID: "u", Messages: []model.Message{model.UserText("go")}}
		if _, err := a.Invoke(b.Context(), in, nil); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*2), "ns/step")
}

// BenchmarkConcurrentThreads runs 100 threads at once, each one run of
// two steps, with and without SQLite checkpointing.
func BenchmarkConcurrentThreads(b *testing.B) {
	for _, persist := range []bool{false, true} {
		b.Run(fmt.Sprintf("sqlite=%v", persist), func(b *testing.B) {
			var st store.Store
			if persist {
				s, err := sqlite.OpenDir(b.TempDir(), sqlite.Options{})
				if err != nil {
					b.Fatal(err)
				}
				defer s.Close()
				st = s
			}
			a, err := agent.New(agent.Options{Model: benchModel{}, Tools: benchTools(10), Store: st})
			if err != nil {
				b.Fatal(err)
			}
			var seq atomic.Int64
			b.ReportAllocs()
			for b.Loop() {
				var wg sync.WaitGroup
				for range 100 {
					wg.Go(func() {
						in := agent.Input{ThreadID: fmt.Sprintf("t%d", seq.Add(1)), UserID: "u", Messages: []model.Message{model.UserText("go")}}
						if _, err := a.Invoke(context.Background(), in, nil); err != nil {
							b.Error(err)
						}
					})
				}
				wg.Wait()
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*100), "ns/run")
		})
	}
}
