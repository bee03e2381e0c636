package mcptools_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/antlerhq/antler/mcptools"
	"github.com/antlerhq/antler/tool"
)

func TestToolName(t *testing.T) {
	long := strings.Repeat("x", 70)
	for _, tc := range []struct {
		name, server, raw string
		prefix            bool
		want              string
		sanitised         bool
	}{
		{"prefixed", "github", "search", true, "github_search", false},
		{"raw", "github", "search", false, "search", false},
		{"unprefixed keeps a server-like prefix", "github", "github_search", false, "github_search", false},
		{"spaces and parentheses", "goex", "greet (structured)", true, "goex_greet_structured", true},
		{"newline", "s", "bad\nname", true, "s_bad_name", true},
		{"tag", "s", "<system>", false, "system", true},
		{"markdown", "s", "**bold** tool", false, "bold_tool", true},
		{"dots", "s", "a.b.c", true, "s_a_b_c", true},
		{"only invalid", "", "!!!", false, "tool", true},
		{"server name with space", "my server", "t", true, "my_server_t", true},
		{"unicode", "s", "größe", false, "gr_e", true},
		{"too long", "s", long, false, long[:55] + "_" + "", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, sanitised := mcptools.ToolName(tc.server, tc.raw, tc.prefix)
			if tc.name == "too long" {
				if len(got) != 64 || !strings.HasPrefix(got, tc.want) || !sanitised {
					t.Errorf("got %q (%d chars, sanitised %v)", got, len(got), sanitised)
				}
				return
			}
			if got != tc.want || sanitised != tc.sanitised {
				t.Errorf("ToolName(%q, %q, %v) = %q, %v; want %q, %v", tc.server, tc.raw, tc.prefix, got, sanitised, tc.want, tc.sanitised)
			}
		})
	}
}

func FuzzToolName(f *testing.F) {
	for _, s := range []string{"echo", "greet (with Icons)", "a\nb", "<x>", "", strings.Repeat("é", 80)} {
		f.Add("srv", s, true)
	}
	f.Fuzz(func(t *testing.T, server, raw string, prefix bool) {
		got, sanitised := mcptools.ToolName(server, raw, prefix)
		if !mcptools.ValidName(got) {
			t.Fatalf("ToolName(%q, %q, %v) = %q, not a valid name", server, raw, prefix, got)
		}
		again, _ := mcptools.ToolName(server, raw, prefix)
		if again != got {
			t.Fatalf("not deterministic: %q then %q", got, again)
		}
		full := raw
		if prefix {
			full = server + "_" + raw
		}
		if !sanitised && got != full {
			t.Fatalf("valid name %q changed to %q", full, got)
		}
	})
}

// Invalid tool names (newline, '<', markdown) are
// handled one by one — Antler sanitises them so they stay callable where
// DeerFlow drops them (docs/differences.md); the prefix is on by default
// and can be turned off per server while sessions are still reused; an
// unprefixed tool whose name starts with "<server>_" keeps its name.
func TestInvalidToolNamesSanitisedIndividually(t *testing.T) {
	newSrv := func() *mcp.Server {
		s := mcp.NewServer(&mcp.Implementation{Name: "t", Version: "1"}, nil)
		for _, name := range []string{"ok", "bad\nname", "<tag>", "**md**", "srv_own", "dup name", "dup_name"} {
			s.AddTool(&mcp.Tool{Name: name, InputSchema: map[string]any{"type": "object"}},
				func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
					return text("called " + req.Params.Name), nil
				})
		}
		return s
	}
	var connects atomic.Int32
	servers := memServers{"srv": newSrv(), "raw": newSrv()}
	ext := parseExt(t, `{"srv": `+memServerJSON("")+`, "raw": `+memServerJSON(`"tool_name_prefix": false`)+`}`)
	m := newManager(t, mcptools.Options{Extensions: mcptools.Static(ext), Dial: func(ctx context.Context, s mcpServer) (mcp.Transport, error) {
		connects.Add(1)
		return servers.dial(ctx, s)
	}})
	tools, err := m.Tools(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	// Collisions among sanitised names get a hash suffix; valid names win.
	// The go-sdk server lists tools sorted by name.
	want := []string{"md", "tag", "bad_name", "dup_name_", "dup_name", "ok", "srv_own",
		"srv_md", "srv_tag", "srv_bad_name", "srv_dup_name_", "srv_dup_name", "srv_ok", "srv_srv_own"}
	got := names(tools)
	if len(got) != len(want) {
		t.Fatalf("got %v", got)
	}
	for i := range want {
		if strings.HasSuffix(want[i], "_") {
			if !strings.HasPrefix(got[i], want[i]) || len(got[i]) != len(want[i])+6 {
				t.Errorf("tool %d = %q, want %s<6 hex>", i, got[i], want[i])
			}
			continue
		}
		if got[i] != want[i] {
			t.Errorf("tool %d = %q, want %q", i, got[i], want[i])
		}
	}
	for _, tl := range tools {
		res, err := tl.Handler(t.Context(), &tool.Call{}, json.RawMessage(`{}`))
		if err != nil || resultText(res) != "called "+tl.Meta["mcp_tool"] {
			t.Errorf("%s: %q %v", tl.Name, resultText(res), err)
		}
	}
	if n := connects.Load(); n != 2 {
		t.Errorf("%d sessions for 2 servers and %d calls; sessions must be reused", n, len(tools))
	}
	st := statusByName(m)
	if diff := cmp.Diff("bad_name", st["raw"].Renamed["bad\nname"]); diff != "" {
		t.Errorf("Renamed: %v", st["raw"].Renamed)
	}
}

// A server that names its tools after every hash suffix a sanitised name
// could get (the suffixes are deterministic, so a hostile server can) does
// not crash the listing (a suffix of 64 hex digits cut the name to a
// negative length): the sanitised tool keeps a valid name, a duplicate that
// toolset.Assemble drops as it drops any.
func TestToolName_collisionWithEverySuffixDoesNotPanic(t *testing.T) {
	sum := sha256.Sum256([]byte("srv\x00dup name"))
	hash := hex.EncodeToString(sum[:])
	raws := []string{"dup name", "dup_name"}
	for _, n := range []int{6, 10, 16, 32, 64} {
		full := "srv_dup_name_" + hash[:n]
		if len(full) > 64 {
			full = full[:64]
		}
		raws = append(raws, strings.TrimPrefix(full, "srv_"))
	}
	s := mcp.NewServer(&mcp.Implementation{Name: "t", Version: "1"}, nil)
	for _, name := range raws {
		s.AddTool(&mcp.Tool{Name: name, InputSchema: map[string]any{"type": "object"}},
			func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) { return text("ok"), nil })
	}
	m := newManager(t, mcptools.Options{Extensions: mcptools.Static(parseExt(t, `{"srv": `+memServerJSON("")+`}`)),
		Dial: memServers{"srv": s}.dial})
	tools, err := m.Tools(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	for _, tl := range tools {
		if !mcptools.ValidName(tl.Name) {
			t.Errorf("invalid name %q", tl.Name)
		}
	}
}
