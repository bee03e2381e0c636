package toolset

import (
	"strings"
	"testing"

	"github.com/antlerhq/antler/community/browser"
	"github.com/antlerhq/antler/config"
)

// TestBrowserUses checks that DeerFlow's eight browser_automation use
// strings and the antler:browser_* names build their tools, that the
// launch keys come from the browser_navigate entry, and that misplaced
// or bad keys are configuration errors.
func TestBrowserUses(t *testing.T) {
	browsers := browser.NewManager(browser.ManagerOptions{})
	t.Cleanup(func() { _ = browsers.Close() })
	reg := DefaultRegistry()
	nav := config.ToolEntry{Name: "browser_navigate", Use: "deerflow.community.browser_automation.tools:browser_navigate_tool",
		Options: map[string]any{"headless": true, "timeout_ms": 30000, "viewport_width": 1280, "viewport_height": 720,
			"allow_private_addresses": false}}
	env := &Env{Config: &config.Config{Tools: []config.ToolEntry{nav}}, Home: t.TempDir(), Browser: browsers}
	for _, name := range []string{"browser_navigate", "browser_snapshot", "browser_click", "browser_type",
		"browser_get_text", "browser_back", "browser_screenshot", "browser_close"} {
		for _, use := range []string{"deerflow.community.browser_automation.tools:" + name + "_tool", "antler:" + name} {
			e := config.ToolEntry{Name: name, Use: use}
			if name == "browser_get_text" {
				e.Options = map[string]any{"max_chars": 8000}
			}
			tl, err := reg.BuildTool(t.Context(), env, e)
			if err != nil {
				t.Errorf("%s: %v", use, err)
				continue
			}
			if tl.Name != name {
				t.Errorf("%s builds %q", use, tl.Name)
			}
		}
	}

	bad := []struct {
		name  string
		env   *Env
		entry config.ToolEntry
		want  string
	}{
		{"no manager", &Env{Home: t.TempDir()},
			config.ToolEntry{Name: "browser_close", Use: "antler:browser_close"}, "toolset.Env.Browser"},
		{"launch key on another tool", env,
			config.ToolEntry{Name: "browser_click", Use: "antler:browser_click", Options: map[string]any{"headless": false}}, "headless"},
		{"max_chars too large", env,
			config.ToolEntry{Name: "browser_get_text", Use: "antler:browser_get_text", Options: map[string]any{"max_chars": 10_000_000}}, "max_chars"},
		{"navigate timeout out of range", env,
			config.ToolEntry{Name: "browser_navigate", Use: "antler:browser_navigate", Options: map[string]any{"timeout_ms": -5}}, "timeout_ms"},
		{"navigate unknown key", env,
			config.ToolEntry{Name: "browser_navigate", Use: "antler:browser_navigate", Options: map[string]any{"headles": true}}, "headles"},
		{"invalid navigate entry seen by another tool",
			&Env{Config: &config.Config{Tools: []config.ToolEntry{{Name: "browser_navigate", Use: "antler:browser_navigate",
				Options: map[string]any{"viewport_width": "wide"}}}}, Browser: browsers},
			config.ToolEntry{Name: "browser_back", Use: "antler:browser_back"}, "browser_navigate entry"},
	}
	for _, tt := range bad {
		t.Run(tt.name, func(t *testing.T) {
			_, err := reg.BuildTool(t.Context(), tt.env, tt.entry)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("BuildTool = %v, want an error with %q", err, tt.want)
			}
		})
	}
}
