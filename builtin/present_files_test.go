package builtin

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/antlerhq/antler/thread"
	"github.com/antlerhq/antler/tool"
)

func presentCall(t *testing.T, e *threadEnv, call *tool.Call, paths ...string) *tool.Result {
	t.Helper()
	return callTool(t, NewPresentFiles(e.layout), call, map[string]any{"filepaths": paths})
}

// Host outputs path normalised, virtual path kept,
// path outside outputs rejected with no artifacts, thread id from the
// runtime context when the call lacks it, the runtime user used for
// virtual path resolution.
func TestPresentFiles(t *testing.T) {
	t.Run("host outputs path normalised", func(t *testing.T) {
		e := newThreadEnv(t)
		host := e.write(t, e.tp.Outputs, "sub/report.md", []byte("# r"))
		res := presentCall(t, e, e.call(), host)
		wantPresented(t, res, "/mnt/user-data/outputs/sub/report.md")
	})
	t.Run("virtual path kept", func(t *testing.T) {
		e := newThreadEnv(t)
		e.write(t, e.tp.Outputs, "report.md", []byte("# r"))
		res := presentCall(t, e, e.call(), "/mnt/user-data/outputs/report.md")
		wantPresented(t, res, "/mnt/user-data/outputs/report.md")
	})
	t.Run("outside outputs rejected", func(t *testing.T) {
		e := newThreadEnv(t)
		e.write(t, e.tp.Workspace, "draft.md", []byte("x"))
		for _, p := range []string{"/mnt/user-data/workspace/draft.md", filepath.Join(e.tp.Workspace, "draft.md"), "/etc/passwd", "/mnt/user-data", "/mnt/user-data/other/x"} {
			res := presentCall(t, e, e.call(), p)
			wantError(t, res, "Error: Only files in /mnt/user-data/outputs can be presented: "+p)
		}
	})
	t.Run("thread id from runtime context", func(t *testing.T) {
		e := newThreadEnv(t)
		e.write(t, e.tp.Outputs, "a.txt", []byte("a"))
		call := e.call()
		call.ThreadID = ""
		call.Context = map[string]any{"thread_id": e.thread}
		wantPresented(t, presentCall(t, e, call, "/mnt/user-data/outputs/a.txt"), "/mnt/user-data/outputs/a.txt")
	})
	t.Run("runtime user resolves virtual paths", func(t *testing.T) {
		e := newThreadEnv(t)
		e.write(t, e.tp.Outputs, "alice-only.txt", []byte("a"))
		wantPresented(t, presentCall(t, e, e.call(), "/mnt/user-data/outputs/alice-only.txt"), "/mnt/user-data/outputs/alice-only.txt")
		bob := e.call()
		bob.UserID = "bob"
		res := presentCall(t, e, bob, "/mnt/user-data/outputs/alice-only.txt")
		wantError(t, res, "Error: File not found: /mnt/user-data/outputs/alice-only.txt. Write it to /mnt/user-data/outputs first, then present it.")
		// Alice's host path is outside Bob's outputs.
		res = presentCall(t, e, bob, filepath.Join(e.tp.Outputs, "alice-only.txt"))
		wantError(t, res, "Error: Only files in /mnt/user-data/outputs can be presented: "+filepath.Join(e.tp.Outputs, "alice-only.txt"))
	})
}

