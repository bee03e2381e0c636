package toolset_test

import (
	"context"
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/antlerhq/antler/community"
	"github.com/antlerhq/antler/config"
	"github.com/antlerhq/antler/tool"
	"github.com/antlerhq/antler/toolset"
)

// optionRegistry has fake:ls and fake:search, whose factory decodes its
// options strictly as the web tools do.
func optionRegistry() *toolset.Registry {
	r := fakeRegistry(nil)
	r.RegisterTool(func(_ context.Context, _ *toolset.Env, entry config.ToolEntry) (*tool.Tool, error) {
		var o community.SearchOptions
		if err := community.DecodeOptions(entry.Options, &o); err != nil {
			return nil, err
		}
		return fakeTool("search"), nil
	}, "fake:search")
	return r
}

// An option error is placed at the option's line under tools[i].KEY, and
// names the nearest option, not a Go type.
func TestOptionErrorsNameKeyAndLine(t *testing.T) {
	cfg := mustConfig(t, baseConfig+"tools:\n  - name: search\n    group: web\n    use: fake:search\n    max_result: 3\n    region: [de]\n")
	a := &toolset.Assembler{Registry: optionRegistry(), Env: &toolset.Env{Config: cfg}}
	_, err := a.Assemble(t.Context(), toolset.Options{})
	var ce *config.Error
	if !errors.As(err, &ce) {
		t.Fatalf("err = %v, want *config.Error", err)
	}
	want := `line 11: tools[0].max_result: unknown key "max_result" (did you mean "max_results"?) (options of tool "search")` + "\n" +
		`line 12: tools[0].region: expected string, got list (options of tool "search")`
	if err.Error() != want {
		t.Errorf("err =\n%s\nwant\n%s", err, want)
	}
}

// SkipBrokenTools leaves a broken tool out and reports it; without it the
// assembly fails.
func TestSkipBrokenToolsCostsOnlyThatTool(t *testing.T) {
	cfg := mustConfig(t, baseConfig+"tools:\n  - {name: ls, group: files, use: fake:ls}\n  - {name: search, group: web, use: fake:search, max_result: 3}\n")
	strict := &toolset.Assembler{Registry: optionRegistry(), Env: &toolset.Env{Config: cfg}}
	if _, err := strict.Assemble(t.Context(), toolset.Options{}); err == nil {
		t.Fatal("the assembly succeeded with a broken tool")
	}
	a := &toolset.Assembler{Registry: optionRegistry(), Env: &toolset.Env{Config: cfg}, SkipBrokenTools: true}
	ts, err := a.Assemble(t.Context(), toolset.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"ls"}, ts.Names()); diff != "" {
		t.Errorf("names (-want +got):\n%s", diff)
	}
	broken := a.BrokenTools()
	if len(broken) != 1 || broken[0].Name != "search" || broken[0].Err.Error() !=
		`line 9: tools[1].max_result: unknown key "max_result" (did you mean "max_results"?) (options of tool "search")` {
		t.Errorf("BrokenTools = %+v", broken)
	}
}
