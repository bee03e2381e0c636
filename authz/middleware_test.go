package authz

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/antlerhq/antler/deferred"
	"github.com/antlerhq/antler/tool"
)

// run calls a tool through a's middleware and reports the result and
// whether the tool ran.
func run(t *testing.T, a *Authorizer, call *tool.Call) (*tool.Result, bool) {
	t.Helper()
	ran := false
	h := tool.Chain(func(context.Context, *tool.Call, json.RawMessage) (*tool.Result, error) {
		ran = true
		return tool.Text("ran"), nil
	}, a.ToolMiddleware())
	res, err := h(context.Background(), call, json.RawMessage(`{"command":"whoami"}`))
	if err != nil {
		t.Fatal(err)
	}
	return res, ran
}

// TestToolMiddleware_deniedCallNeverRuns re-expresses DeerFlow's
// execution-time cases: a denied call gets DeerFlow's error text with the
// reason code and never runs, with the principal and request built from
// the runtime context; an allowed call runs.
func TestToolMiddleware_deniedCallNeverRuns(t *testing.T) {
	p := &fakeProvider{denied: set1("bash")}
	a := custom(t, p, true)
	call := &tool.Call{ID: "call-1", Name: "bash", ThreadID: "t1", RunID: "r1",
		Context: map[string]any{"user_id": "u1", "user_role": "guest", "thread_id": "t1", "run_id": "r1"}}
	res, ran := run(t, a, call)
	if ran || !res.IsError {
		t.Fatalf("denied call ran=%v is_error=%v", ran, res.IsError)
	}
	want := "Guardrail denied: tool 'bash' was blocked (authz.denied). Reason: blocked. Choose an alternative approach."
	if got := res.TextContent(); got != want {
		t.Errorf("text = %q, want %q", got, want)
	}
	req := p.requests[0]
	if diff := cmp.Diff(Principal{UserID: "u1", Role: "guest", Attributes: map[string]any{}}, req.Principal); diff != "" {
		t.Errorf("principal (-want +got):\n%s", diff)
	}
	if req.Resource != "tool" || req.Action != "call" || req.Target != "bash" || req.Context["run_id"] != "r1" ||
		req.Context["tool_call_id"] != "call-1" || !cmp.Equal(req.Context["tool_input"], map[string]any{"command": "whoami"}) {
		t.Errorf("request = %+v", req)
	}
	if _, ran := run(t, a, &tool.Call{Name: "web_search", Context: map[string]any{"user_role": "guest"}}); !ran {
		t.Error("allowed call did not run")
	}
}

// TestToolMiddleware_failClosed: a provider failure refuses the call when
// fail_closed (DeerFlow's evaluator-error text) and lets it run when not.
func TestToolMiddleware_failClosed(t *testing.T) {
	call := func() *tool.Call { return &tool.Call{Name: "bash", Context: map[string]any{"user_role": "user"}} }
	res, ran := run(t, custom(t, &fakeProvider{errors: set1("bash")}, true), call())
	want := "Guardrail denied: tool 'bash' was blocked (oap.evaluator_error). Reason: guardrail provider error (fail-closed). Choose an alternative approach."
	if ran || res.TextContent() != want {
		t.Errorf("fail closed: ran=%v text=%q", ran, res.TextContent())
	}
	if _, ran := run(t, custom(t, &fakeProvider{errors: set1("bash")}, false), call()); !ran {
		t.Error("fail open: the call did not run")
	}
	r := rbacAuthorizer(t, map[string]any{"user": map[string]any{}}, "user")
	if _, ran := run(t, r, &tool.Call{Name: "bash", Context: map[string]any{"user_role": "editor"}}); ran {
		t.Error("unknown role: the call ran")
	}
}

// TestToolMiddleware_deferredToolSearchIsInfrastructure re-expresses
// DeerFlow's infrastructure exemption: the deferred tool_search (its
// catalogue already filtered) runs for a role that does not list it; a
// plain tool named tool_search does not.
func TestToolMiddleware_deferredToolSearchIsInfrastructure(t *testing.T) {
	a := rbacAuthorizer(t, map[string]any{"guest": map[string]any{"tools": map[string]any{"allow": []any{"mcp_allowed"}}}}, "guest")
	ts := deferred.NewToolSearch(deferred.NewCatalog(nil), 0)
	if _, ran := run(t, a, &tool.Call{Name: ts.Name, Meta: ts.Meta, Context: map[string]any{"user_role": "guest"}}); !ran {
		t.Error("deferred tool_search refused")
	}
	if res, ran := run(t, a, &tool.Call{Name: "tool_search", Context: map[string]any{"user_role": "guest"}}); ran || !res.IsError {
		t.Error("tool_search without a deferred catalogue was let through")
	}
	if (&Authorizer{}).ToolMiddleware() != nil {
		t.Error("off: a middleware was returned")
	}
}
