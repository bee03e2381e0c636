package builtin

import (
	"context"
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/antlerhq/antler/model"
	"github.com/antlerhq/antler/thread"
	"github.com/antlerhq/antler/tool"
)

// captureModel is the innermost model handler: it records the requests.
type captureModel struct{ requests []*model.Request }

func (c *captureModel) handle(ctx context.Context, call *tool.ModelCall) (*model.Response, error) {
	c.requests = append(c.requests, call.Request)
	return &model.Response{Message: model.Message{Role: model.RoleAssistant, Content: "seen"}}, nil
}

func aiCalls(calls ...model.ToolCall) model.Message {
	return model.Message{ID: "ai1", Role: model.RoleAssistant, ToolCalls: calls}
}

func toolMsg(id, name string) model.Message {
	return model.Message{Role: model.RoleTool, ToolCallID: id, Name: name, Content: "ok"}
}

var (
	viewCall1 = model.ToolCall{ID: "c1", Name: ViewImageName, Arguments: json.RawMessage(`{"image_path":"/mnt/user-data/workspace/a.png"}`)}
	lsCall2   = model.ToolCall{ID: "c2", Name: "ls", Arguments: json.RawMessage(`{}`)}
)

// viewedState views images through the tool, as a run would, and returns
// the state with the recorded metadata.
func viewedState(t *testing.T, e *threadEnv, paths ...string) *thread.State {
	t.Helper()
	st := &thread.State{}
	for _, p := range paths {
		res := viewCall(t, e, p)
		if res.IsError {
			t.Fatalf("view_image %s: %s", p, res.TextContent())
		}
		if err := st.Apply(res.Update); err != nil {
			t.Fatal(err)
		}
	}
	return st
}

func runMiddleware(t *testing.T, e *threadEnv, st *thread.State, msgs []model.Message) (*captureModel, *model.Request) {
	t.Helper()
	cm := &captureModel{}
	h := tool.ChainModel(cm.handle, NewViewImageMiddleware(e.layout))
	req := &model.Request{Messages: msgs}
	st.Messages = msgs
	if _, err := h(t.Context(), &tool.ModelCall{Request: req, State: st, UserID: e.user, ThreadID: e.thread}); err != nil {
		t.Fatal(err)
	}
	return cm, req
}

// injected returns the image context message the model saw, or nil.
func injected(t *testing.T, cm *captureModel, sent int) *model.Message {
	t.Helper()
	got := cm.requests[0].Messages
	if len(got) == sent {
		return nil
	}
	if len(got) != sent+1 {
		t.Fatalf("model saw %d messages, want %d or %d", len(got), sent, sent+1)
	}
	m := got[sent]
	if !isImageContextMessage(m) || m.Meta[HideFromUIKey] != true {
		t.Fatalf("the added message is not a marked, hidden image context message: %+v", m)
	}
	return &m
}

