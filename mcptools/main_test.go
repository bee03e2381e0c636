package mcptools_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/antlerhq/antler/config"
	"github.com/antlerhq/antler/mcptools"
)

// fakeEnv selects a fake MCP server when the test binary re-executes
// itself (the TestMain re-exec trick).
const fakeEnv = "MCPTOOLS_FAKE"

func TestMain(m *testing.M) {
	if mode := os.Getenv(fakeEnv); mode != "" {
		runFake(mode)
		os.Exit(0)
	}
	code := m.Run()
	stopPeers()
	os.Exit(code)
}

// runFake is a small stdio MCP server with deliberate faults:
//   - hang: reads nothing, answers nothing, ignores stdin EOF;
//   - exit: writes to stderr and exits at once with status 3;
//   - serve: a healthy server (tools echo, pid, crash, env, sleep); "crash"
//     exits the process in the middle of the call. FAKE_INIT_DELAY
//     (a duration) delays the start, for discovery benchmarks;
//     FAKE_HANG_IF_EXISTS (a path) hangs when that file exists;
//     FAKE_CRASH_ON_LIST exits on tools/list;
//     FAKE_RECORD (a path) adds the tool block, which never answers, and
//     appends every notifications/cancelled it receives to that file;
//     FAKE_BANNER prints non-JSON-RPC lines on stdout before serving and
//     adds the tool noisy, which prints more before answering;
//   - files: serve, plus the tools report and write of addFileTools.
func runFake(mode string) {
	switch mode {
	case "hang":
		time.Sleep(time.Hour)
	case "exit":
		fmt.Fprintln(os.Stderr, "fake: refusing to start")
		os.Exit(3)
	case "serve", "files":
		if d, err := time.ParseDuration(os.Getenv("FAKE_INIT_DELAY")); err == nil {
			time.Sleep(d)
		}
		if p := os.Getenv("FAKE_HANG_IF_EXISTS"); p != "" {
			if _, err := os.Stat(p); err == nil {
				time.Sleep(time.Hour)
			}
		}
		s := newTestServer()
		if os.Getenv("FAKE_CRASH_ON_LIST") != "" {
			s.AddReceivingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
				return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
					if method == "tools/list" {
						fmt.Fprintln(os.Stderr, "fake: crashing while listing")
						os.Exit(4)
					}
					return next(ctx, method, req)
				}
			})
		}
		if p := os.Getenv("FAKE_RECORD"); p != "" {
			addRecorder(s, p)
		}
		if os.Getenv("FAKE_BANNER") != "" {
			addBanner(s)
		}
		mcp.AddTool(s, &mcp.Tool{Name: "pid", Description: "Returns the server's process id."},
			func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, any, error) {
				return text(strconv.Itoa(os.Getpid())), nil, nil
			})
		mcp.AddTool(s, &mcp.Tool{Name: "crash", Description: "Exits the server mid-call."},
			func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, any, error) {
				fmt.Fprintln(os.Stderr, "fake: crashing on purpose")
				os.Exit(2)
				return nil, nil, nil
			})
		mcp.AddTool(s, &mcp.Tool{Name: "env", Description: "Returns the value of one variable."},
			func(_ context.Context, _ *mcp.CallToolRequest, in struct {
				Name string `json:"name"`
			}) (*mcp.CallToolResult, any, error) {
				v, ok := os.LookupEnv(in.Name)
				if !ok {
					v = "<unset>"
				}
				return text(v), nil, nil
			})
		if mode == "files" {
			addFileTools(s)
		}
		if err := s.Run(context.Background(), &mcp.StdioTransport{}); err != nil {
			fmt.Fprintln(os.Stderr, "fake:", err)
		}
	default:
		fmt.Fprintln(os.Stderr, "fake: unknown mode", mode)
		os.Exit(1)
	}
}

