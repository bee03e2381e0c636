package browser_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/antlerhq/antler/community/browser"
	"github.com/antlerhq/antler/thread"
	"github.com/antlerhq/antler/tool"
	"github.com/antlerhq/antler/tool/tooltest"
)

// chromiumPath returns the Chromium the tests drive, or skips the test
// (fails it in CI, where ./scripts/test installs Chromium).
// ANTLER_TEST_CHROMIUM names one; otherwise the usual names are looked
// up on the PATH.
func chromiumPath(t *testing.T) string {
	t.Helper()
	if p := os.Getenv("ANTLER_TEST_CHROMIUM"); p != "" {
		return p
	}
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome", "google-chrome-stable"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	msg := "no Chromium: install it (apt-get install -y chromium) or set ANTLER_TEST_CHROMIUM to its path; ./scripts/test installs it in CI"
	if os.Getenv("CI") == "true" {
		t.Fatal(msg + " (CI=true: the browser tests must run)")
	}
	t.Skip(msg)
	return ""
}

// site is the test's web site on 127.0.0.1.
func site(t *testing.T) *httptest.Server {
	t.Helper()
	mux := http.NewServeMux()
	page := func(title, body string) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			fmt.Fprintf(w, "<!doctype html><html><head><title>%s</title></head><body>%s</body></html>", title, body)
		}
	}
	mux.HandleFunc("/{$}", page("Home", `<h1>Hello from the test page</h1>
<a href="/next">Next page</a>
<form action="/search" method="get"><input name="q" placeholder="Search"><button type="submit">Go</button></form>
<button style="display:none">Hidden</button>`))
	mux.HandleFunc("/next", page("Next", `<p>You reached the next page</p>`))
	mux.HandleFunc("/search", func(w http.ResponseWriter, r *http.Request) {
		page("Results", "<p>Results for "+r.URL.Query().Get("q")+"</p>")(w, r)
	})
	mux.HandleFunc("/long", page("Long", "<p>"+strings.Repeat("word ", 5000)+"</p>"))
	mux.HandleFunc("/set-cookie", func(w http.ResponseWriter, r *http.Request) {
		http.SetCookie(w, &http.Cookie{Name: "who", Value: r.URL.Query().Get("v"), Path: "/"})
		page("Cookie set", "<p>set</p>")(w, r)
	})
	mux.HandleFunc("/show-cookie", func(w http.ResponseWriter, r *http.Request) {
		c, err := r.Cookie("who")
		v := "none"
		if err == nil {
			v = c.Value
		}
		page("Cookie", "<p>cookie="+v+"</p>")(w, r)
	})
	mux.HandleFunc("/redirect-private", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "http://127.0.0.1:"+r.URL.Query().Get("port")+"/secret", http.StatusFound)
	})
	mux.HandleFunc("/secret", page("Secret", "<p>the private secret</p>"))
	mux.HandleFunc("/leaky-image", page("Leaky", `<p>public page</p><img src="http://169.254.169.254/latest/meta-data">`))
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv
}

// env is a manager and tools for one test.
type env struct {
	m     *browser.Manager
	tools map[string]*tool.Tool
	out   string
}

func newEnv(t *testing.T, o browser.Options) *env {
	t.Helper()
	m := browser.NewManager(browser.ManagerOptions{ExecPath: chromiumPath(t)})
	t.Cleanup(func() { _ = m.Close() })
	ts, err := browser.NewTools(m, o)
	if err != nil {
		t.Fatal(err)
	}
	e := &env{m: m, tools: map[string]*tool.Tool{}, out: t.TempDir()}
	for _, tl := range ts.All(0) {
		e.tools[tl.Name] = tl
	}
	return e
}

// call runs tool name in thread with args and returns its result.
func (e *env) call(t *testing.T, threadID, name string, args any) *tool.Result {
	t.Helper()
	raw, err := json.Marshal(args)
	if err != nil {
		t.Fatal(err)
	}
	c := &tool.Call{ID: "c1", Name: name, ThreadID: threadID,
		State: &thread.State{ThreadData: &thread.ThreadData{OutputsPath: e.out}}}
	res, err := tool.Invoke(t.Context(), e.tools[name].Handler, c, raw)
	if err != nil {
		t.Fatalf("%s: Go error %v", name, err)
	}
	return res
}

