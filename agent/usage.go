package agent

import (
	"encoding/json"

	"github.com/antlerhq/antler/model"
	"github.com/antlerhq/antler/store"
)

// A run's token usage record (DeerFlow's run journal, stored with the run
// through store.RunUpdate.Usage when it ends, whatever its status). Every
// model call the run makes is counted once, by caller:
//
//   - store.CallerLeadAgent: the loop's own model calls (the usage also in
//     Outcome.Usage and EventDone, which is all the loop counts);
//   - store.CallerSubagent: each task's cumulative usage, read from the
//     task tool's terminal event (task_completed, task_failed,
//     task_cancelled, task_timed_out: "usage" and "model_name");
//   - store.CallerMiddleware: the title call and the summary calls, which
//     stay outside the loop's usage.
//
// Per model, usage is keyed by the name given with NamedModel (the factory
// names every model by its models[] entry); unnamed models count as
// store.UnknownModel.

// NamedModel returns m carrying the models[] name its usage is recorded
// under (nil for a nil m).
func NamedModel(name string, m model.ChatModel) model.ChatModel {
	if m == nil {
		return nil
	}
	if n, ok := m.(*namedModel); ok {
		m = n.ChatModel
	}
	return &namedModel{ChatModel: m, name: name}
}

// namedModel is a ChatModel with its name; it only carries it.
type namedModel struct {
	model.ChatModel
	name string
}

// Unwrap returns the model n names, so that its capabilities
// (model.SearchesTools) show through.
func (n *namedModel) Unwrap() model.ChatModel { return n.ChatModel }

// ModelName returns the name NamedModel gave m, "" when it has none.
func ModelName(m model.ChatModel) string {
	if n, ok := m.(*namedModel); ok {
		return n.name
	}
	return ""
}

// runUsage is the usage of a run in progress; it is owned by the run's
// goroutine.
type runUsage struct {
	// loop is the lead agent's own usage (Outcome.Usage).
	loop model.Usage
	// record is everything the run is charged with.
	record store.RunUsage
}

// addLead counts one of the loop's model responses.
func (u *runUsage) addLead(m model.ChatModel, usage model.Usage) {
	u.loop = u.loop.Add(usage)
	u.record.Add(store.CallerLeadAgent, ModelName(m), usage)
}

// The terminal task events whose usage a run is charged with.
const (
	eventTaskCancelled EventType = "task_cancelled"
	eventTaskTimedOut  EventType = "task_timed_out"
)

// addTask counts the cumulative usage a terminal task event reports
// ({"usage": {input_tokens, output_tokens, total_tokens}, "model_name"}).
func (u *runUsage) addTask(ev Event) {
	switch ev.Type {
	case EventTaskCompleted, EventTaskFailed, eventTaskCancelled, eventTaskTimedOut:
	default:
		return
	}
	data, ok := ev.Data.(map[string]any)
	if !ok {
		return
	}
	usage, ok := taskUsage(data["usage"])
	if !ok {
		return
	}
	name, _ := data["model_name"].(string)
	u.record.Add(store.CallerSubagent, name, usage)
}

// taskUsage reads the task contract's usage map (map[string]int64 from
// the task tool, or decoded JSON).
func taskUsage(v any) (model.Usage, bool) {
	var m map[string]any
	switch v := v.(type) {
	case map[string]int64:
		if v == nil {
			return model.Usage{}, false
		}
		return model.Usage{InputTokens: v["input_tokens"], OutputTokens: v["output_tokens"], TotalTokens: v["total_tokens"]}, true
	case map[string]any:
		m = v
	default:
		return model.Usage{}, false
	}
	n := func(k string) int64 {
		switch x := m[k].(type) {
		case int64:
			return x
		case int:
			return int64(x)
		case float64:
			return int64(x)
		case json.Number:
			i, _ := x.Int64()
			return i
		}
		return 0
	}
	return model.Usage{InputTokens: n("input_tokens"), OutputTokens: n("output_tokens"), TotalTokens: n("total_tokens")}, true
}

// ApproxTokens is the approximate token count of messages that
// summarization uses (LangChain's count_tokens_approximately: characters
// / 4 plus 3 per message), for the gateway's context usage.
func ApproxTokens(msgs []model.Message) int { return approxTokens(msgs) }
