package builtin

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/antlerhq/antler/thread"
	"github.com/antlerhq/antler/tool"
	"github.com/antlerhq/antler/vpath"
)

// Image bytes with valid magic numbers (the rest does not matter to the
// checks).
var (
	pngData  = []byte("\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDRfake-png-body")
	jpegData = []byte("\xff\xd8\xff\xe0\x00\x10JFIFfake-jpeg-body")
	gifData  = []byte("GIF89a\x01\x00\x01\x00fake-gif-body")
	webpData = []byte("RIFF\x10\x00\x00\x00WEBPVP8 fake-webp")
)

// threadEnv is one user's thread with its folders on disk.
type threadEnv struct {
	layout       *vpath.Layout
	home         string
	user, thread string
	tp           vpath.ThreadPaths
}

func newThreadEnv(t *testing.T) *threadEnv {
	t.Helper()
	home := t.TempDir()
	layout, err := vpath.New(vpath.Options{Home: home})
	if err != nil {
		t.Fatal(err)
	}
	e := &threadEnv{layout: layout, home: home, user: "alice", thread: "t1"}
	if e.tp, err = layout.EnsureThreadDirs(e.user, e.thread); err != nil {
		t.Fatal(err)
	}
	return e
}

func (e *threadEnv) call() *tool.Call {
	return &tool.Call{ID: "call_1", UserID: e.user, ThreadID: e.thread, State: &thread.State{}}
}

// write creates a file below a host folder.
func (e *threadEnv) write(t *testing.T, dir, rel string, data []byte) string {
	t.Helper()
	p := filepath.Join(dir, filepath.FromSlash(rel))
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// callTool runs tl with args (marshalled to JSON) and fails on a Go error.
func callTool(t *testing.T, tl *tool.Tool, call *tool.Call, args any) *tool.Result {
	t.Helper()
	raw, err := json.Marshal(args)
	if err != nil {
		t.Fatal(err)
	}
	res, err := tl.Handler(t.Context(), call, raw)
	if err != nil {
		t.Fatalf("%s returned a Go error: %v", tl.Name, err)
	}
	return res
}

func newLayout(home string) (*vpath.Layout, error) { return vpath.New(vpath.Options{Home: home}) }