func text(r *tool.Result) string { return r.TextContent() }

// refOf returns the [ref] number of the snapshot line naming name.
func refOf(t *testing.T, snapshot, name string) int {
	t.Helper()
	for line := range strings.Lines(snapshot) {
		var ref int
		if _, err := fmt.Sscanf(line, "[%d]", &ref); err == nil && strings.Contains(line, name) {
			return ref
		}
	}
	t.Fatalf("no element %q in the snapshot:\n%s", name, snapshot)
	return 0
}

func mustOK(t *testing.T, r *tool.Result) string {
	t.Helper()
	if r.IsError {
		t.Fatalf("error result: %s", text(r))
	}
	return text(r)
}

func local() browser.Options { return browser.Options{AllowPrivateAddresses: true} }

// TestBrowserFlow drives one thread through every tool against a real
// Chromium: navigate, snapshot, click, back, type with submit, get_text,
// screenshot into outputs, close.
func TestBrowserFlow(t *testing.T) {
	srv := site(t)
	e := newEnv(t, local())

	home := mustOK(t, e.call(t, "t1", "browser_navigate", map[string]any{"url": srv.URL + "/"}))
	for _, want := range []string{"Navigated to " + srv.URL + "/.", "Title: Home", "a: Next page", "input: q", "button type=submit: Go"} {
		if !strings.Contains(home, want) {
			t.Errorf("navigate result lacks %q:\n%s", want, home)
		}
	}
	if strings.Contains(home, "Hidden") {
		t.Errorf("the snapshot lists a hidden element:\n%s", home)
	}
	if again := mustOK(t, e.call(t, "t1", "browser_snapshot", map[string]any{})); !strings.Contains(again, "Title: Home") {
		t.Errorf("snapshot: %s", again)
	}

	next := mustOK(t, e.call(t, "t1", "browser_click", map[string]any{"ref": refOf(t, home, "Next page")}))
	if !strings.Contains(next, "Title: Next") || !strings.Contains(next, srv.URL+"/next") {
		t.Errorf("click did not reach the next page:\n%s", next)
	}
	if got := mustOK(t, e.call(t, "t1", "browser_get_text", map[string]any{})); got != "You reached the next page" {
		t.Errorf("get_text = %q", got)
	}

	back := mustOK(t, e.call(t, "t1", "browser_back", map[string]any{}))
	if !strings.Contains(back, "Went back.") || !strings.Contains(back, "Title: Home") {
		t.Errorf("back:\n%s", back)
	}

	typed := mustOK(t, e.call(t, "t1", "browser_type", map[string]any{"ref": refOf(t, back, "input: q"), "text": "otters", "submit": true}))
	if !strings.Contains(typed, "Title: Results") {
		t.Errorf("type with submit did not send the form:\n%s", typed)
	}
	if got := mustOK(t, e.call(t, "t1", "browser_get_text", map[string]any{})); got != "Results for otters" {
		t.Errorf("get_text after the search = %q", got)
	}

	shot := e.call(t, "t1", "browser_screenshot", map[string]any{"filename": "../evil/results.jpg"})
	if got, want := mustOK(t, shot), "Saved browser screenshot: /mnt/user-data/outputs/results.png"; got != want {
		t.Errorf("screenshot result = %q, want %q", got, want)
	}
	if shot.Update == nil || !cmp.Equal(shot.Update.Artifacts, []string{"/mnt/user-data/outputs/results.png"}) {
		t.Errorf("screenshot update = %+v", shot.Update)
	}
	png, err := os.ReadFile(filepath.Join(e.out, "results.png"))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.HasPrefix(png, []byte("\x89PNG\r\n\x1a\n")) {
		t.Errorf("outputs/results.png is not a PNG (%d bytes)", len(png))
	}

	done := e.m.SessionDone("t1")
	if got := mustOK(t, e.call(t, "t1", "browser_close", map[string]any{})); got != "Browser session closed." {
		t.Errorf("close = %q", got)
	}
	e.m.WaitClosed()
	select {
	case <-done:
	default:
		t.Error("the browser still runs after browser_close")
	}
	if got := mustOK(t, e.call(t, "t1", "browser_close", map[string]any{})); got != "No active browser session to close." {
		t.Errorf("second close = %q", got)
	}
	if r := e.call(t, "t1", "browser_snapshot", map[string]any{}); !r.IsError || !strings.Contains(text(r), "browser_navigate") {
		t.Errorf("snapshot after close = %q, want the no-session error", text(r))
	}
}

