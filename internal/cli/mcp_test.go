package cli

import (
	"context"
	"encoding/json"
	"os"
	"os/signal"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/antlerhq/antler/model"
	"github.com/antlerhq/antler/model/modeltest"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestMain lets the test binary double as a stdio MCP server and as the
// antler binary itself (the re-exec trick), so CLI tests talk to a real
// MCP peer over a real pipe and run `antler` as a real process.
func TestMain(m *testing.M) {
	switch {
	case os.Getenv("ANTLER_CLI_TEST_MCP_SERVER") == "1":
		serveFakeMCP()
		return
	case os.Getenv("ANTLER_CLI_TEST_MAIN") == "1":
		ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
		code := Main(ctx, os.Args[1:], Options{})
		stop()
		os.Exit(code)
	}
	os.Exit(m.Run())
}

type weatherIn struct {
	City string `json:"city" jsonschema:"the city"`
}

type repoIn struct {
	Repo string `json:"repo" jsonschema:"owner/name of the repository"`
}

// serveFakeMCP serves the tools get_weather and list_issues on stdio;
// with ANTLER_CLI_TEST_MCP_HANG=1 it never answers anything (a server hung
// at initialize). ANTLER_CLI_TEST_MCP_STARTS (a path) records each start.
func serveFakeMCP() {
	if log := os.Getenv("ANTLER_CLI_TEST_MCP_STARTS"); log != "" {
		if f, err := os.OpenFile(log, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644); err == nil {
			f.WriteString("start\n")
			f.Close()
		}
	}
	if os.Getenv("ANTLER_CLI_TEST_MCP_HANG") == "1" {
		select {} // killed with its process group
	}
	s := mcp.NewServer(&mcp.Implementation{Name: "fake", Version: "1"}, nil)
	mcp.AddTool(s, &mcp.Tool{Name: "get_weather", Description: "Get the current weather forecast for a city."},
		func(ctx context.Context, req *mcp.CallToolRequest, in weatherIn) (*mcp.CallToolResult, any, error) {
			recordMCPCall("get_weather")
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "sunny in " + in.City}}}, nil, nil
		})
	mcp.AddTool(s, &mcp.Tool{Name: "list_issues", Description: "List the open issues of a GitHub repository."},
		func(ctx context.Context, req *mcp.CallToolRequest, in repoIn) (*mcp.CallToolResult, any, error) {
			recordMCPCall("list_issues")
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "no issues in " + in.Repo}}}, nil, nil
		})
	_ = s.Run(context.Background(), &mcp.StdioTransport{})
}

// mcpFixture writes a config (tool_search on or off) and an extensions
// file whose one server is this test binary.
func mcpFixture(t *testing.T, toolSearch bool) (cfg, dir string) {
	t.Helper()
	dir = t.TempDir()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	ext, _ := json.Marshal(map[string]any{"mcpServers": map[string]any{
		"fake": map[string]any{"command": exe, "env": map[string]string{"ANTLER_CLI_TEST_MCP_SERVER": "1"}},
	}})
	writeFile(t, dir, "extensions_config.json", string(ext))
	ts := "false"
	if toolSearch {
		ts = "true"
	}
	cfg = writeFile(t, dir, "config.yaml", "models:\n  - {name: m, use: langchain_openai:ChatOpenAI, model: x, api_key: k}\n"+
		"tool_search: {enabled: "+ts+"}\nsandbox: {use: deerflow.sandbox.local:LocalSandboxProvider}\n")
	return cfg, dir
}

