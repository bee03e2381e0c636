package gateway_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/uuid"

	"github.com/antlerhq/antler/model"
	"github.com/antlerhq/antler/model/modeltest"
)

// summarisingModel answers every summary request with the same text
// (which must not hide a summarization) and the other requests with
// answers in order.
func summarisingModel(answers ...modeltest.Turn) *modeltest.Model {
	var mu sync.Mutex
	next := 0
	play := func(req *model.Request) modeltest.Turn {
		if last := modeltest.LastMessage(req); strings.Contains(last.Content, "<new_messages>") {
			return modeltest.Turn{Text: "SUMMARY"}
		}
		mu.Lock()
		defer mu.Unlock()
		if next >= len(answers) {
			return modeltest.Turn{Text: "unexpected call"}
		}
		next++
		return answers[next-1]
	}
	turns := make([]modeltest.Turn, 4*len(answers))
	for i := range turns {
		turns[i].Func = play
	}
	return modeltest.New(turns...)
}

func reportCall(name string) modeltest.Turn {
	args, _ := json.Marshal(map[string]string{"name": name, "text": "x"})
	return modeltest.Turn{Text: strings.TrimSuffix(name, ".md"), ToolCalls: []model.ToolCall{{Name: "make_report", Arguments: args}}}
}

type pageRows struct {
	Data    []map[string]any `json:"data"`
	HasMore bool             `json:"has_more"`
	Next    *int             `json:"next_before_seq"`
}

// rowText is "type:text" of a message dict.
func rowText(d map[string]any) string {
	text := ""
	switch c := d["content"].(type) {
	case string:
		text = c
	case []any:
		for _, b := range c {
			if s, ok := b.(map[string]any)["text"].(string); ok {
				text += s
			}
		}
	}
	return d["type"].(string) + ":" + text
}

// TestVisibleHistoryAfterSummarization: after a reload the frontend lists
// the thread from messages/page, which keeps the summarised-away turns in
// their places, as DeerFlow's message log does, with seq values that do
// not move; history (the checkpoint's state, what the model is sent)
// stays compacted, as DeerFlow's does. The thread is summarised once in
// the second run and three more times in the third, once with the
// current request kept ahead of removed tool steps.
func TestVisibleHistoryAfterSummarization(t *testing.T) {
	const summarise = "summarization:\n  enabled: true\n  trigger: {type: messages, value: 4}\n  keep: {type: messages, value: 2}\n"
	want := [][]string{
		{"human:q1", "ai:a1"},
		{"human:q2", "ai:r2", "tool:wrote /mnt/user-data/outputs/r2.md", "ai:a2"},
		{"human:q3", "ai:r3", "tool:wrote /mnt/user-data/outputs/r3.md", "ai:r4", "tool:wrote /mnt/user-data/outputs/r4.md", "ai:a3"},
	}
	for _, tc := range []struct {
		name   string
		config string
		// pageEachRun reads the page after every run (the rebuild then
		// starts from the previous one); otherwise only at the end.
		pageEachRun bool
		summaries   []int // summarization updates per run
		state       []string
	}{
		{"summarised, paged after every run", summarise, true, []int{0, 1, 3},
			[]string{"human:q3", "ai:r4", "tool:wrote /mnt/user-data/outputs/r4.md", "ai:a3"}},
		{"summarised, paged at the end", summarise, false, []int{0, 1, 3},
			[]string{"human:q3", "ai:r4", "tool:wrote /mnt/user-data/outputs/r4.md", "ai:a3"}},
		{"not summarised", "", true, []int{0, 0, 0}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			chat := summarisingModel(modeltest.Turn{Text: "a1"}, reportCall("r2.md"), modeltest.Turn{Text: "a2"},
				reportCall("r3.md"), reportCall("r4.md"), modeltest.Turn{Text: "a3"})
			e := newEnv(t, envOptions{model: chat, config: tc.config})
			tid := uuid.NewString()
			seqs := map[string]float64{} // message id → seq first seen
			var visible []string
			for i, text := range []string{"q1", "q2", "q3"} {
				tr := e.run(tid, text)
				if n := len(summaryUpdates(tr)); n != tc.summaries[i] {
					t.Fatalf("run %d: %d summarizations, want %d", i+1, n, tc.summaries[i])
				}
				visible = append(visible, want[i]...)
				if !tc.pageEachRun && i < 2 {
					continue
				}
				rows := e.allRows(tid)
				var got []string
				for j, row := range rows {
					d := row["content"].(map[string]any)
					got = append(got, rowText(d))
					id := d["id"].(string)
					if seq, ok := seqs[id]; ok && seq != row["seq"] {
						t.Errorf("run %d: message %s moved from seq %v to %v", i+1, id, seq, row["seq"])
					}
					seqs[id] = row["seq"].(float64)
					if row["seq"] != float64(j+1) {
						t.Errorf("run %d: row %d has seq %v", i+1, j, row["seq"])
					}
				}
				if diff := cmp.Diff(visible, got); diff != "" {
					t.Errorf("run %d: messages/page (-want +got):\n%s", i+1, diff)
				}
			}

			// history and state are the checkpoint: compacted.
			var hist []map[string]any
			e.json("POST", "/api/langgraph/threads/"+tid+"/history", "", map[string]any{"limit": 1}, 200, &hist)
			values := hist[0]["values"].(map[string]any)
			var got []string
			for _, d := range messagesOf(values) {
				got = append(got, rowText(d))
			}
			wantState := tc.state
			if wantState == nil {
				wantState = visible
			}
			if diff := cmp.Diff(wantState, got); diff != "" {
				t.Errorf("history values messages (-want +got):\n%s", diff)
			}
			var st map[string]any
			e.json("GET", "/api/langgraph/threads/"+tid+"/state", "", nil, 200, &st)
			if diff := cmp.Diff(values["messages"], st["values"].(map[string]any)["messages"]); diff != "" {
				t.Errorf("history and state differ:\n%s", diff)
			}
		})
	}
}

// allRows reads messages/page whole in one request and again backwards
// in pages of 5, checks that both agree and that the cursors are
// consistent, and returns the rows in order.
func (e *env) allRows(tid string) []map[string]any {
	e.t.Helper()
	var whole pageRows
	e.json("GET", "/api/threads/"+tid+"/messages/page", "", nil, 200, &whole)
	if whole.HasMore || whole.Next != nil {
		e.t.Fatalf("one page: has_more %v, next %v", whole.HasMore, whole.Next)
	}
	var paged []map[string]any
	path := "/api/threads/" + tid + "/messages/page?limit=5"
	for range 100 {
		var p pageRows
		e.json("GET", path, "", nil, 200, &p)
		paged = append(p.Data, paged...)
		if !p.HasMore {
			if p.Next != nil {
				e.t.Errorf("last page has next_before_seq %v", *p.Next)
			}
			break
		}
		if p.Next == nil || len(p.Data) == 0 || float64(*p.Next) != p.Data[0]["seq"] {
			e.t.Fatalf("page with has_more: next_before_seq %v, rows %v", p.Next, p.Data)
		}
		path = fmt.Sprintf("/api/threads/%s/messages/page?limit=5&before_seq=%d", tid, *p.Next)
	}
	if diff := cmp.Diff(whole.Data, paged); diff != "" {
		e.t.Errorf("paged rows differ from one page (-whole +paged):\n%s", diff)
	}
	ids := map[any]bool{}
	for _, row := range whole.Data {
		id := row["content"].(map[string]any)["id"]
		if ids[id] {
			e.t.Errorf("message %v listed twice", id)
		}
		ids[id] = true
	}
	return whole.Data
}