// TestBrowserModelErrors checks the failures the model can fix: a stale
// ref, a non-text field, no history, no session, a cut text.
func TestBrowserModelErrors(t *testing.T) {
	srv := site(t)
	e := newEnv(t, local())
	for _, name := range []string{"browser_snapshot", "browser_click", "browser_get_text", "browser_back", "browser_screenshot"} {
		args := map[string]any{}
		if name == "browser_click" {
			args["ref"] = 1
		}
		if r := e.call(t, "fresh", name, args); !r.IsError || !strings.Contains(text(r), "no browser session is open") {
			t.Errorf("%s without a session = %q", name, text(r))
		}
	}
	if len(e.m.Threads()) != 0 {
		t.Errorf("calls without a session started one: %v", e.m.Threads())
	}
	home := mustOK(t, e.call(t, "t1", "browser_navigate", map[string]any{"url": srv.URL + "/"}))
	tests := []struct {
		name, tool string
		args       map[string]any
		want       string
	}{
		{"stale ref", "browser_click", map[string]any{"ref": 99}, "element [99] is no longer on the page"},
		{"link is not a text field", "browser_type", map[string]any{"ref": refOf(t, home, "Next page"), "text": "x"}, "is a a, not a text field"},
		{"no history", "browser_back", map[string]any{}, "no previous page"},
		{"text too long", "browser_type", map[string]any{"ref": 1, "text": strings.Repeat("x", 10_001)}, "at most 10000"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := e.call(t, "t1", tt.tool, tt.args)
			if !r.IsError || !strings.HasPrefix(text(r), "Error: ") || !strings.Contains(text(r), tt.want) {
				t.Errorf("%s = %q, want an error with %q", tt.tool, text(r), tt.want)
			}
		})
	}
	mustOK(t, e.call(t, "t1", "browser_navigate", map[string]any{"url": srv.URL + "/long"}))
	got := mustOK(t, e.call(t, "t1", "browser_get_text", map[string]any{}))
	if !strings.HasSuffix(got, "[cut at 8000 characters]") || len([]rune(got)) > 8000+40 {
		t.Errorf("long page text: %d characters, ends %q", len([]rune(got)), got[max(0, len(got)-40):])
	}
}

// TestBrowserThreadsAreIsolated checks that two threads get two browsers
// that share no cookies and no page.
func TestBrowserThreadsAreIsolated(t *testing.T) {
	srv := site(t)
	e := newEnv(t, local())
	mustOK(t, e.call(t, "a", "browser_navigate", map[string]any{"url": srv.URL + "/set-cookie?v=alice"}))
	mustOK(t, e.call(t, "b", "browser_navigate", map[string]any{"url": srv.URL + "/next"}))
	mustOK(t, e.call(t, "a", "browser_navigate", map[string]any{"url": srv.URL + "/show-cookie"}))
	mustOK(t, e.call(t, "b", "browser_navigate", map[string]any{"url": srv.URL + "/show-cookie"}))
	if got := mustOK(t, e.call(t, "a", "browser_get_text", map[string]any{})); got != "cookie=alice" {
		t.Errorf("thread a reads %q", got)
	}
	if got := mustOK(t, e.call(t, "b", "browser_get_text", map[string]any{})); got != "cookie=none" {
		t.Errorf("thread b reads %q: it shares thread a's cookies", got)
	}
	if a, b := e.m.ProxyAddr("a"), e.m.ProxyAddr("b"); a == "" || a == b {
		t.Errorf("threads share a browser: proxies %q and %q", a, b)
	}
	mustOK(t, e.call(t, "a", "browser_close", map[string]any{}))
	if got := mustOK(t, e.call(t, "b", "browser_get_text", map[string]any{})); got != "cookie=none" {
		t.Errorf("closing thread a disturbed thread b: %q", got)
	}
}

