package mcptools_test

import (
	"encoding/json"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/antlerhq/antler/mcptools"
	"github.com/antlerhq/antler/tool"
)

// The real npm MCP servers pinned in testdata/peers (testdata/peers/package.json).
// Install them with: npm ci --prefix testdata/peers

var peersDir = filepath.Join("..", "testdata", "peers", "node_modules", "@modelcontextprotocol")

// npmServer returns the absolute path of a server's entry point, skipping
// the test when the peers are not installed.
func npmServer(t testing.TB, pkg string) (node, script string) {
	t.Helper()
	node, err := exec.LookPath("node")
	if err != nil {
		t.Skip("node is not installed; the npm MCP peers cannot run")
	}
	script, _ = filepath.Abs(filepath.Join(peersDir, pkg, "dist", "index.js"))
	if _, err := os.Stat(script); err != nil {
		t.Skipf("%s is not installed; run: npm ci --prefix testdata/peers", pkg)
	}
	return node, script
}

func stdioJSON(command string, args []string, env map[string]string) string {
	b, _ := json.Marshal(map[string]any{"type": "stdio", "command": command, "args": args, "env": env})
	return string(b)
}

// httpPeers are the npm HTTP servers shared by the tests of this package,
// one per mode, stopped by TestMain.
var httpPeers struct {
	mu    sync.Mutex
	urls  map[string]string
	procs []*exec.Cmd
}

// everythingHTTP starts (once) server-everything in mode "sse" or
// "streamableHttp" and returns its endpoint URL on 127.0.0.1. The server
// has no host flag and listens on every interface; the tests only ever
// connect to 127.0.0.1.
func everythingHTTP(t *testing.T, mode string) string {
	node, script := npmServer(t, "server-everything")
	httpPeers.mu.Lock()
	defer httpPeers.mu.Unlock()
	if u := httpPeers.urls[mode]; u != "" {
		return u
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	cmd := exec.Command(node, script, mode)
	cmd.Env = append(os.Environ(), fmt.Sprintf("PORT=%d", port))
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	httpPeers.procs = append(httpPeers.procs, cmd)
	addr := fmt.Sprintf("127.0.0.1:%d", port)
	deadline := time.Now().Add(15 * time.Second)
	for {
		c, err := net.DialTimeout("tcp", addr, 200*time.Millisecond)
		if err == nil {
			c.Close()
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("server-everything %s did not listen on %s", mode, addr)
		}
		time.Sleep(50 * time.Millisecond)
	}
	path := map[string]string{"sse": "/sse", "streamableHttp": "/mcp"}[mode]
	if httpPeers.urls == nil {
		httpPeers.urls = map[string]string{}
	}
	httpPeers.urls[mode] = "http://" + addr + path
	return httpPeers.urls[mode]
}

func stopPeers() {
	if dir, ok := goExampleDir.Load().(string); ok {
		os.RemoveAll(dir)
	}
	httpPeers.mu.Lock()
	defer httpPeers.mu.Unlock()
	for _, cmd := range httpPeers.procs {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGTERM)
		done := make(chan struct{})
		go func() { cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(3 * time.Second):
			_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
			<-done
		}
	}
}

