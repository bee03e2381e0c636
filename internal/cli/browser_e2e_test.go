package cli

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/antlerhq/antler/community/browser"
	"github.com/antlerhq/antler/model"
	"github.com/antlerhq/antler/model/modeltest"
)

// browserConfig enables DeerFlow's eight browser tools, as its
// config.example.yaml writes them, with the guard off for the test's
// 127.0.0.1 site.
const browserConfig = `models:
  - name: first
    use: langchain_openai:ChatOpenAI
    model: scripted
    api_key: modeltest
    base_url: %s
tools:
  - name: browser_navigate
    group: browser
    use: deerflow.community.browser_automation.tools:browser_navigate_tool
    headless: true
    timeout_ms: 30000
    viewport_width: 1280
    viewport_height: 720
    allow_private_addresses: true
  - {name: browser_snapshot, group: browser, use: deerflow.community.browser_automation.tools:browser_snapshot_tool}
  - {name: browser_click, group: browser, use: deerflow.community.browser_automation.tools:browser_click_tool}
  - {name: browser_type, group: browser, use: deerflow.community.browser_automation.tools:browser_type_tool}
  - {name: browser_get_text, group: browser, use: deerflow.community.browser_automation.tools:browser_get_text_tool, max_chars: 8000}
  - {name: browser_back, group: browser, use: deerflow.community.browser_automation.tools:browser_back_tool}
  - {name: browser_screenshot, group: browser, use: deerflow.community.browser_automation.tools:browser_screenshot_tool}
  - {name: browser_close, group: browser, use: deerflow.community.browser_automation.tools:browser_close_tool}
`

// TestToolsListBrowser: tools list assembles the eight browser tools
// from DeerFlow's config lines, without starting a browser.
func TestToolsListBrowser(t *testing.T) {
	dir := t.TempDir()
	cfg := writeFile(t, dir, "config.yaml", fmt.Sprintf(browserConfig, "http://127.0.0.1:1"))
	code, out, errOut := runCLI(t, nil, "--config", cfg, "--home", filepath.Join(dir, "home"), "tools", "list", "--json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	for _, name := range []string{"browser_navigate", "browser_snapshot", "browser_click", "browser_type",
		"browser_get_text", "browser_back", "browser_screenshot", "browser_close"} {
		if !strings.Contains(out, `"name": "`+name+`"`) && !strings.Contains(out, `"name":"`+name+`"`) {
			t.Errorf("tools list lacks %s:\n%s", name, out)
		}
	}
}

// TestE2EBrowser_sessionLivesForOneRun drives a real Chromium through
// chat: the first turn navigates to a local page and saves a screenshot
// into the thread's outputs; the second turn finds no browser, because
// the first run's end closed it.
func TestE2EBrowser_sessionLivesForOneRun(t *testing.T) {
	if _, err := findChromium(); err != nil {
		msg := "no Chromium: install it (apt-get install -y chromium); ./scripts/test installs it in CI"
		if os.Getenv("CI") == "true" {
			t.Fatal(msg + " (CI=true: the browser tests must run)")
		}
		t.Skip(msg)
	}
	site := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, `<!doctype html><title>Antler test</title><p>Hello from the browser test</p><a href="/x">More</a>`)
	}))
	t.Cleanup(site.Close)

	var mu sync.Mutex
	var results []string
	capture := func(text string) modeltest.Turn {
		return modeltest.Turn{Func: func(req *model.Request) modeltest.Turn {
			mu.Lock()
			defer mu.Unlock()
			for _, m := range req.Messages[max(0, len(req.Messages)-1):] {
				if m.Role == model.RoleTool {
					results = append(results, m.Content)
				}
			}
			return modeltest.Turn{Text: text}
		}}
	}
	srv := modeltest.NewServer(t,
		modeltest.Turn{ToolCalls: []model.ToolCall{toolCall("c1", "browser_navigate", `{"url":"`+site.URL+`/"}`)}},
		modeltest.Turn{Func: func(req *model.Request) modeltest.Turn {
			mu.Lock()
			results = append(results, modeltest.LastMessage(req).Content)
			mu.Unlock()
			return modeltest.Turn{ToolCalls: []model.ToolCall{toolCall("c2", "browser_screenshot", `{"filename":"home"}`)}}
		}},
		capture("seen"),
		modeltest.Turn{ToolCalls: []model.ToolCall{toolCall("c3", "browser_get_text", `{}`)}},
		capture("gone"))
	dir := t.TempDir()
	cfg := writeFile(t, dir, "config.yaml", fmt.Sprintf(browserConfig, srv.URL))
	home := filepath.Join(dir, "home")
	code, _, errOut := chatCLI(t, cfg, home, "look at the page\nread it again\nexit\n", "--thread", "t1")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(results) != 3 {
		t.Fatalf("tool results %q, want three", results)
	}
	if !strings.Contains(results[0], "Title: Antler test") || !strings.Contains(results[0], "a: More") {
		t.Errorf("navigate result:\n%s", results[0])
	}
	if results[1] != "Saved browser screenshot: /mnt/user-data/outputs/home.png" {
		t.Errorf("screenshot result: %q", results[1])
	}
	shots, _ := filepath.Glob(filepath.Join(home, "users", "*", "threads", "t1", "user-data", "outputs", "home.png"))
	if len(shots) != 1 {
		t.Fatalf("no outputs/home.png under %s", home)
	}
	if png, err := os.ReadFile(shots[0]); err != nil || !strings.HasPrefix(string(png), "\x89PNG") {
		t.Errorf("outputs/home.png: %v, %d bytes", err, len(png))
	}
	if !strings.Contains(results[2], "no browser session is open in this thread") {
		t.Errorf("the second run found the first run's browser: %q", results[2])
	}
}

// findChromium is what the browser manager would start.
func findChromium() (string, error) { return browser.FindChromium() }

// TestDoctorBrowser: with browser tools configured, doctor names the
// Chromium they would start, or fails the check without one.
func TestDoctorBrowser(t *testing.T) {
	dir := t.TempDir()
	cfg := writeFile(t, dir, "config.yaml", fmt.Sprintf(browserConfig, "http://127.0.0.1:1"))
	for _, tt := range []struct {
		name, path, want string
	}{
		{"found", os.Getenv("PATH"), "ok"},
		{"missing", t.TempDir(), "fail"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := findChromium(); err != nil && tt.want == "ok" {
				t.Skip("no Chromium installed")
			}
			t.Setenv("PATH", tt.path)
			_, out, _ := runCLI(t, nil, "--config", cfg, "--home", dir, "doctor", "--json", "--timeout", "1s")
			var checks []check
			if err := json.Unmarshal([]byte(out), &checks); err != nil {
				t.Fatalf("%v: %s", err, out)
			}
			for _, c := range checks {
				if c.Check == "browser" {
					if c.Status != tt.want {
						t.Errorf("browser check %s (%s), want %s", c.Status, c.Detail, tt.want)
					}
					return
				}
			}
			t.Errorf("no browser check in %s", out)
		})
	}
}