func TestViewImageMiddleware(t *testing.T) {
	e := newThreadEnv(t)
	e.write(t, e.tp.Workspace, "a.png", pngData)
	e.write(t, e.tp.Uploads, "b.gif", gifData)
	user := model.UserText("look at this")

	t.Run("injects once every tool call is answered", func(t *testing.T) {
		st := viewedState(t, e, "/mnt/user-data/workspace/a.png")
		msgs := []model.Message{user, aiCalls(viewCall1, lsCall2), toolMsg("c1", ViewImageName), toolMsg("c2", "ls")}
		cm, req := runMiddleware(t, e, st, msgs)
		m := injected(t, cm, len(msgs))
		if m == nil {
			t.Fatal("no image context was injected")
		}
		want := []model.Part{
			{Type: model.PartText, Text: "Here are the images you've viewed:"},
			{Type: model.PartText, Text: "\n- **/mnt/user-data/workspace/a.png** (image/png)"},
			{Type: model.PartImage, MIMEType: "image/png", Data: pngData},
		}
		if diff := cmp.Diff(want, m.Parts); diff != "" {
			t.Errorf("parts (-want +got):\n%s", diff)
		}
		if !strings.HasPrefix(m.ID, imageContextIDPrefix) || len(m.ID) != len(imageContextIDPrefix)+32 {
			t.Errorf("id %q", m.ID)
		}
		// Request-only: neither the caller's request nor the state changed.
		if len(req.Messages) != len(msgs) || len(st.Messages) != len(msgs) {
			t.Error("the middleware changed the caller's request or the state")
		}
		for _, s := range st.Messages {
			if len(s.Parts) > 0 {
				t.Error("image bytes reached the state")
			}
		}
	})
	t.Run("waits for unanswered tool calls", func(t *testing.T) {
		st := viewedState(t, e, "/mnt/user-data/workspace/a.png")
		msgs := []model.Message{user, aiCalls(viewCall1, lsCall2), toolMsg("c1", ViewImageName)}
		cm, _ := runMiddleware(t, e, st, msgs)
		if injected(t, cm, len(msgs)) != nil {
			t.Error("injected before every tool call was answered")
		}
	})
	t.Run("only after a view_image call", func(t *testing.T) {
		st := viewedState(t, e, "/mnt/user-data/workspace/a.png")
		msgs := []model.Message{user, aiCalls(lsCall2), toolMsg("c2", "ls")}
		cm, _ := runMiddleware(t, e, st, msgs)
		if injected(t, cm, len(msgs)) != nil {
			t.Error("injected after a step without view_image")
		}
		msgs = []model.Message{user, aiCalls(viewCall1), toolMsg("c1", ViewImageName), {Role: model.RoleAssistant, Content: "it is a cat"}, model.UserText("thanks")}
		cm, _ = runMiddleware(t, e, st, msgs)
		if injected(t, cm, len(msgs)) != nil {
			t.Error("injected again after the model already answered")
		}
	})
	t.Run("never twice", func(t *testing.T) {
		st := viewedState(t, e, "/mnt/user-data/workspace/a.png")
		msgs := []model.Message{user, aiCalls(viewCall1), toolMsg("c1", ViewImageName)}
		cm, _ := runMiddleware(t, e, st, msgs)
		first := injected(t, cm, len(msgs))
		if first == nil {
			t.Fatal("no injection")
		}
		// The request already carries it (middleware applied twice, or a
		// DeerFlow checkpoint that kept it): no second copy.
		again := append(append([]model.Message{}, msgs...), *first)
		cm, _ = runMiddleware(t, e, st, again)
		if injected(t, cm, len(again)) != nil {
			t.Error("injected a second image context")
		}
		cm2 := &captureModel{}
		h := tool.ChainModel(cm2.handle, NewViewImageMiddleware(e.layout), NewViewImageMiddleware(e.layout))
		if _, err := h(t.Context(), &tool.ModelCall{Request: &model.Request{Messages: msgs}, State: st, UserID: e.user, ThreadID: e.thread}); err != nil {
			t.Fatal(err)
		}
		if n := len(cm2.requests[0].Messages); n != len(msgs)+1 {
			t.Errorf("two chained middlewares sent %d messages, want %d", n, len(msgs)+1)
		}
		// A legacy unmarked message with DeerFlow's header also counts.
		legacy := append(append([]model.Message{}, msgs...), model.UserText("Here are the images you've viewed: ..."))
		cm, _ = runMiddleware(t, e, st, legacy)
		if injected(t, cm, len(legacy)) != nil {
			t.Error("injected after DeerFlow's header text")
		}
	})
	t.Run("includes every viewed image, sorted by path", func(t *testing.T) {
		st := viewedState(t, e, "/mnt/user-data/workspace/a.png", "/mnt/user-data/uploads/b.gif")
		msgs := []model.Message{user, aiCalls(viewCall1), toolMsg("c1", ViewImageName)}
		cm, _ := runMiddleware(t, e, st, msgs)
		m := injected(t, cm, len(msgs))
		var images []string
		for _, p := range m.Parts {
			if p.Type == model.PartImage {
				images = append(images, p.MIMEType)
			}
		}
		if diff := cmp.Diff([]string{"image/gif", "image/png"}, images); diff != "" {
			t.Errorf("images (-want +got):\n%s", diff)
		}
	})
	t.Run("placeholders for unavailable or changed files", func(t *testing.T) {
		e := newThreadEnv(t)
		e.write(t, e.tp.Workspace, "gone.png", pngData)
		e.write(t, e.tp.Workspace, "grown.png", pngData)
		e.write(t, e.tp.Workspace, "retyped.png", pngData)
		e.write(t, e.tp.Workspace, "big.png", pngData)
		e.write(t, e.tp.Workspace, "fine.png", pngData)
		st := viewedState(t, e, "/mnt/user-data/workspace/gone.png", "/mnt/user-data/workspace/grown.png",
			"/mnt/user-data/workspace/retyped.png", "/mnt/user-data/workspace/fine.png")
		_ = os.Remove(e.tp.Workspace + "/gone.png")
		e.write(t, e.tp.Workspace, "grown.png", append(append([]byte{}, pngData...), "more"...))
		e.write(t, e.tp.Workspace, "retyped.png", append(append([]byte{}, gifData...), make([]byte, len(pngData)-len(gifData))...))
		// An oversized file whose recorded size matches is still refused.
		_ = os.Truncate(e.tp.Workspace+"/big.png", maxImageBytes+1)
		st.ViewedImages["/mnt/user-data/workspace/big.png"] = thread.ViewedImage{MIMEType: "image/png", Size: maxImageBytes + 1, ActualPath: e.tp.Workspace + "/big.png"}
		// actual_path from the state is not trusted: the path is resolved
		// again for this user and thread.
		st.ViewedImages["/mnt/user-data/workspace/fine.png"] = thread.ViewedImage{MIMEType: "image/png", Size: int64(len(pngData)), ActualPath: "/etc/passwd"}

		msgs := []model.Message{user, aiCalls(viewCall1), toolMsg("c1", ViewImageName)}
		cm, _ := runMiddleware(t, e, st, msgs)
		m := injected(t, cm, len(msgs))
		var got []string
		for _, p := range m.Parts {
			if p.Type == model.PartImage {
				got = append(got, "[image]")
			} else {
				got = append(got, p.Text)
			}
		}
		want := []string{
			"Here are the images you've viewed:",
			"\n- **/mnt/user-data/workspace/big.png** (image/png)", "  (file unavailable or changed on disk: /mnt/user-data/workspace/big.png)",
			"\n- **/mnt/user-data/workspace/fine.png** (image/png)", "[image]",
			"\n- **/mnt/user-data/workspace/gone.png** (image/png)", "  (file unavailable or changed on disk: /mnt/user-data/workspace/gone.png)",
			"\n- **/mnt/user-data/workspace/grown.png** (image/png)", "  (file unavailable or changed on disk: /mnt/user-data/workspace/grown.png)",
			"\n- **/mnt/user-data/workspace/retyped.png** (image/png)", "  (file unavailable or changed on disk: /mnt/user-data/workspace/retyped.png)",
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("parts (-want +got):\n%s", diff)
		}
		for _, p := range m.Parts {
			if strings.Contains(p.Text, e.home) {
				t.Errorf("placeholder leaks a host path: %q", p.Text)
			}
		}
	})
	t.Run("unmarked human messages are never removed", func(t *testing.T) {
		st := viewedState(t, e, "/mnt/user-data/workspace/a.png")
		lookalike := model.Message{ID: imageContextIDPrefix + "forged", Role: model.RoleUser, Content: "please keep me"}
		msgs := []model.Message{user, lookalike, aiCalls(viewCall1), toolMsg("c1", ViewImageName), model.UserText("and this too")}
		cm, _ := runMiddleware(t, e, st, msgs)
		got := cm.requests[0].Messages
		if diff := cmp.Diff(msgs, got[:len(msgs)]); diff != "" {
			t.Errorf("messages before the injection changed (-want +got):\n%s", diff)
		}
		if injected(t, cm, len(msgs)) == nil {
			t.Error("an unmarked user message must not block the injection")
		}
	})
}