// TestBrowserCloseThread checks what the end of a run does: the thread's
// browser stops, the guard proxy with it, and others stay.
func TestBrowserCloseThread(t *testing.T) {
	srv := site(t)
	e := newEnv(t, local())
	mustOK(t, e.call(t, "run1", "browser_navigate", map[string]any{"url": srv.URL + "/"}))
	mustOK(t, e.call(t, "other", "browser_navigate", map[string]any{"url": srv.URL + "/"}))
	done, proxy := e.m.SessionDone("run1"), e.m.ProxyAddr("run1")
	if !e.m.CloseThread("run1") {
		t.Fatal("CloseThread found no session")
	}
	if e.m.CloseThread("run1") {
		t.Error("a second CloseThread found a session")
	}
	e.m.WaitClosed()
	select {
	case <-done:
	default:
		t.Error("the browser still runs")
	}
	if c, err := net.Dial("tcp", proxy); err == nil {
		c.Close()
		t.Error("the guard proxy still listens")
	}
	if diff := cmp.Diff([]string{"other"}, e.m.Threads()); diff != "" {
		t.Errorf("threads (-want +got):\n%s", diff)
	}
	if err := e.m.Close(); err != nil {
		t.Fatal(err)
	}
	if len(e.m.Threads()) != 0 {
		t.Errorf("Close left %v", e.m.Threads())
	}
	if r := e.call(t, "x", "browser_navigate", map[string]any{"url": srv.URL + "/"}); !r.IsError || !strings.Contains(text(r), "closed") {
		t.Errorf("navigate after Close = %q", text(r))
	}
}

// publicResolver resolves public.test to a public address; every other
// name fails.
type publicResolver struct{}

func (publicResolver) LookupIPAddr(_ context.Context, host string) ([]net.IPAddr, error) {
	if host == "public.test" {
		return []net.IPAddr{{IP: net.ParseIP("93.184.216.34")}}, nil
	}
	return nil, &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}
}

// guarded is Options with the SSRF guard on, where public.test is a
// public site served by srv.
func guarded(srv *httptest.Server) browser.Options {
	addr := srv.Listener.Addr().String()
	return browser.Options{Resolver: publicResolver{},
		Dial: func(ctx context.Context, network, _ string) (net.Conn, error) {
			var d net.Dialer
			return d.DialContext(ctx, network, addr)
		}}
}

// TestBrowserSSRFGuard checks the guard on the navigated URL (before any
// browser starts) and, through the session's proxy, on a redirect and a
// subresource of a public page.
func TestBrowserSSRFGuard(t *testing.T) {
	srv := site(t)
	e := newEnv(t, guarded(srv))
	refused := []struct{ name, url, want string }{
		{"loopback", srv.URL + "/secret", "Refusing to browse a private, loopback, or metadata address"},
		{"metadata", "http://169.254.169.254/latest/meta-data", "Refusing to browse"},
		{"localhost name", "http://localhost/", "Refusing to browse"},
		{"file scheme", "file:///etc/passwd", "Only http:// and https:// URLs are supported"},
		{"javascript scheme", "javascript:alert(1)", "Only http:// and https:// URLs are supported"},
	}
	for _, tt := range refused {
		t.Run(tt.name, func(t *testing.T) {
			r := e.call(t, "t1", "browser_navigate", map[string]any{"url": tt.url})
			if !r.IsError || !strings.Contains(text(r), tt.want) {
				t.Errorf("navigate %s = %q, want an error with %q", tt.url, text(r), tt.want)
			}
		})
	}
	if len(e.m.Threads()) != 0 {
		t.Fatalf("a refused navigation started a browser: %v", e.m.Threads())
	}

	port := srv.Listener.Addr().(*net.TCPAddr).Port
	t.Run("redirect to loopback", func(t *testing.T) {
		got := mustOK(t, e.call(t, "t1", "browser_navigate", map[string]any{"url": fmt.Sprintf("http://public.test/redirect-private?port=%d", port)}))
		if !strings.Contains(got, fmt.Sprintf("http://127.0.0.1:%d/secret (Refusing to browse", port)) {
			t.Errorf("no refusal note:\n%s", got)
		}
		if body := mustOK(t, e.call(t, "t1", "browser_get_text", map[string]any{})); strings.Contains(body, "private secret") {
			t.Errorf("the redirect reached the private page: %q", body)
		}
	})
	t.Run("subresource", func(t *testing.T) {
		got := mustOK(t, e.call(t, "t1", "browser_navigate", map[string]any{"url": "http://public.test/leaky-image"}))
		if !strings.Contains(got, "Title: Leaky") || !strings.Contains(got, "http://169.254.169.254/latest/meta-data (Refusing to browse") {
			t.Errorf("the metadata image was not refused:\n%s", got)
		}
	})
	t.Run("public page", func(t *testing.T) {
		got := mustOK(t, e.call(t, "t1", "browser_navigate", map[string]any{"url": "http://public.test/next"}))
		if !strings.Contains(got, "Title: Next") || strings.Contains(got, "refused") {
			t.Errorf("public page:\n%s", got)
		}
	})
}