func TestPresentFilesRules(t *testing.T) {
	e := newThreadEnv(t)
	e.write(t, e.tp.Outputs, "a.md", []byte("a"))
	e.write(t, e.tp.Outputs, "b.md", []byte("b"))
	e.write(t, e.tp.Workspace, "secret.md", []byte("s"))
	if err := os.Symlink(filepath.Join(e.tp.Workspace, "secret.md"), filepath.Join(e.tp.Outputs, "link.md")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("/etc/hostname", filepath.Join(e.tp.Outputs, "escape.md")); err != nil {
		t.Fatal(err)
	}
	t.Setenv("HOME", e.tp.UserData)
	for _, tc := range []struct {
		name    string
		paths   []string
		want    []string // artifacts on success
		wantErr string
	}{
		{name: "several files", paths: []string{"/mnt/user-data/outputs/a.md", "/mnt/user-data/outputs/b.md"},
			want: []string{"/mnt/user-data/outputs/a.md", "/mnt/user-data/outputs/b.md"}},
		{name: "leading slashes ignored", paths: []string{"//mnt/user-data/outputs/a.md", "mnt/user-data/outputs/b.md"},
			want: []string{"/mnt/user-data/outputs/a.md", "/mnt/user-data/outputs/b.md"}},
		{name: "outputs folder itself", paths: []string{"/mnt/user-data/outputs"}, want: []string{"/mnt/user-data/outputs/."}},
		{name: "tilde expanded", paths: []string{"~/outputs/a.md"}, want: []string{"/mnt/user-data/outputs/a.md"}},
		{name: "empty list", paths: []string{}, want: []string{}},
		{name: "all or nothing", paths: []string{"/mnt/user-data/outputs/a.md", "/mnt/user-data/workspace/secret.md"},
			wantErr: "Error: Only files in /mnt/user-data/outputs can be presented: /mnt/user-data/workspace/secret.md"},
		{name: "missing file", paths: []string{"/mnt/user-data/outputs/a.md", "/mnt/user-data/outputs/nope.md"},
			wantErr: "Error: File not found: /mnt/user-data/outputs/nope.md. Write it to /mnt/user-data/outputs first, then present it."},
		{name: "symlink to workspace", paths: []string{"/mnt/user-data/outputs/link.md"},
			wantErr: "Error: Only files in /mnt/user-data/outputs can be presented: /mnt/user-data/outputs/link.md"},
		{name: "symlink out of the thread", paths: []string{"/mnt/user-data/outputs/escape.md"},
			wantErr: "Error: Access denied: path traversal detected"},
		{name: "traversal", paths: []string{"/mnt/user-data/outputs/../../x"}, wantErr: "Error: Access denied: path traversal detected"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res := presentCall(t, e, e.call(), tc.paths...)
			if tc.wantErr != "" {
				wantError(t, res, tc.wantErr)
				return
			}
			wantPresented(t, res, tc.want...)
		})
	}
}

func TestPresentFilesPreconditions(t *testing.T) {
	e := newThreadEnv(t)
	noState := e.call()
	noState.State = nil
	wantError(t, presentCall(t, e, noState, "/mnt/user-data/outputs/a"), "Error: Thread runtime state is not available")
	noThread := e.call()
	noThread.ThreadID = ""
	wantError(t, presentCall(t, e, noThread, "/mnt/user-data/outputs/a"), "Error: Thread ID is not available in runtime context or runtime config")
	res := callTool(t, NewPresentFiles(e.layout), e.call(), map[string]any{"filepaths": "x"})
	if !res.IsError || !strings.Contains(res.TextContent(), "filepaths") {
		t.Errorf("a string for filepaths: %q", res.TextContent())
	}
}

// Two present_files calls of one step both add their artifacts through the
// reducer.
func TestPresentFilesParallelCallsMerge(t *testing.T) {
	e := newThreadEnv(t)
	e.write(t, e.tp.Outputs, "a.md", nil)
	e.write(t, e.tp.Outputs, "b.md", nil)
	r1 := presentCall(t, e, e.call(), "/mnt/user-data/outputs/a.md", "/mnt/user-data/outputs/b.md")
	r2 := presentCall(t, e, e.call(), "/mnt/user-data/outputs/b.md")
	st := &thread.State{Artifacts: []string{"/mnt/user-data/outputs/old.md"}}
	for _, r := range []*tool.Result{r1, r2} {
		if err := st.Apply(r.Update); err != nil {
			t.Fatal(err)
		}
	}
	if diff := cmp.Diff([]string{"/mnt/user-data/outputs/old.md", "/mnt/user-data/outputs/a.md", "/mnt/user-data/outputs/b.md"}, st.Artifacts); diff != "" {
		t.Errorf("artifacts (-want +got):\n%s", diff)
	}
}

func wantPresented(t *testing.T, res *tool.Result, artifacts ...string) {
	t.Helper()
	if res.IsError || res.TextContent() != "Successfully presented files" {
		t.Fatalf("result %q (error %v)", res.TextContent(), res.IsError)
	}
	if res.Update == nil {
		t.Fatal("no state update")
	}
	if diff := cmp.Diff(artifacts, res.Update.Artifacts); diff != "" {
		t.Errorf("artifacts (-want +got):\n%s", diff)
	}
}

func wantError(t *testing.T, res *tool.Result, text string) {
	t.Helper()
	if !res.IsError || res.TextContent() != text {
		t.Errorf("result %q (error %v), want error %q", res.TextContent(), res.IsError, text)
	}
	if res.Update != nil && !res.Update.IsZero() {
		t.Errorf("an error result carries a state update: %+v", res.Update)
	}
}
