package agent_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"iter"
	"sync"

	"github.com/antlerhq/antler/model"
	"github.com/antlerhq/antler/tool"
)

// step is one scripted model answer: it sees the request and returns the
// events to stream (the last carrying the Response) or an error after
// them.
type step func(req *model.Request) ([]model.Event, error)

// fakeModel answers requests with its script, one step per request, and
// records the requests.
type fakeModel struct {
	mu       sync.Mutex
	steps    []step
	requests []*model.Request
	// loop, when set, answers every request after the script runs out.
	loop step
}

func (f *fakeModel) Generate(ctx context.Context, req *model.Request) iter.Seq2[model.Event, error] {
	return func(yield func(model.Event, error) bool) {
		f.mu.Lock()
		i := len(f.requests)
		f.requests = append(f.requests, req.Clone())
		f.mu.Unlock()
		var s step
		switch {
		case i < len(f.steps):
			s = f.steps[i]
		case f.loop != nil:
			s = f.loop
		default:
			yield(model.Event{}, fmt.Errorf("fake model: no step %d", i))
			return
		}
		evs, err := s(req)
		for _, ev := range evs {
			if ctx.Err() != nil {
				yield(model.Event{}, ctx.Err())
				return
			}
			if !yield(ev, nil) {
				return
			}
		}
		if err != nil {
			yield(model.Event{}, err)
		}
	}
}

func (f *fakeModel) request(i int) *model.Request {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.requests[i]
}

func (f *fakeModel) count() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.requests)
}

// answer streams text and finishes.
func answer(text string) step {
	return func(*model.Request) ([]model.Event, error) {
		return []model.Event{{TextDelta: text}, {Response: &model.Response{
			Message: model.Message{Role: model.RoleAssistant, Content: text}, FinishReason: model.FinishStop,
			Usage: model.Usage{InputTokens: 10, OutputTokens: 2, TotalTokens: 12}}}}, nil
	}
}

// calls asks for tool calls given as name, JSON arguments pairs.
func calls(nameArgs ...string) step {
	return func(*model.Request) ([]model.Event, error) {
		var tcs []model.ToolCall
		for i := 0; i+1 < len(nameArgs); i += 2 {
			tcs = append(tcs, model.ToolCall{ID: fmt.Sprintf("call_%d", i/2+1), Name: nameArgs[i], Arguments: json.RawMessage(nameArgs[i+1])})
		}
		return []model.Event{{Response: &model.Response{
			Message: model.Message{Role: model.RoleAssistant, ToolCalls: tcs}, FinishReason: model.FinishToolCalls}}}, nil
	}
}

// failMidStream streams some text and then fails.
func failMidStream(text string, err error) step {
	return func(*model.Request) ([]model.Event, error) {
		return []model.Event{{TextDelta: text}}, err
	}
}

var errProvider = errors.New("provider: 502 bad gateway")

// textTool returns a tool that answers with a fixed text.
func textTool(name, text string) *tool.Tool {
	return &tool.Tool{Name: name, Description: name, InputSchema: json.RawMessage(`{"type":"object"}`),
		Handler: func(ctx context.Context, call *tool.Call, args json.RawMessage) (*tool.Result, error) {
			return tool.Text(text), nil
		}}
}

func handlerTool(name string, h tool.Handler) *tool.Tool {
	return &tool.Tool{Name: name, Description: name, InputSchema: json.RawMessage(`{"type":"object"}`), Handler: h}
}
