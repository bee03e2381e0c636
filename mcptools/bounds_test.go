package mcptools_test

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

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
			tools := toolsByName(t, m)
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