// checkEverything runs the checks shared by every transport of
// server-everything.
func checkEverything(t *testing.T, m *mcptools.Manager, prefix string) map[string]*tool.Tool {
	t.Helper()
	tools := toolsByName(t, m)
	for _, name := range []string{"echo", "get-sum", "get-env", "get-tiny-image", "get-structured-content", "get-resource-links"} {
		if tools[prefix+name] == nil {
			t.Fatalf("no tool %s in %v", prefix+name, keys(tools))
		}
	}
	if got, _ := callText(t, tools[prefix+"echo"], &tool.Call{}, `{"message":"hello"}`); got != "Echo: hello" {
		t.Errorf("echo = %q", got)
	}
	if got, _ := callText(t, tools[prefix+"get-sum"], &tool.Call{}, `{"a":2,"b":3}`); got != "The sum of 2 and 3 is 5." {
		t.Errorf("get-sum = %q", got)
	}
	res, err := tools[prefix+"get-tiny-image"].Handler(t.Context(), &tool.Call{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !hasImage(res, "image/png") {
		t.Errorf("get-tiny-image: no image/png block in %+v", res.Content)
	}
	res, err = tools[prefix+"get-structured-content"].Handler(t.Context(), &tool.Call{}, json.RawMessage(`{"location":"New York"}`))
	if err != nil || res.IsError {
		t.Fatalf("get-structured-content: %q %v", resultText(res), err)
	}
	art, _ := res.Artifact.(map[string]any)
	if sc, ok := art["structured_content"].(map[string]any); !ok || len(sc) == 0 {
		t.Errorf("get-structured-content artifact = %#v", res.Artifact)
	}
	if got, _ := callText(t, tools[prefix+"get-resource-links"], &tool.Call{}, `{"count":2}`); !strings.Contains(got, "[resource link") {
		t.Errorf("get-resource-links = %q", got)
	}
	return tools
}

func keys(m map[string]*tool.Tool) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}

func hasImage(r *tool.Result, mime string) bool {
	for _, b := range r.Content {
		if b.Type == tool.BlockImage && b.MIMEType == mime && len(b.Data) > 0 {
			return true
		}
	}
	return false
}

func TestNPMEverythingStdio(t *testing.T) {
	t.Parallel()
	node, script := npmServer(t, "server-everything")
	ext := parseExt(t, `{"everything": `+stdioJSON(node, []string{script, "stdio"}, map[string]string{"ANTLER_PASS": "through"})+`}`)
	m := newManager(t, mcptools.Options{Extensions: mcptools.Static(ext)})
	tools := checkEverything(t, m, "everything_")

	env, _ := callText(t, tools["everything_get-env"], &tool.Call{}, "")
	if !strings.Contains(env, `"ANTLER_PASS": "through"`) && !strings.Contains(env, `"ANTLER_PASS":"through"`) {
		t.Errorf("get-env lacks ANTLER_PASS: %.300s", env)
	}
	if strings.Contains(env, `"GOCACHE"`) || strings.Contains(env, `"GOROOT"`) {
		t.Error("get-env shows a variable that is not in the inherited list") // the rest is tested with the fake server
	}

	// Progress (trigger-long-running-operation sends one per step).
	events := make(chan tool.Progress, 10)
	call := &tool.Call{ID: "p", Emit: func(name string, data any) { events <- data.(tool.Progress) }}
	if got, isErr := callText(t, tools["everything_trigger-long-running-operation"], call, `{"duration":1,"steps":2}`); isErr {
		t.Errorf("long-running: %q", got)
	}
	select {
	case ev := <-events:
		if ev.Total != 2 || ev.Tool != "trigger-long-running-operation" {
			t.Errorf("progress = %+v", ev)
		}
	case <-time.After(5 * time.Second):
		t.Error("no progress event")
	}

	// The server registers simulate-research-query after initialized and
	// sends tools/list_changed; it must show up (at the latest on re-list).
	deadline := time.Now().Add(5 * time.Second)
	for !contains(names(mustTools(t, m)), "everything_simulate-research-query") {
		if time.Now().After(deadline) {
			t.Fatal("simulate-research-query never appeared")
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func mustTools(t *testing.T, m *mcptools.Manager) []*tool.Tool {
	t.Helper()
	tools, err := m.Tools(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	return tools
}

func TestNPMEverythingHTTP(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ typ, mode string }{{"sse", "sse"}, {"http", "streamableHttp"}} {
		t.Run(tc.typ, func(t *testing.T) {
			u := everythingHTTP(t, tc.mode)
			ext := parseExt(t, fmt.Sprintf(`{"ev": {"type": %q, "url": %q, "headers": {"X-Antler": "yes"}}}`, tc.typ, u))
			m := newManager(t, mcptools.Options{Extensions: mcptools.Static(ext)})
			checkEverything(t, m, "ev_")
			if st := statusByName(m)["ev"]; st.Sessions != 1 {
				t.Errorf("%d sessions after several calls, want 1 shared session", st.Sessions)
			}
		})
	}
}

func TestNPMFilesystem(t *testing.T) {
	t.Parallel()
	node, script := npmServer(t, "server-filesystem")
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "note.txt"), []byte("hello from a file"), 0o600); err != nil {
		t.Fatal(err)
	}
	ext := parseExt(t, `{"fs": `+stdioJSON(node, []string{script, dir}, nil)+`}`)
	m := newManager(t, mcptools.Options{Extensions: mcptools.Static(ext)})
	tools := toolsByName(t, m, "fs_read_text_file", "fs_list_directory")
	if got, isErr := callText(t, tools["fs_read_text_file"], &tool.Call{}, `{"path":"`+filepath.Join(dir, "note.txt")+`"}`); isErr || got != "hello from a file" {
		t.Errorf("read_text_file = %q (error %v)", got, isErr)
	}
	if got, _ := callText(t, tools["fs_list_directory"], &tool.Call{}, `{"path":"`+dir+`"}`); !strings.Contains(got, "note.txt") {
		t.Errorf("list_directory = %q", got)
	}
	if got, isErr := callText(t, tools["fs_read_text_file"], &tool.Call{}, `{"path":"/etc/hostname"}`); !isErr || !strings.Contains(got, "Access denied") {
		t.Errorf("outside the allowed dir: %q (error %v)", got, isErr)
	}
}

func TestNPMMemory(t *testing.T) {
	t.Parallel()
	node, script := npmServer(t, "server-memory")
	mem := filepath.Join(t.TempDir(), "mem.jsonl")
	ext := parseExt(t, `{"memory": `+stdioJSON(node, []string{script}, map[string]string{"MEMORY_FILE_PATH": mem})+`}`)
	m := newManager(t, mcptools.Options{Extensions: mcptools.Static(ext)})
	tools := toolsByName(t, m, "memory_create_entities", "memory_read_graph")
	if got, isErr := callText(t, tools["memory_create_entities"], &tool.Call{},
		`{"entities":[{"name":"Antler","entityType":"project","observations":["written in Go"]}]}`); isErr {
		t.Fatalf("create_entities: %q", got)
	}
	res, err := tools["memory_read_graph"].Handler(t.Context(), &tool.Call{}, nil)
	if err != nil || !strings.Contains(resultText(res), "written in Go") || res.Artifact == nil {
		t.Errorf("read_graph = %q artifact=%v err=%v", resultText(res), res.Artifact, err)
	}
	if data, err := os.ReadFile(mem); err != nil || !strings.Contains(string(data), "Antler") {
		t.Errorf("memory file: %q %v", data, err)
	}
}
