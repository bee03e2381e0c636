package guardrails

import (
	"context"
	"testing"
)

// DeerFlow's TestAllowlistProvider, case by case.
func TestAllowlistProvider(t *testing.T) {
	tests := []struct {
		name            string
		allowed, denied []string
		tool            string
		allow           bool
		code, message   string
	}{
		{name: "no restrictions allows all", tool: "bash", allow: true, code: CodeAllowed},
		{name: "denied tools", denied: []string{"bash", "write_file"}, tool: "bash",
			code: CodeToolNotAllowed, message: "tool 'bash' is denied"},
		{name: "denied tools allows unlisted", denied: []string{"bash"}, tool: "web_search", allow: true, code: CodeAllowed},
		{name: "allowed tools blocks unlisted", allowed: []string{"web_search", "read_file"}, tool: "bash",
			code: CodeToolNotAllowed, message: "tool 'bash' not in allowlist"},
		{name: "allowed tools allows listed", allowed: []string{"web_search"}, tool: "web_search", allow: true, code: CodeAllowed},
		{name: "empty allowlist blocks bash", allowed: []string{}, tool: "bash",
			code: CodeToolNotAllowed, message: "tool 'bash' not in allowlist"},
		{name: "empty allowlist blocks web_search", allowed: []string{}, tool: "web_search",
			code: CodeToolNotAllowed, message: "tool 'web_search' not in allowlist"},
		{name: "empty allowlist blocks read_file", allowed: []string{}, tool: "read_file",
			code: CodeToolNotAllowed, message: "tool 'read_file' not in allowlist"},
		{name: "both allowed and denied: the denylist wins", allowed: []string{"bash", "web_search"}, denied: []string{"bash"},
			tool: "bash", code: CodeToolNotAllowed, message: "tool 'bash' is denied"},
		{name: "both allowed and denied: another listed tool passes", allowed: []string{"bash", "web_search"}, denied: []string{"bash"},
			tool: "web_search", allow: true, code: CodeAllowed},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d, err := NewAllowlistProvider(tt.allowed, tt.denied).Evaluate(context.Background(), &Request{ToolName: tt.tool})
			if err != nil {
				t.Fatal(err)
			}
			if d.Allow != tt.allow || len(d.Reasons) != 1 || d.Reasons[0].Code != tt.code || d.Reasons[0].Message != tt.message {
				t.Errorf("decision %+v, want allow=%v code=%s message=%q", d, tt.allow, tt.code, tt.message)
			}
		})
	}
}

// DeerFlow's test_async_delegates_to_sync: Go has one Evaluate, which is
// safe to call from many goroutines at once.
func TestAllowlistProvider_concurrentEvaluations(t *testing.T) {
	p := NewAllowlistProvider(nil, []string{"bash"})
	done := make(chan bool)
	for range 8 {
		go func() {
			d, _ := p.Evaluate(context.Background(), &Request{ToolName: "bash"})
			done <- d.Allow
		}()
	}
	for range 8 {
		if <-done {
			t.Error("bash allowed")
		}
	}
}