// TestBrowserContract runs the tool contract suite over the eight tools
// (names, schemas, the error channel, cancellation); it needs no
// Chromium: a cancelled call never starts one.
func TestBrowserContract(t *testing.T) {
	m := browser.NewManager(browser.ManagerOptions{})
	t.Cleanup(func() { _ = m.Close() })
	ts, err := browser.NewTools(m, browser.Options{})
	if err != nil {
		t.Fatal(err)
	}
	samples := map[string]tooltest.Sample{
		"browser_navigate":   {Args: []byte(`{"url":"https://example.com"}`)},
		"browser_snapshot":   {Args: []byte(`{}`)},
		"browser_click":      {Args: []byte(`{"ref":1}`)},
		"browser_type":       {Args: []byte(`{"ref":1,"text":"x","submit":true}`)},
		"browser_get_text":   {Args: []byte(`{}`)},
		"browser_back":       {Args: []byte(`{}`)},
		"browser_screenshot": {Args: []byte(`{"filename":"a.png","full_page":true}`)},
		"browser_close":      {Args: []byte(`{}`), Live: true},
	}
	tooltest.Run(t, ts.All(0), tooltest.Options{Samples: samples})
	if len(m.Threads()) != 0 {
		t.Errorf("the suite started sessions: %v", m.Threads())
	}
}

// TestBrowserOptions checks the bounds of the options and the refusal of
// cdp_url, which Antler does not implement.
func TestBrowserOptions(t *testing.T) {
	m := browser.NewManager(browser.ManagerOptions{})
	t.Cleanup(func() { _ = m.Close() })
	bad := []struct {
		name string
		o    browser.Options
		want string
	}{
		{"negative timeout", browser.Options{TimeoutMS: -1}, "timeout_ms -1"},
		{"huge timeout", browser.Options{TimeoutMS: 600_000}, "timeout_ms 600000"},
		{"wide viewport", browser.Options{ViewportWidth: 5000}, "viewport_width 5000"},
		{"negative height", browser.Options{ViewportHeight: -2}, "viewport_height -2"},
	}
	for _, tt := range bad {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := browser.NewTools(m, tt.o); err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("NewTools = %v, want an error with %q", err, tt.want)
			}
		})
	}
	if _, err := browser.NewTools(nil, browser.Options{}); err == nil {
		t.Error("NewTools without a manager: no error")
	}
	cdp := []struct {
		name string
		o    browser.Options
		want string
	}{
		{"unguarded not allowed", browser.Options{CDPURL: "http://127.0.0.1:9222"}, "set allow_unguarded_cdp: true only"},
		{"not supported", browser.Options{CDPURL: "http://127.0.0.1:9222", AllowUnguardedCDP: true}, "not supported by Antler"},
	}
	for _, tt := range cdp {
		t.Run(tt.name, func(t *testing.T) {
			ts, err := browser.NewTools(m, tt.o)
			if err != nil {
				t.Fatal(err)
			}
			res, err := tool.Invoke(t.Context(), ts.Navigate().Handler, &tool.Call{ThreadID: "t"}, []byte(`{"url":"https://example.com"}`))
			if err != nil || !res.IsError || !strings.Contains(res.TextContent(), tt.want) {
				t.Errorf("navigate with cdp_url = %v, %v; want an error result with %q", res, err, tt.want)
			}
		})
	}
}

