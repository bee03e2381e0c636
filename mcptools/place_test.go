package mcptools_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/antlerhq/antler/mcptools"
	"github.com/antlerhq/antler/tool"
	"github.com/antlerhq/antler/vpath"
)

// The stdio specifics of DeerFlow's mcp/session_pool.py and mcp/tools.py:
// one session per thread in its workspace, and local path translation.

// placeFixture is a Manager with a layout over a temporary home and the
// fake "files" server f (plus c, configured with cwd and TMPDIR).
type placeFixture struct {
	home   string
	layout *vpath.Layout
	cfgDir string // c's configured cwd
	tools  map[string]*tool.Tool
}

func newPlaceFixture(t *testing.T, withLayout bool) *placeFixture {
	t.Helper()
	f := &placeFixture{home: t.TempDir(), cfgDir: t.TempDir()}
	var err error
	if f.layout, err = vpath.New(vpath.Options{Home: f.home}); err != nil {
		t.Fatal(err)
	}
	cwdJSON, _ := json.Marshal(f.cfgDir)
	ext := parseExt(t, `{
		"f": `+fakeServerJSON(t, "files", "")+`,
		"c": `+fakeServerJSON(t, "files", `"env": {"`+fakeEnv+`": "files", "TMPDIR": "/custom/tmp"}, "cwd": `+string(cwdJSON))+`}`)
	opts := mcptools.Options{Extensions: mcptools.Static(ext)}
	if withLayout {
		opts.Layout = f.layout
	}
	f.tools = toolsByName(t, newManager(t, opts), "f_report", "c_report", "f_write", "f_echo")
	return f
}

func (f *placeFixture) paths(t *testing.T, user, thread string) vpath.ThreadPaths {
	t.Helper()
	tp, err := f.layout.ThreadPaths(user, thread)
	if err != nil {
		t.Fatal(err)
	}
	return tp
}

// report calls the report tool of server and returns what the server
// process saw and what the model reads.
func report(t *testing.T, f *placeFixture, server string, call *tool.Call) (fakePlace, string) {
	t.Helper()
	out := filepath.Join(t.TempDir(), "report.json")
	args, _ := json.Marshal(map[string]string{"out": out})
	msg, isErr := callText(t, f.tools[server+"_report"], call, string(args))
	if isErr {
		t.Fatalf("report: %s", msg)
	}
	data, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	var p fakePlace
	if err := json.Unmarshal(data, &p); err != nil {
		t.Fatal(err)
	}
	return p, msg
}

func realPath(t *testing.T, p string) string {
	t.Helper()
	r, err := filepath.EvalSymlinks(p)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func TestStdioThreadSessionRunsInItsWorkspace(t *testing.T) {
	f := newPlaceFixture(t, true)
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	tp1, tp2 := f.paths(t, "u", "t1"), f.paths(t, "u", "t2")
	tmp1, tmp2 := filepath.Join(tp1.Workspace, ".mcp", "tmp"), filepath.Join(tp2.Workspace, ".mcp", "tmp")
	t1, t2 := &tool.Call{UserID: "u", ThreadID: "t1"}, &tool.Call{UserID: "u", ThreadID: "t2"}
	tests := []struct {
		name   string
		server string
		call   *tool.Call
		want   fakePlace
	}{
		{"thread t1", "f", t1, fakePlace{Cwd: tp1.Workspace, TMPDIR: tmp1, TMP: tmp1, TEMP: tmp1}},
		{"thread t2", "f", t2, fakePlace{Cwd: tp2.Workspace, TMPDIR: tmp2, TMP: tmp2, TEMP: tmp2}},
		{"configured cwd and TMPDIR win", "c", t1, fakePlace{Cwd: f.cfgDir, TMPDIR: "/custom/tmp", TMP: tmp1, TEMP: tmp1}},
		{"control session", "f", &tool.Call{}, fakePlace{Cwd: wd}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, msg := report(t, f, tt.server, tt.call)
			got.Cwd = realPath(t, got.Cwd)
			tt.want.Cwd = realPath(t, tt.want.Cwd)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
			if tt.call.ThreadID != "" && strings.Contains(msg, f.home) {
				t.Errorf("the model reads a host path: %s", msg)
			}
		})
	}
	for _, tmp := range []string{tmp1, tmp2} {
		fi, err := os.Stat(tmp)
		if err != nil {
			t.Fatal(err)
		}
		if !fi.IsDir() || fi.Mode().Perm() != 0o700 {
			t.Errorf("%s: mode %v, want a folder with mode 0700", tmp, fi.Mode())
		}
	}
	// The model reads the virtual folders.
	if _, msg := report(t, f, "f", t1); !strings.Contains(msg, `"TMPDIR":"/mnt/user-data/workspace/.mcp/tmp"`) {
		t.Errorf("report text = %s", msg)
	}
}

