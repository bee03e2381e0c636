package builtin

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/antlerhq/antler/model"
	"github.com/antlerhq/antler/thread"
	"github.com/antlerhq/antler/tool"
)

// toolImageMsg is the tool message of an MCP call whose images the
// budget saved: the reference under ToolImagesKey, as read back from
// JSON (so sizes are float64), as a checkpointed thread holds it.
func toolImageMsg(t *testing.T, id string, imgs ...ToolImage) model.Message {
	t.Helper()
	raw, err := json.Marshal(map[string]any{ToolImagesKey: ToolImagesMeta(imgs)})
	if err != nil {
		t.Fatal(err)
	}
	var meta map[string]any
	if err := json.Unmarshal(raw, &meta); err != nil {
		t.Fatal(err)
	}
	return model.Message{Role: model.RoleTool, ToolCallID: id, Name: "shots_take", Content: "[image 1 of 1 ...]", Meta: meta}
}

func TestViewImageMiddleware_toolResultImagesAreShown(t *testing.T) {
	e := newThreadEnv(t)
	png := append([]byte("\x89PNG\r\n\x1a\n"), make([]byte, 40)...)
	e.write(t, e.tp.Outputs, ".tool-results/shots_take-aaaaaaaaaaaa.png", png)
	e.write(t, e.tp.Outputs, ".tool-results/shots_take-bbbbbbbbbbbb.png", png)
	shot := model.ToolCall{ID: "c1", Name: "shots_take", Arguments: json.RawMessage(`{}`)}
	msgs := []model.Message{model.UserText("take shots"), aiCalls(shot),
		toolImageMsg(t, "c1",
			ToolImage{Path: "/mnt/user-data/outputs/.tool-results/shots_take-aaaaaaaaaaaa.png", MIMEType: "image/png", Size: int64(len(png))},
			ToolImage{Path: "/mnt/user-data/outputs/.tool-results/shots_take-bbbbbbbbbbbb.png", MIMEType: "image/png", Size: int64(len(png))})}
	// viewed_images of an earlier view_image call are not re-sent: this
	// assistant message did not call view_image.
	st := &thread.State{ViewedImages: map[string]thread.ViewedImage{"/mnt/user-data/workspace/old.png": {MIMEType: "image/png", Size: 9}}}
	cm, _ := runMiddleware(t, e, st, msgs)
	m := injected(t, cm, len(msgs))
	if m == nil {
		t.Fatal("no image context message for the tool's images")
	}
	var images int
	for _, p := range m.Parts {
		switch {
		case p.Type == model.PartImage:
			images++
			if string(p.Data) != string(png) {
				t.Error("an injected image is not the saved file's bytes")
			}
		case strings.Contains(p.Text, "old.png") || strings.Contains(p.Text, "unavailable"):
			t.Errorf("unexpected part %q", p.Text)
		}
	}
	if images != 2 {
		t.Errorf("%d images injected, want 2", images)
	}
	// A later request, after the model answered, gets nothing more.
	cm, _ = runMiddleware(t, e, st, append(msgs, model.Message{Role: model.RoleAssistant, Content: "two shots"}))
	if injected(t, cm, len(msgs)+1) != nil {
		t.Error("images injected again after the model answered")
	}
}

func TestToolImageNoteMiddleware_nonVisionModelGetsANote(t *testing.T) {
	shot := model.ToolCall{ID: "c1", Name: "shots_take", Arguments: json.RawMessage(`{}`)}
	msgs := []model.Message{model.UserText("take a shot"), aiCalls(shot),
		toolImageMsg(t, "c1", ToolImage{Path: "/mnt/user-data/outputs/.tool-results/shots_take-aaaaaaaaaaaa.png", MIMEType: "image/png", Size: 48})}
	cm := &captureModel{}
	h := tool.ChainModel(cm.handle, NewToolImageNoteMiddleware())
	if _, err := h(t.Context(), &tool.ModelCall{Request: &model.Request{Messages: msgs}}); err != nil {
		t.Fatal(err)
	}
	got := cm.requests[0].Messages
	if len(got) != len(msgs)+1 {
		t.Fatalf("model saw %d messages, want the note added", len(got))
	}
	note := got[len(msgs)]
	want := "The tool results above returned 1 image(s). This model cannot view images, so they are not shown; they are saved to:\n" +
		"- /mnt/user-data/outputs/.tool-results/shots_take-aaaaaaaaaaaa.png (image/png, 48 bytes)"
	if note.Role != model.RoleUser || note.Content != want || len(note.Parts) != 0 || note.Meta[HideFromUIKey] != true {
		t.Errorf("note = %+v, want a hidden user message %q with no parts", note, want)
	}
	// No images in the last step: nothing added.
	cm = &captureModel{}
	h = tool.ChainModel(cm.handle, NewToolImageNoteMiddleware())
	plain := []model.Message{model.UserText("hi"), aiCalls(lsCall2), toolMsg("c2", "ls")}
	if _, err := h(t.Context(), &tool.ModelCall{Request: &model.Request{Messages: plain}}); err != nil {
		t.Fatal(err)
	}
	if n := len(cm.requests[0].Messages); n != len(plain) {
		t.Errorf("model saw %d messages, want %d", n, len(plain))
	}
}
