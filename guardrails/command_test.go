package guardrails

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/antlerhq/antler/tool"
)

// script writes a shell script and returns a provider running it.
func script(t *testing.T, body string, opts CommandOptions) *CommandProvider {
	t.Helper()
	path := filepath.Join(t.TempDir(), "policy.sh")
	if err := os.WriteFile(path, []byte("#!/bin/sh\n"+body), 0o755); err != nil {
		t.Fatal(err)
	}
	opts.Command = []string{path}
	p, err := NewCommandProvider(opts)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func TestCommandProvider_decides(t *testing.T) {
	dir := t.TempDir()
	seen := filepath.Join(dir, "request.json")
	// The script saves its stdin and denies bash, allows the rest.
	p := script(t, `cat > "$SEEN"
if grep -q '"tool_name":"bash"' "$SEEN"; then
  echo '{"decision_id":"d1","allow":false,"reasons":[{"code":"oap.blocked_pattern","message":"Command contains blocked pattern: rm -rf"}],"policy_id":"system.command.execute.v1","signature":"ed25519:x"}'
else
  echo '{"allow":true,"reasons":[{"code":"oap.allowed"}]}'
fi
`, CommandOptions{Env: map[string]string{"SEEN": seen}})
	d, err := p.Evaluate(context.Background(), &Request{ToolName: "bash", ToolInput: json.RawMessage(`{"command":"rm -rf /"}`), UserRole: "user"})
	if err != nil {
		t.Fatal(err)
	}
	if d.Allow || d.PolicyID != "system.command.execute.v1" || d.Reasons[0].Code != "oap.blocked_pattern" {
		t.Errorf("decision %+v", d)
	}
	data, _ := os.ReadFile(seen)
	var got Request
	if err := json.Unmarshal(data, &got); err != nil || got.UserRole != "user" || string(got.ToolInput) != `{"command":"rm -rf /"}` {
		t.Errorf("stdin %s (%v)", data, err)
	}
	if d, err := p.Evaluate(context.Background(), &Request{ToolName: "ls", ToolInput: json.RawMessage(`{}`)}); err != nil || !d.Allow {
		t.Errorf("ls: %+v, %v", d, err)
	}
}

// Every way a command can fail to decide is a provider failure, which the
// guard turns into a fail-closed deny: the tool never runs.
func TestCommandProvider_failuresFailClosed(t *testing.T) {
	tests := []struct {
		name, body string
		opts       CommandOptions
		err        string
	}{
		{"non-zero exit", "echo nope >&2; exit 3\n", CommandOptions{}, "exit status 3: nope"},
		{"crash", "kill -SEGV $$\n", CommandOptions{}, "signal: segmentation fault"},
		{"timeout", "exec sleep 30\n", CommandOptions{Timeout: 100 * time.Millisecond}, "timed out after 100ms"},
		{"bad JSON", "echo 'allow: yes'\n", CommandOptions{}, "decision is not a JSON object"},
		{"no allow", `echo '{"reasons":[]}'` + "\n", CommandOptions{}, `decision has no boolean "allow"`},
		{"output over the bound", `printf '{"allow":true,"pad":"%0100d"}' 0` + "\n", CommandOptions{MaxOutputBytes: 64}, "wrote more than 64 bytes"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := script(t, tt.body, tt.opts)
			_, err := p.Evaluate(context.Background(), &Request{ToolName: "bash", ToolInput: json.RawMessage(`{}`)})
			if err == nil || !strings.Contains(err.Error(), tt.err) {
				t.Fatalf("error %v, want %q", err, tt.err)
			}
			res, h, err := run(t, newGuard(t, Options{Provider: p}), "bash", nil)
			if err != nil || h.runs != 0 || !res.IsError || !strings.Contains(res.TextContent(), "(oap.evaluator_error)") {
				t.Errorf("guard: runs %d, result %q, err %v", h.runs, res.TextContent(), err)
			}
		})
	}
}

// A timed-out command's children are killed with it: the evaluation
// returns although a grandchild holds stdout open.
func TestCommandProvider_timeoutKillsTheProcessGroup(t *testing.T) {
	p := script(t, "sleep 30 &\nsleep 30\n", CommandOptions{Timeout: 100 * time.Millisecond})
	if _, err := p.Evaluate(context.Background(), &Request{ToolName: "bash", ToolInput: json.RawMessage(`{}`)}); err == nil ||
		!strings.Contains(err.Error(), "timed out") {
		t.Errorf("error %v", err)
	}
}

func TestCommandProvider_cancellationStopsTheRun(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	g := newGuard(t, Options{Provider: script(t, "exec sleep 30\n", CommandOptions{})})
	if res, err := g.Check(ctx, &tool.Call{Name: "bash"}, nil); err != context.Canceled || res != nil {
		t.Errorf("result %v, err %v; want context.Canceled", res, err)
	}
}

func TestNewCommandProvider_requiresACommand(t *testing.T) {
	if _, err := NewCommandProvider(CommandOptions{}); err == nil {
		t.Error("no error without a command")
	}
}