func TestToolsListShowsMCPAndDeferral(t *testing.T) {
	for _, deferral := range []bool{false, true} {
		cfg, dir := mcpFixture(t, deferral)
		code, out, errOut := runCLI(t, nil, "--config", cfg, "--home", dir, "tools", "list", "--json")
		if code != 0 {
			t.Fatalf("exit %d: %s", code, errOut)
		}
		var list []toolJSON
		if err := json.Unmarshal([]byte(out), &list); err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, e := range list {
			got = append(got, string(e.Source)+":"+e.Name+":"+e.Group+":"+map[bool]string{true: "deferred", false: "bound"}[e.Deferred])
		}
		want := []string{"builtin:present_files:builtin:bound", "builtin:ask_clarification:builtin:bound",
			"builtin:review_skill_package:builtin:bound", "builtin:list_uploaded_files:builtin:bound", "mcp:fake_get_weather:fake:bound", "mcp:fake_list_issues:fake:bound"}
		if deferral {
			want = []string{"builtin:present_files:builtin:bound", "builtin:ask_clarification:builtin:bound",
				"builtin:review_skill_package:builtin:bound", "builtin:list_uploaded_files:builtin:bound", "mcp:fake_get_weather:fake:deferred", "mcp:fake_list_issues:fake:deferred", "builtin:tool_search:builtin:bound"}
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("deferral=%v (-want +got):\n%s", deferral, diff)
		}
	}
}

func TestToolsCallMCPTool(t *testing.T) {
	cfg, dir := mcpFixture(t, true)
	// A deferred tool is callable by the operator.
	code, out, errOut := runCLI(t, nil, "--config", cfg, "--home", dir, "tools", "call", "fake_get_weather", "--args", `{"city":"Oslo"}`)
	if code != 0 || strings.TrimSpace(out) != "sunny in Oslo" {
		t.Errorf("exit %d out %q err %q", code, out, errOut)
	}
}

func TestToolsSearch(t *testing.T) {
	cfg, dir := mcpFixture(t, true)
	code, out, errOut := runCLI(t, nil, "--config", cfg, "--home", dir, "tools", "search", "--json", "weather forecast for a city")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var defs []struct {
		Name       string          `json:"name"`
		Parameters json.RawMessage `json:"parameters"`
	}
	if err := json.Unmarshal([]byte(out), &defs); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	if len(defs) == 0 || defs[0].Name != "fake_get_weather" || !strings.Contains(string(defs[0].Parameters), "city") {
		t.Errorf("search result: %s", out)
	}
	code, out, _ = runCLI(t, nil, "--config", cfg, "--home", dir, "tools", "search", "select:fake_list_issues,fake_get_weather")
	if code != 0 || !strings.Contains(out, "fake_list_issues") || !strings.Contains(out, "fake_get_weather") {
		t.Errorf("select: exit %d out %q", code, out)
	}
}

// Keyword routing (DeerFlow's tool_search.py and mcp_routing_middleware.py): a deferred server with routing
// "prefer" whose keyword appears in the user's message has its tools'
// schemas in that turn's request without a tool_search; other deferred
// tools stay hidden.
func TestRunRoutesDeferredToolsByKeyword(t *testing.T) {
	var bound []string
	srv := modeltest.NewServer(t, modeltest.Turn{Func: func(req *model.Request) modeltest.Turn {
		bound = modeltest.ToolNames(req)
		return modeltest.Turn{Text: "ok"}
	}})
	dir := t.TempDir()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	ext, _ := json.Marshal(map[string]any{"mcpServers": map[string]any{
		"fake": map[string]any{"command": exe, "env": map[string]string{"ANTLER_CLI_TEST_MCP_SERVER": "1"},
			"routing": map[string]any{"mode": "prefer", "priority": 10, "keywords": []string{"Forecast"}},
			"tools":   map[string]any{"list_issues": map[string]any{"routing": map[string]any{"mode": "off"}}}},
	}})
	writeFile(t, dir, "extensions_config.json", string(ext))
	cfg := writeFile(t, dir, "config.yaml", "models:\n  - {name: m, use: langchain_openai:ChatOpenAI, model: x, api_key: k, base_url: "+srv.URL+"}\n"+
		"tool_search: {enabled: true}\nsandbox: {use: deerflow.sandbox.local:LocalSandboxProvider}\n")
	code, _, errOut := runCLI(t, nil, "--config", cfg, "--home", dir, "run", "what is the forecast for Oslo?")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	if !slices.Contains(bound, "fake_get_weather") || slices.Contains(bound, "fake_list_issues") || !slices.Contains(bound, "tool_search") {
		t.Errorf("bound tools %v: want the routed fake_get_weather and tool_search, not fake_list_issues", bound)
	}
}
