package builtin_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/antlerhq/antler/agent"
	"github.com/antlerhq/antler/builtin"
	"github.com/antlerhq/antler/model"
	"github.com/antlerhq/antler/model/modeltest"
	"github.com/antlerhq/antler/tool"
	"github.com/antlerhq/antler/vpath"
)

// Through the real agent loop: the model sees the image on the request
// after view_image, the state keeps only metadata, and the next request
// has no image again.
func TestViewImageThroughAgentLoop(t *testing.T) {
	home := t.TempDir()
	layout, err := vpath.New(vpath.Options{Home: home})
	if err != nil {
		t.Fatal(err)
	}
	tp, err := layout.EnsureThreadDirs("alice", "t1")
	if err != nil {
		t.Fatal(err)
	}
	png := []byte("\x89PNG\r\n\x1a\nloop-test")
	if err := os.WriteFile(filepath.Join(tp.Uploads, "cat.png"), png, 0o644); err != nil {
		t.Fatal(err)
	}
	m := modeltest.New(
		modeltest.Turn{ToolCalls: []model.ToolCall{{ID: "v1", Name: builtin.ViewImageName, Arguments: json.RawMessage(`{"image_path":"/mnt/user-data/uploads/cat.png"}`)}}},
		modeltest.Turn{Text: "A cat."},
	)
	a, err := agent.New(agent.Options{
		Model:            m,
		Tools:            []*tool.Tool{builtin.NewViewImage(layout)},
		ModelMiddlewares: []tool.ModelMiddleware{builtin.NewViewImageMiddleware(layout)},
	})
	if err != nil {
		t.Fatal(err)
	}
	out, err := a.Invoke(t.Context(), agent.Input{ThreadID: "t1", UserID: "alice", Messages: []model.Message{model.UserText("what is this?")}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	reqs := m.Requests()
	if len(reqs) != 2 {
		t.Fatalf("%d model calls, want 2", len(reqs))
	}
	last := reqs[1].Messages[len(reqs[1].Messages)-1]
	if !builtin.IsImageContextMessage(last) || len(last.Parts) != 3 || string(last.Parts[2].Data) != string(png) {
		t.Errorf("second request does not end with the image: %+v", last)
	}
	for _, msg := range out.State.Messages {
		if len(msg.Parts) > 0 || builtin.IsImageContextMessage(msg) {
			t.Errorf("image context persisted in the state: %+v", msg)
		}
	}
	if vi, ok := out.State.ViewedImages["/mnt/user-data/uploads/cat.png"]; !ok || vi.Size != int64(len(png)) || vi.MIMEType != "image/png" {
		t.Errorf("viewed_images = %+v", out.State.ViewedImages)
	}
	raw, _ := json.Marshal(out.State)
	if len(raw) > 4096 {
		t.Errorf("state is %d bytes; image bytes were persisted?", len(raw))
	}
}