func TestStdioResultPathsBecomeVirtual(t *testing.T) {
	f := newPlaceFixture(t, true)
	ws := f.paths(t, "u", "t1").Workspace
	call := &tool.Call{UserID: "u", ThreadID: "t1"}
	// Files that exist before the calls: another thread's, an upload, one
	// outside every thread.
	other := filepath.Join(f.paths(t, "u", "t2").Workspace, "theirs.txt")
	upload := filepath.Join(f.paths(t, "u", "t1").Uploads, "in.pdf")
	outside := filepath.Join(t.TempDir(), "elsewhere.txt")
	for _, p := range []string{other, upload, outside} {
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write := func(say string, paths ...string) string {
		b, _ := json.Marshal(map[string]any{"paths": paths, "say": say})
		return string(b)
	}
	echo := func(msg string) string {
		b, _ := json.Marshal(map[string]string{"message": msg})
		return string(b)
	}
	// The cases run in order on one session; files written stay.
	tests := []struct {
		name, tool, args, want string
	}{
		{"absolute path, relative path with a slash and file link", "f_write", write("", "out/report.md"),
			"Saved /mnt/user-data/workspace/out/report.md.\n" +
				"Saved as /mnt/user-data/workspace/out/report.md!\n" +
				`[resource link "report.md": /mnt/user-data/workspace/out/report.md]`},
		{"bare name of the one file the call wrote", "f_write", write("see notes.txt, not report.md", "notes.txt"),
			"Saved /mnt/user-data/workspace/notes.txt.\n" +
				"Saved as /mnt/user-data/workspace/notes.txt!\n" +
				`[resource link "notes.txt": /mnt/user-data/workspace/notes.txt]` + "\n" +
				"see /mnt/user-data/workspace/notes.txt, not report.md"},
		{"bare name of two files the call wrote", "f_write", write("(dup.txt)", "a/dup.txt", "b/dup.txt"),
			"Saved /mnt/user-data/workspace/a/dup.txt.\n" +
				"Saved as /mnt/user-data/workspace/a/dup.txt!\n" +
				`[resource link "dup.txt": /mnt/user-data/workspace/a/dup.txt]` + "\n" +
				"Saved /mnt/user-data/workspace/b/dup.txt.\n" +
				"Saved as /mnt/user-data/workspace/b/dup.txt!\n" +
				`[resource link "dup.txt": /mnt/user-data/workspace/b/dup.txt]` + "\n" +
				"(dup.txt)"},
		{"bare name the call did not write", "f_echo", echo("notes.txt"), "Echo: notes.txt"},
		{"bare name rewritten again when modified", "f_write", write("notes.txt", "notes.txt"),
			"Saved /mnt/user-data/workspace/notes.txt.\n" +
				"Saved as /mnt/user-data/workspace/notes.txt!\n" +
				`[resource link "notes.txt": /mnt/user-data/workspace/notes.txt]` + "\n" +
				"/mnt/user-data/workspace/notes.txt"},
		{"file URI and relative path into uploads in text", "f_echo", echo("file://" + ws + "/notes.txt; ../uploads/in.pdf."),
			"Echo: /mnt/user-data/workspace/notes.txt; /mnt/user-data/uploads/in.pdf."},
		{"missing file in the tree is masked", "f_echo", echo(`"` + ws + `/missing.txt"`),
			`Echo: "/mnt/user-data/workspace/missing.txt"`},
		{"path outside the tree", "f_write", write("", outside),
			"Saved " + outside + ".\nSaved as " + outside + "!\n" + `[resource link "elsewhere.txt": file://` + outside + "]"},
		{"another thread's file", "f_echo", echo(other), "Echo: " + other},
		{"a URL", "f_echo", echo("https://example.com/out/report.md"), "Echo: https://example.com/out/report.md"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, isErr := callText(t, f.tools[tt.tool], call, tt.args)
			if isErr {
				t.Fatalf("error result: %s", got)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
	// Nothing was copied: the files are where the server wrote them.
	for _, p := range []string{"out/report.md", "notes.txt", "a/dup.txt", "b/dup.txt"} {
		if _, err := os.Stat(filepath.Join(ws, p)); err != nil {
			t.Error(err)
		}
	}
	if entries, _ := os.ReadDir(f.paths(t, "u", "t1").Outputs); len(entries) != 0 {
		t.Errorf("outputs has %d entries; nothing should be copied", len(entries))
	}
}

func TestStdioBareNamesNeedABoundedSnapshot(t *testing.T) {
	f := newPlaceFixture(t, true)
	many := filepath.Join(f.paths(t, "u", "t1").Workspace, "many")
	if err := os.MkdirAll(many, 0o755); err != nil {
		t.Fatal(err)
	}
	for i := range mcptools.MaxSnapshotFiles + 1 {
		if err := os.WriteFile(filepath.Join(many, strconv.Itoa(i)), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	got, _ := callText(t, f.tools["f_write"], &tool.Call{UserID: "u", ThreadID: "t1"}, `{"paths":["big.txt"],"say":"big.txt"}`)
	want := "Saved /mnt/user-data/workspace/big.txt.\nSaved as big.txt!\n" +
		`[resource link "big.txt": /mnt/user-data/workspace/big.txt]` + "\nbig.txt"
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

// Without a thread, or without Options.Layout, sessions run as before:
// Antler's working directory, no TMPDIR, results unchanged.
func TestStdioWithoutThreadOrLayoutUnchanged(t *testing.T) {
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name   string
		layout bool
		call   *tool.Call
	}{
		{"control session", true, &tool.Call{}},
		{"nil call", true, nil},
		{"zero Options", false, &tool.Call{UserID: "u", ThreadID: "t1"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newPlaceFixture(t, tt.layout)
			ws := f.paths(t, "u", "t1").Workspace
			if tt.call != nil {
				got, _ := report(t, f, "f", tt.call)
				if diff := cmp.Diff(fakePlace{Cwd: realPath(t, wd)}, fakePlace{Cwd: realPath(t, got.Cwd), TMPDIR: got.TMPDIR, TMP: got.TMP, TEMP: got.TEMP}); diff != "" {
					t.Errorf("(-want +got):\n%s", diff)
				}
			}
			p := filepath.Join(ws, "host.txt")
			got, _ := callText(t, f.tools["f_write"], tt.call, `{"paths":[`+strconv.Quote(p)+`]}`)
			want := "Saved " + p + ".\nSaved as " + p + "!\n" + `[resource link "host.txt": file://` + p + "]"
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
			if _, err := os.Stat(filepath.Join(ws, ".mcp")); err == nil {
				t.Error("workspace/.mcp was created")
			}
		})
	}
}

func TestStdioInvalidIDsWithLayout(t *testing.T) {
	f := newPlaceFixture(t, true)
	tests := []struct {
		name string
		call *tool.Call
		want string
	}{
		{"thread", &tool.Call{UserID: "u", ThreadID: "../t"},
			`Error: MCP server 'f' cannot run for this thread: Invalid thread id "../t": use 1-64 characters from A-Z, a-z, 0-9, _ and -`},
		{"empty user", &tool.Call{ThreadID: "t1"},
			`Error: MCP server 'f' cannot run for this thread: Invalid user id "": use 1-64 characters from A-Z, a-z, 0-9, _ and -`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, isErr := callText(t, f.tools["f_echo"], tt.call, `{"message":"x"}`)
			if !isErr || got != tt.want {
				t.Errorf("got %q (error %v), want %q", got, isErr, tt.want)
			}
		})
	}
}