// addRecorder adds the tool block, which answers only when cancelled, and
// a middleware that appends each notifications/cancelled to the file at
// path, one JSON object a line.
func addRecorder(s *mcp.Server, path string) {
	record := func(v any) {
		line, _ := json.Marshal(v)
		f, err := os.OpenFile(path, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o600)
		if err != nil {
			fmt.Fprintln(os.Stderr, "fake:", err)
			return
		}
		defer f.Close()
		f.Write(append(line, '\n'))
	}
	s.AddReceivingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			if p, ok := req.GetParams().(*mcp.CancelledParams); ok && method == "notifications/cancelled" {
				record(cancelRecord{Method: method, RequestID: fmt.Sprint(p.RequestID), Reason: p.Reason})
			}
			return next(ctx, method, req)
		}
	})
	mcp.AddTool(s, &mcp.Tool{Name: "block", Description: "Never answers; returns only when cancelled."},
		func(ctx context.Context, _ *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, any, error) {
			<-ctx.Done()
			return nil, nil, ctx.Err()
		})
}

// cancelRecord is one line of the FAKE_RECORD file.
type cancelRecord struct {
	Method    string `json:"method"`
	RequestID string `json:"request_id"`
	Reason    string `json:"reason"`
}

// fakeBanner is what a FAKE_BANNER server prints on stdout: a banner, a
// line in the style of dotenv, a JSON log line that is no JSON-RPC message,
// a long plain line and an empty one.
var fakeBanner = []string{
	"fake MCP server v1 ready",
	"[dotenv@17.2.1] injecting env (0) from .env",
	`{"level":30,"msg":"listening on stdio"}`,
	strings.Repeat("x", 300<<10),
	"",
}

// addBanner prints fakeBanner on stdout now and adds the tool noisy, which
// prints it again before its answer.
func addBanner(s *mcp.Server) {
	for _, l := range fakeBanner {
		fmt.Println(l)
	}
	mcp.AddTool(s, &mcp.Tool{Name: "noisy", Description: "Prints on stdout, then answers."},
		func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, any, error) {
			for _, l := range fakeBanner {
				fmt.Println(l)
			}
			return text("quiet now"), nil, nil
		})
}

// fakePlace is what the fake's report tool sees of its process.
type fakePlace struct {
	Cwd, TMPDIR, TMP, TEMP string
}

type reportIn struct {
	Out string `json:"out" jsonschema:"file to write the report to, as JSON"`
}

type writeIn struct {
	Paths []string `json:"paths" jsonschema:"files to write, relative to the working directory or absolute"`
	Say   string   `json:"say,omitempty" jsonschema:"text to add to the answer"`
}

// addFileTools adds the tools of the files mode: report writes the
// server's working directory and temporary-folder variables to a file
// (the truth, beyond the masking of results) and answers with them; write
// creates files (their content is the say text, so that writing a file
// again with another text changes its size) and answers, for each, with its absolute path, the path
// as given, and a file:// resource link, then the say text.
func addFileTools(s *mcp.Server) {
	mcp.AddTool(s, &mcp.Tool{Name: "report", Description: "Reports the working directory and TMPDIR, TMP, TEMP."},
		func(_ context.Context, _ *mcp.CallToolRequest, in reportIn) (*mcp.CallToolResult, any, error) {
			var p fakePlace
			p.Cwd, _ = os.Getwd()
			p.TMPDIR, p.TMP, p.TEMP = os.Getenv("TMPDIR"), os.Getenv("TMP"), os.Getenv("TEMP")
			data, _ := json.Marshal(p)
			if err := os.WriteFile(in.Out, data, 0o600); err != nil {
				return nil, nil, err
			}
			return text(string(data)), nil, nil
		})
	mcp.AddTool(s, &mcp.Tool{Name: "write", Description: "Writes files and answers with their paths."},
		func(_ context.Context, _ *mcp.CallToolRequest, in writeIn) (*mcp.CallToolResult, any, error) {
			res := &mcp.CallToolResult{}
			for _, p := range in.Paths {
				abs, err := filepath.Abs(p)
				if err != nil {
					return nil, nil, err
				}
				if err := os.MkdirAll(filepath.Dir(abs), 0o755); err != nil {
					return nil, nil, err
				}
				if err := os.WriteFile(abs, []byte("written; "+in.Say), 0o644); err != nil {
					return nil, nil, err
				}
				res.Content = append(res.Content,
					&mcp.TextContent{Text: "Saved " + abs + "."},
					&mcp.TextContent{Text: "Saved as " + p + "!"},
					&mcp.ResourceLink{URI: "file://" + abs, Name: filepath.Base(abs)})
			}
			if in.Say != "" {
				res.Content = append(res.Content, &mcp.TextContent{Text: in.Say})
			}
			return res, nil, nil
		})
}

