package toolset

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"

	"github.com/antlerhq/antler/community"
	"github.com/antlerhq/antler/community/browser"
	"github.com/antlerhq/antler/config"
	"github.com/antlerhq/antler/tool"
)

// browserUsePrefix is the module path of DeerFlow's browser tools.
const browserUsePrefix = "deerflow.community.browser_automation.tools:"

// browserNavigateUse is the entry whose keys every browser tool reads.
const browserNavigateUse = browserUsePrefix + "browser_navigate_tool"

// registerBrowser wires DeerFlow's eight browser_automation tools (and
// Antler's antler:browser_* names) to community/browser.
func registerBrowser(r *Registry) {
	for _, name := range []string{browser.NavigateName, browser.SnapshotName, browser.ClickName, browser.TypeName,
		browser.GetTextName, browser.BackName, browser.ScreenshotName, browser.CloseName} {
		r.RegisterTool(browserFactory(name), browserUsePrefix+name+"_tool", "antler:"+name)
	}
}

// textOptions are browser_get_text's own keys.
type textOptions struct {
	MaxChars int `yaml:"max_chars"`
}

// browserFactory builds the browser tool name. As in DeerFlow, the
// launch and URL keys are read from the browser_navigate entry alone
// (its own entry for browser_navigate, else the config's first one);
// another tool's entry takes only its own keys (max_chars for
// browser_get_text), so a launch key there is an unknown-key error
// rather than silently ignored.
func browserFactory(name string) ToolFactory {
	return func(_ context.Context, env *Env, entry config.ToolEntry) (*tool.Tool, error) {
		if env == nil || env.Browser == nil {
			return nil, errors.New("the browser tools need a browser manager (toolset.Env.Browser), which the program's wiring sets")
		}
		var o browser.Options
		var text textOptions
		var err error
		switch name {
		case browser.NavigateName:
			err = community.DecodeOptions(entry.Options, &o)
		case browser.GetTextName:
			err = community.DecodeOptions(entry.Options, &text)
			if err == nil && (text.MaxChars < 0 || text.MaxChars > browser.MaxMaxChars) {
				err = &config.Error{Key: "max_chars", Msg: fmt.Sprintf("max_chars %d: want 0..%d", text.MaxChars, browser.MaxMaxChars)}
			}
		default:
			err = checkOptionKeys(entry.Options)
		}
		if err != nil {
			return nil, err
		}
		if name != browser.NavigateName {
			if o, err = navigateOptions(env); err != nil {
				return nil, err
			}
		}
		if env.Sandbox != nil {
			layout := env.Sandbox.Layout()
			o.Outputs = func(user, thread string) (string, string, error) {
				tp, err := layout.ThreadPaths(user, thread)
				if err != nil {
					return "", "", err
				}
				rel, err := filepath.Rel(tp.Base, tp.Outputs)
				return tp.Base, rel, err
			}
		}
		ts, err := browser.NewTools(env.Browser, o)
		if err != nil {
			return nil, err
		}
		return browserTool(ts, name, text.MaxChars), nil
	}
}

// navigateOptions decodes the config's browser_navigate entry; none
// gives the defaults. Its own errors are reported on that entry.
func navigateOptions(env *Env) (browser.Options, error) {
	var o browser.Options
	if env.Config == nil {
		return o, nil
	}
	for _, e := range env.Config.Tools {
		if e.Use == browserNavigateUse || e.Use == "antler:"+browser.NavigateName {
			if err := community.DecodeOptions(e.Options, &o); err != nil {
				return o, errors.New("the browser_navigate entry's options, which every browser tool reads, are invalid")
			}
			return o, nil
		}
	}
	return o, nil
}

func browserTool(ts *browser.Tools, name string, maxChars int) *tool.Tool {
	switch name {
	case browser.NavigateName:
		return ts.Navigate()
	case browser.SnapshotName:
		return ts.Snapshot()
	case browser.ClickName:
		return ts.Click()
	case browser.TypeName:
		return ts.Type()
	case browser.GetTextName:
		return ts.GetText(maxChars)
	case browser.BackName:
		return ts.Back()
	case browser.ScreenshotName:
		return ts.Screenshot()
	default:
		return ts.Close()
	}
}
