package agent_test

import (
	"database/sql"
	"fmt"
	"testing"

	"github.com/antlerhq/antler/agent"
	"github.com/antlerhq/antler/model"
	"github.com/antlerhq/antler/store"
	"github.com/antlerhq/antler/store/sqlite"
	"github.com/antlerhq/antler/thread"
	"github.com/antlerhq/antler/tool"
)

// historyState is a thread of n messages: user questions and answers of
// about 100 characters, with ids as the loop gives them.
func historyState(n int) *thread.State {
	st := &thread.State{}
	for i := range n {
		role := model.RoleUser
		if i%2 == 1 {
			role = model.RoleAssistant
		}
		st.Messages = append(st.Messages, model.Message{ID: fmt.Sprintf("m%d", i), Role: role,
			Content: fmt.Sprintf("message %d of the thread, a sentence of about one hundred characters for its size", i)})
	}
	return st
}

// BenchmarkLoopHistory measures the loop on a thread that already has
// 10, 100 or 1,000 messages, with the agent built per run (as the gateway
// and the CLI build it) and the lead agent's per-step middlewares of
// BenchmarkLoopStep. Each op is one run of two steps (a tool call, then
// the answer); ns/step is the run's time over its two steps. With
// store=sqlite every run starts on a fresh copy of the thread (written,
// and moved from the WAL into the database, outside the timer), loads its
// latest checkpoint and writes three;
// dbB/run is the database's growth over the runs (its page count, outside
// the timer and the thread's setup) per run; cpu-ns/step is the process's
// CPU time (user and system, all threads: GC included) in the timed parts
// over the steps, steadier than ns/step on a shared machine.
//
// store=none-continued is the no-store run of a chat that keeps its
// thread in memory and hands each run's outcome to the next
// (Input.Continue): every run continues the previous run's outcome,
// whose own four messages are cut off (a reslice, in the timer) so that
// every run starts at n messages; the first outcome comes from a run on
// the history, outside the timer. store=none hands every run the same
// history (Input.State), which the run must not modify.
func BenchmarkLoopHistory(b *testing.B) {
	for _, mode := range []string{"none", "none-continued", "sqlite"} {
		for _, n := range []int{10, 100, 1000} {
			b.Run(fmt.Sprintf("store=%s/messages=%d", mode, n), func(b *testing.B) { benchLoopHistory(b, n, mode) })
		}
	}
}

func benchLoopHistory(b *testing.B, n int, mode string) {
	persist, continued := mode == "sqlite", mode == "none-continued"
	history := historyState(n)
	var st store.Store
	var db *sql.DB
	if persist {
		s, err := sqlite.OpenDir(b.TempDir(), sqlite.Options{})
		if err != nil {
			b.Fatal(err)
		}
		defer s.Close()
		st = s
		if db, err = sql.Open("sqlite", s.Path()); err != nil {
			b.Fatal(err)
		}
		defer db.Close()
	}
	var grown int64
	tools := benchTools(10)
	build := func() *agent.Agent {
		a, err := agent.New(agent.Options{Model: benchModel{}, Tools: tools, SystemPrompt: "bench", Store: st,
			ToolMiddlewares:  []tool.Middleware{agent.Clarification()},
			ModelMiddlewares: []tool.ModelMiddleware{agent.DanglingToolCalls()}})
		if err != nil {
			b.Fatal(err)
		}
		return a
	}
	// prev is the outcome the next run continues (store=none-continued).
	var prev *agent.Outcome
	if continued {
		out, err := build().Invoke(b.Context(), agent.Input{ThreadID: "t", UserID: "u", State: history,
			Messages: []model.Message{model.UserText("go")}}, nil)
		if err != nil {
			b.Fatal(err)
		}
		prev = out
		prev.State.Messages = prev.State.Messages[:n]
	}
	// cpu is the process's CPU time in the timed parts: on a busy
	// machine it says more than the wall time.
	var cpu, mark int64
	stop := func() { b.StopTimer(); cpu += cpuTime() - mark }
	start := func() { mark = cpuTime(); b.StartTimer() }
	b.ReportAllocs()
	i := 0
	mark = cpuTime()
	for b.Loop() {
		i++
		in := agent.Input{ThreadID: "t", UserID: "u", Messages: []model.Message{model.UserText("go")}, State: history}
		if continued {
			in.State, in.Continue = nil, prev
		}
		if persist {
			stop()
			in.ThreadID, in.State = fmt.Sprintf("t%d", i), nil
			if err := st.CreateThread(b.Context(), &store.Thread{ID: in.ThreadID, UserID: "u"}); err != nil {
				b.Fatal(err)
			}
			if err := st.PutCheckpoint(b.Context(), &store.Checkpoint{ThreadID: in.ThreadID, State: history}); err != nil {
				b.Fatal(err)
			}
			// The copy's rows go from the WAL into the database here, not
			// in a timed write: a user's run never follows a write of its
			// whole history.
			if _, err := db.ExecContext(b.Context(), `PRAGMA wal_checkpoint(PASSIVE)`); err != nil {
				b.Fatal(err)
			}
			start()
		}
		a := build()
		before := dbSize(b, db)
		out, err := a.Invoke(b.Context(), in, nil)
		if err != nil {
			b.Fatal(err)
		}
		if continued {
			prev = out
			prev.State.Messages = prev.State.Messages[:n]
		}
		if persist {
			stop()
			grown += dbSize(b, db) - before
			start()
		}
	}
	cpu += cpuTime() - mark
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*2), "ns/step")
	if cpu > 0 {
		b.ReportMetric(float64(cpu)/float64(b.N*2), "cpu-ns/step")
	}
	if persist {
		b.ReportMetric(float64(grown)/float64(b.N), "dbB/run")
	}
}