func text(s string) *mcp.CallToolResult {
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: s}}}
}

type echoIn struct {
	Message string `json:"message" jsonschema:"the text to echo"`
}

type sleepIn struct {
	Millis int `json:"millis"`
}

// newTestServer returns an in-process server with the tools echo and
// sleep (which honours cancellation).
func newTestServer() *mcp.Server {
	s := mcp.NewServer(&mcp.Implementation{Name: "test", Version: "1"}, nil)
	mcp.AddTool(s, &mcp.Tool{Name: "echo", Description: "Echoes a message."},
		func(_ context.Context, _ *mcp.CallToolRequest, in echoIn) (*mcp.CallToolResult, any, error) {
			return text("Echo: " + in.Message), nil, nil
		})
	mcp.AddTool(s, &mcp.Tool{Name: "sleep", Description: "Sleeps."},
		func(ctx context.Context, _ *mcp.CallToolRequest, in sleepIn) (*mcp.CallToolResult, any, error) {
			select {
			case <-time.After(time.Duration(in.Millis) * time.Millisecond):
				return text("slept"), nil, nil
			case <-ctx.Done():
				return nil, nil, ctx.Err()
			}
		})
	return s
}

// memServers maps server names to in-process servers for Options.Dial:
// every session gets a fresh pair of in-memory transports.
type memServers map[string]*mcp.Server

func (ms memServers) dial(ctx context.Context, s config.MCPServer) (mcp.Transport, error) {
	srv, ok := ms[s.Name]
	if !ok {
		return nil, nil
	}
	ct, st := mcp.NewInMemoryTransports()
	if _, err := srv.Connect(ctx, st, nil); err != nil {
		return nil, err
	}
	return ct, nil
}

// parseExt builds an extensions config from JSON of the mcpServers map.
func parseExt(t testing.TB, servers string) *config.Extensions {
	t.Helper()
	ext, err := config.ParseExtensions("extensions_config.json", []byte(`{"mcpServers":`+servers+`}`), os.LookupEnv)
	if err != nil {
		t.Fatal(err)
	}
	return ext
}

// memServerJSON is the config of an in-memory server; Dial intercepts it.
func memServerJSON(extra string) string {
	if extra != "" {
		extra = "," + extra
	}
	return `{"type":"http","url":"http://127.0.0.1:1/unused"` + extra + `}`
}

// newManager returns a Manager closed at the end of the test.
func newManager(t testing.TB, opts mcptools.Options) *mcptools.Manager {
	t.Helper()
	m := mcptools.New(opts)
	t.Cleanup(func() { m.Close() })
	return m
}

// fakeServerJSON is the config of a re-executed fake stdio server.
func fakeServerJSON(t testing.TB, mode string, extra string) string {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	env := map[string]string{fakeEnv: mode}
	if extra != "" {
		extra = "," + extra
	}
	envJSON, _ := json.Marshal(env)
	exeJSON, _ := json.Marshal(exe)
	return `{"type":"stdio","command":` + string(exeJSON) + `,"env":` + string(envJSON) + extra + `}`
}

func names(tools []*toolT) []string {
	out := make([]string, len(tools))
	for i, t := range tools {
		out[i] = t.Name
	}
	return out
}

// resultText is the text a model would read.
func resultText(r *resultT) string { return r.TextContent() }

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
