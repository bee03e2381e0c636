package commandtool_test

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/antlerhq/antler/commandtool"
	"github.com/antlerhq/antler/tool"
)

// script writes an executable shell script and returns its path.
func script(t *testing.T, body string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "tool.sh")
	if err := os.WriteFile(p, []byte("#!/bin/sh\n"+body+"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestCommandTool(t *testing.T) {
	tests := []struct {
		name      string
		body      string
		opts      commandtool.Options
		args      string
		want      string
		wantError bool
	}{
		{name: "plain text echo of stdin", body: `cat`, args: `{"a":1}`, want: `{"a":1}`},
		{name: "structured content", body: `echo '{"content": "done", "is_error": false}'`, want: "done"},
		{name: "structured error", body: `echo '{"content": "bad input", "is_error": true}'`, want: "Error: bad input", wantError: true},
		{name: "block content", body: `echo '{"content": [{"type":"text","text":"a"},{"type":"text","text":"b"}]}'`, want: "a\nb"},
		{name: "non-zero exit", body: `echo nope >&2; exit 3`, want: "Error: command tool t exited with status 3: nope", wantError: true},
		{name: "bad JSON output", body: `echo '{"content": '`, want: "Error: command tool t printed invalid JSON", wantError: true},
		{name: "timeout kills the process group", body: `sleep 30 & sleep 30`, opts: commandtool.Options{Timeout: 300 * time.Millisecond}, want: "Error: command tool t timed out after 300ms", wantError: true},
		{name: "oversized output", body: `head -c 5000 /dev/zero`, opts: commandtool.Options{MaxOutputBytes: 100}, want: "Error: command tool t wrote more than 100 bytes of output", wantError: true},
		{name: "env and identity", body: `echo "$GREETING $ANTLER_THREAD_ID"`, opts: commandtool.Options{Env: map[string]string{"GREETING": "hi"}}, want: "hi th1"},
		{name: "schema violation never runs the command", body: `echo ran`, opts: commandtool.Options{InputSchema: json.RawMessage(`{"type":"object","required":["x"]}`)}, args: `{}`, want: "Error: invalid arguments for t", wantError: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			opts := tt.opts
			opts.Name = "t"
			opts.Command = []string{script(t, tt.body)}
			tl, err := commandtool.New(opts)
			if err != nil {
				t.Fatal(err)
			}
			args := tt.args
			if args == "" {
				args = "{}"
			}
			res, err := tl.Handler(t.Context(), &tool.Call{ThreadID: "th1"}, json.RawMessage(args))
			if err != nil {
				t.Fatal(err)
			}
			if res.IsError != tt.wantError || !strings.HasPrefix(strings.TrimSpace(res.TextContent()), tt.want) {
				t.Errorf("got (error=%v) %q, want (error=%v) prefix %q", res.IsError, res.TextContent(), tt.wantError, tt.want)
			}
		})
	}
}

// A timeout kills grandchildren too: the command's whole process group.
func TestTimeoutKillsProcessGroup(t *testing.T) {
	pidFile := filepath.Join(t.TempDir(), "pid")
	tl, err := commandtool.New(commandtool.Options{Name: "t", Timeout: 200 * time.Millisecond,
		Command: []string{script(t, "sleep 60 & echo $! > "+pidFile+"; wait")}})
	if err != nil {
		t.Fatal(err)
	}
	res, err := tl.Handler(t.Context(), &tool.Call{}, json.RawMessage(`{}`))
	if err != nil || !res.IsError {
		t.Fatalf("want timeout error result, got %v %v", res, err)
	}
	data, err := os.ReadFile(pidFile)
	if err != nil {
		t.Fatal(err)
	}
	pid, _ := strconv.Atoi(strings.TrimSpace(string(data)))
	// The killed grandchild may linger as a zombie of init for a moment;
	// it must not stay runnable.
	for range 50 {
		if err := syscall.Kill(pid, 0); err != nil {
			return
		}
		if stat, _ := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid)); strings.Contains(string(stat), ") Z ") {
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Errorf("grandchild %d still running after the timeout", pid)
}

func TestNewRejectsBadOptions(t *testing.T) {
	for name, opts := range map[string]commandtool.Options{
		"no name":    {Command: []string{"true"}},
		"no command": {Name: "t"},
		"bad schema": {Name: "t", Command: []string{"true"}, InputSchema: json.RawMessage(`{"type": 5}`)},
	} {
		if _, err := commandtool.New(opts); err == nil {
			t.Errorf("%s: want error", name)
		}
	}
}