// dbSize is the size of the database in bytes (page count times page
// size, WAL included), 0 without one.
func dbSize(b *testing.B, db *sql.DB) int64 {
	if db == nil {
		return 0
	}
	var pages, size int64
	if err := db.QueryRowContext(b.Context(), `PRAGMA page_count`).Scan(&pages); err != nil {
		b.Fatal(err)
	}
	if err := db.QueryRowContext(b.Context(), `PRAGMA page_size`).Scan(&size); err != nil {
		b.Fatal(err)
	}
	return pages * size
}

// BenchmarkLoopHistoryCold is BenchmarkLoopHistory with SQLite on a store
// opened right before the run (outside the timer): the run's
// LatestCheckpoint finds nothing in the store's memory and reads and
// decodes the thread's messages, as the first run of a thread after a
// restart does.
func BenchmarkLoopHistoryCold(b *testing.B) {
	for _, n := range []int{10, 100, 1000} {
		b.Run(fmt.Sprintf("store=sqlite/messages=%d", n), func(b *testing.B) { benchLoopHistoryCold(b, n) })
	}
}

func benchLoopHistoryCold(b *testing.B, n int) {
	history := historyState(n)
	dir := b.TempDir()
	open := func() *sqlite.Store {
		s, err := sqlite.OpenDir(dir, sqlite.Options{})
		if err != nil {
			b.Fatal(err)
		}
		return s
	}
	tools := benchTools(10)
	var cpu, mark int64
	b.ReportAllocs()
	i := 0
	mark = cpuTime()
	for b.Loop() {
		b.StopTimer()
		cpu += cpuTime() - mark
		i++
		tid := fmt.Sprintf("t%d", i)
		s := open()
		if err := s.CreateThread(b.Context(), &store.Thread{ID: tid, UserID: "u"}); err != nil {
			b.Fatal(err)
		}
		if err := s.PutCheckpoint(b.Context(), &store.Checkpoint{ThreadID: tid, State: history}); err != nil {
			b.Fatal(err)
		}
		if err := s.Close(); err != nil {
			b.Fatal(err)
		}
		s = open()
		a, err := agent.New(agent.Options{Model: benchModel{}, Tools: tools, SystemPrompt: "bench", Store: s,
			ToolMiddlewares:  []tool.Middleware{agent.Clarification()},
			ModelMiddlewares: []tool.ModelMiddleware{agent.DanglingToolCalls()}})
		if err != nil {
			b.Fatal(err)
		}
		mark = cpuTime()
		b.StartTimer()
		if _, err := a.Invoke(b.Context(), agent.Input{ThreadID: tid, UserID: "u", Messages: []model.Message{model.UserText("go")}}, nil); err != nil {
			b.Fatal(err)
		}
		b.StopTimer()
		cpu += cpuTime() - mark
		if err := s.Close(); err != nil {
			b.Fatal(err)
		}
		mark = cpuTime()
		b.StartTimer()
	}
	cpu += cpuTime() - mark
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*2), "ns/step")
	if cpu > 0 {
		b.ReportMetric(float64(cpu)/float64(b.N*2), "cpu-ns/step")
	}
}

// BenchmarkLoopHistoryGrowing is store=none-continued without the
// reslice: a chat that keeps its thread in memory, each run continuing
// the previous outcome, its thread growing by four messages a run from
// n (to n+4·b.N: compare rows run with the same -benchtime). Its
// B/op includes the buffer's moves when its spare room runs out.
func BenchmarkLoopHistoryGrowing(b *testing.B) {
	for _, n := range []int{10, 100, 1000} {
		b.Run(fmt.Sprintf("store=none-continued/messages=%d", n), func(b *testing.B) {
			tools := benchTools(10)
			build := func() *agent.Agent {
				a, err := agent.New(agent.Options{Model: benchModel{}, Tools: tools, SystemPrompt: "bench",
					ToolMiddlewares:  []tool.Middleware{agent.Clarification()},
					ModelMiddlewares: []tool.ModelMiddleware{agent.DanglingToolCalls()}})
				if err != nil {
					b.Fatal(err)
				}
				return a
			}
			in := agent.Input{ThreadID: "t", UserID: "u", Messages: []model.Message{model.UserText("go")}}
			in.State = historyState(n)
			prev, err := build().Invoke(b.Context(), in, nil)
			if err != nil {
				b.Fatal(err)
			}
			in.State = nil
			b.ReportAllocs()
			mark := cpuTime()
			for b.Loop() {
				in.Continue = prev
				if prev, err = build().Invoke(b.Context(), in, nil); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(cpuTime()-mark)/float64(b.N*2), "cpu-ns/step")
			b.ReportMetric(float64(len(prev.State.Messages)), "messages-at-end")
		})
	}
}