// TestBrowserManagerBounds checks the session cap (the least recently
// used session makes room) and idle eviction, on a fake clock.
func TestBrowserManagerBounds(t *testing.T) {
	srv := site(t)
	now := time.Unix(1_700_000_000, 0)
	var mu sync.Mutex
	clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	advance := func(d time.Duration) { mu.Lock(); now = now.Add(d); mu.Unlock() }
	m := browser.NewManager(browser.ManagerOptions{ExecPath: chromiumPath(t), MaxSessions: 2, IdleTimeout: time.Hour, Now: clock})
	t.Cleanup(func() { _ = m.Close() })
	ts, err := browser.NewTools(m, local())
	if err != nil {
		t.Fatal(err)
	}
	nav := ts.Navigate()
	open := func(thread string) {
		t.Helper()
		res, err := tool.Invoke(t.Context(), nav.Handler, &tool.Call{ThreadID: thread}, []byte(`{"url":"`+srv.URL+`/"}`))
		if err != nil || res.IsError {
			t.Fatalf("navigate in %s: %v %v", thread, res.TextContent(), err)
		}
	}
	open("a")
	advance(time.Minute)
	open("b")
	advance(time.Minute)
	open("a") // a is now the most recently used
	advance(time.Minute)
	open("c")
	got := m.Threads()
	slices.Sort(got)
	if diff := cmp.Diff([]string{"a", "c"}, got); diff != "" {
		t.Errorf("after a third thread at a cap of 2 (-want +got):\n%s", diff)
	}
	advance(56 * time.Minute) // a idle 57 minutes, c 56
	m.EvictIdle()
	if got := m.Threads(); len(got) != 2 {
		t.Errorf("sessions idle under an hour were evicted: %v", got)
	}
	advance(3*time.Minute + 30*time.Second) // a idle 60.5 minutes, c 59.5
	m.EvictIdle()
	if got := m.Threads(); len(got) != 1 || got[0] != "c" {
		t.Errorf("after a's idle hour: %v, want [c]", got)
	}
	advance(time.Hour)
	m.EvictIdle()
	m.WaitClosed()
	if got := m.Threads(); len(got) != 0 {
		t.Errorf("idle sessions left: %v", got)
	}
}

// TestBrowserScreenshotStaysInTheThread: with Options.Outputs, the
// screenshot is written under the thread's folder, and an outputs folder
// replaced by a symlink to elsewhere is refused, not followed.
func TestBrowserScreenshotStaysInTheThread(t *testing.T) {
	srv := site(t)
	base, elsewhere := t.TempDir(), t.TempDir()
	o := local()
	o.Outputs = func(user, thread string) (string, string, error) {
		return filepath.Join(base, user, thread), "user-data/outputs", nil
	}
	e := newEnv(t, o)
	shoot := func(thread string) *tool.Result {
		mustOK(t, e.call(t, thread, "browser_navigate", map[string]any{"url": srv.URL + "/"}))
		res, err := tool.Invoke(t.Context(), e.tools["browser_screenshot"].Handler,
			&tool.Call{ThreadID: thread, UserID: "u1"}, []byte(`{"filename":"page"}`))
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	mustOK(t, shoot("good"))
	if _, err := os.Stat(filepath.Join(base, "u1", "good", "user-data", "outputs", "page.png")); err != nil {
		t.Errorf("screenshot not in the thread's outputs: %v", err)
	}
	if err := os.MkdirAll(filepath.Join(base, "u1", "bad", "user-data"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(elsewhere, filepath.Join(base, "u1", "bad", "user-data", "outputs")); err != nil {
		t.Fatal(err)
	}
	if r := shoot("bad"); !r.IsError {
		t.Errorf("a symlinked outputs folder was followed: %q", text(r))
	}
	if entries, _ := os.ReadDir(elsewhere); len(entries) != 0 {
		t.Errorf("the screenshot escaped into %s: %v", elsewhere, entries)
	}
}

// TestBrowserRestartsAfterACrash: when the thread's Chromium has died,
// the next call starts a new one instead of failing forever.
func TestBrowserRestartsAfterACrash(t *testing.T) {
	srv := site(t)
	e := newEnv(t, local())
	mustOK(t, e.call(t, "t1", "browser_navigate", map[string]any{"url": srv.URL + "/"}))
	e.m.KillBrowser("t1")
	got := mustOK(t, e.call(t, "t1", "browser_navigate", map[string]any{"url": srv.URL + "/next"}))
	if !strings.Contains(got, "Title: Next") {
		t.Errorf("after the crash:\n%s", got)
	}
}
