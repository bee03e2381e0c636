package mcptools_test

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/antlerhq/antler/mcptools"
	"github.com/antlerhq/antler/tool"
)

// hangGuard bounds a test step that would hang forever on a regression;
// it is far above what the step needs, never a timing threshold.
const hangGuard = 20 * time.Second

// A call whose server never answers ends at its bound, whether configured
// (tool_call_timeout) or the Manager's default, or when the caller gives
// up; each way the server receives notifications/cancelled for the call,
// over a real stdio pipe, and the session stays usable.
func TestCallBound_abandonedCallIsCancelledAtTheServer(t *testing.T) {
	tests := []struct {
		name    string
		setting string        // extra server config
		def     time.Duration // Options.DefaultCallTimeout
		cancel  bool          // the caller cancels instead
		want    string        // the result's text; "" for a Go error
		reason  string        // of the notification
	}{
		{name: "configured tool_call_timeout", setting: `"tool_call_timeout": 0.3`, def: time.Hour,
			want: "Error: MCP tool 'block' on server 's' timed out after 0.3s and was cancelled; " +
				"if it needs longer, raise tool_call_timeout (seconds) of server 's' in extensions_config.json",
			reason: context.DeadlineExceeded.Error()},
		{name: "default bound without a setting", def: 300 * time.Millisecond,
			want: "Error: MCP tool 'block' on server 's' timed out after 0.3s (the default bound) and was cancelled; " +
				"if it needs longer, set tool_call_timeout (seconds) of server 's' in extensions_config.json",
			reason: context.DeadlineExceeded.Error()},
		{name: "caller cancels", def: time.Hour, cancel: true, reason: context.Canceled.Error()},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			record := filepath.Join(t.TempDir(), "cancelled.jsonl")
			extra := `"env": {"` + fakeEnv + `": "serve", "FAKE_RECORD": "` + record + `"}`
			if tt.setting != "" {
				extra += "," + tt.setting
			}
			ext := parseExt(t, `{"s": `+fakeServerJSON(t, "serve", extra)+`}`)
			m := newManager(t, mcptools.Options{Extensions: mcptools.Static(ext), DefaultCallTimeout: tt.def})
			tools := toolsByName(t, m, "s_block", "s_echo")
			ctx, cancel := context.WithTimeout(t.Context(), hangGuard)
			defer cancel()
			callCtx := ctx
			if tt.cancel {
				var stop context.CancelFunc
				callCtx, stop = context.WithCancel(ctx)
				time.AfterFunc(300*time.Millisecond, stop)
			}
			res, err := tools["s_block"].Handler(callCtx, &tool.Call{}, nil)
			if ctx.Err() != nil {
				t.Fatal("the call hung until the test's guard")
			}
			switch {
			case tt.want == "" && !errors.Is(err, context.Canceled):
				t.Errorf("got %v, %v; want context.Canceled as a Go error", res, err)
			case tt.want != "" && (err != nil || !res.IsError || resultText(res) != tt.want):
				t.Errorf("got %q, %v\nwant %q", resultText(res), err, tt.want)
			}
			got := waitForRecord(t, record)
			if got.Method != "notifications/cancelled" || got.Reason != tt.reason || got.RequestID == "" {
				t.Errorf("server received %+v, want notifications/cancelled with reason %q", got, tt.reason)
			}
			// The session survives the abandoned call.
			if msg, isErr := callText(t, tools["s_echo"], &tool.Call{}, `{"message":"x"}`); isErr || msg != "Echo: x" {
				t.Errorf("after the abandoned call: %q", msg)
			}
		})
	}
}

// waitForRecord returns the first notification the fake server recorded,
// polling until hangGuard.
func waitForRecord(t *testing.T, path string) cancelRecord {
	t.Helper()
	deadline := time.Now().Add(hangGuard)
	for time.Now().Before(deadline) {
		if f, err := os.Open(path); err == nil {
			sc := bufio.NewScanner(f)
			var rec cancelRecord
			ok := sc.Scan() && json.Unmarshal(sc.Bytes(), &rec) == nil
			f.Close()
			if ok {
				return rec
			}
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatal("the server never received notifications/cancelled")
	return cancelRecord{}
}

// The zero DefaultCallTimeout is DefaultToolCallTimeout: minutes, not
// unbounded.
func TestCallBound_defaultIsTenMinutes(t *testing.T) {
	if mcptools.DefaultToolCallTimeout != 10*time.Minute {
		t.Errorf("DefaultToolCallTimeout = %s", mcptools.DefaultToolCallTimeout)
	}
}

// ToolsOf discovers only the servers it is given: a server hung at
// initialize with a 10-minute bound is neither waited for nor started.
func TestToolsOf_discoversOnlyTheNamedServers(t *testing.T) {
	ext := parseExt(t, `{
		"hung": `+fakeServerJSON(t, "hang", `"session_init_timeout": 600`)+`,
		"good": `+fakeServerJSON(t, "serve", "")+`}`)
	m := newManager(t, mcptools.Options{Extensions: mcptools.Static(ext)})
	ctx, cancel := context.WithTimeout(t.Context(), hangGuard)
	defer cancel()
	tools, err := m.ToolsOf(ctx, []string{"good", "unknown"})
	if ctx.Err() != nil {
		t.Fatal("ToolsOf waited for the hung server")
	}
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"good_crash", "good_echo", "good_env", "good_pid", "good_sleep"}, names(tools)); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	if st := statusByName(m)["hung"]; st.State != mcptools.StatePending || st.Sessions != 0 {
		t.Errorf("hung: %+v, want pending with no session", st)
	}
}

// ServersFor names every enabled server whose tools could carry a name,
// from the configuration alone.
func TestServersFor_namesTheServersThatCouldExposeATool(t *testing.T) {
	long := strings.Repeat("s", 70)
	ext := parseExt(t, `{
		"github": `+memServerJSON("")+`,
		"my server": `+memServerJSON("")+`,
		"raw": `+memServerJSON(`"tool_name_prefix": false`)+`,
		"off": `+memServerJSON(`"enabled": false, "tool_name_prefix": false`)+`,
		"`+long+`": `+memServerJSON("")+`}`)
	m := newManager(t, mcptools.Options{Extensions: mcptools.Static(ext)})
	tests := []struct {
		name string
		want []string
	}{
		{"github_create_issue", []string{"github", "raw"}},
		{"my_server_list", []string{"my server", "raw"}},
		{"ls", []string{"raw"}},
		{"gitlab_create_issue", []string{"raw"}},
	}
	for _, tt := range tests {
		got, err := m.ServersFor(tt.name)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(tt.want, got); diff != "" {
			t.Errorf("ServersFor(%q) (-want +got):\n%s", tt.name, diff)
		}
	}
	// Whatever a tool is called, its exposed name leads back to its server.
	for _, server := range []string{"github", "my server", long} {
		for _, raw := range []string{"x", "with space", "ünïcode", strings.Repeat("t", 80), ""} {
			name, _ := mcptools.ToolName(server, raw, true)
			got, _ := m.ServersFor(name)
			if !contains(got, server) {
				t.Errorf("ServersFor(%q) = %v, want it to include %q", name, got, server)
			}
		}
	}
}
