package guardrails

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/antlerhq/antler/tool"
)

// captured evaluates call (arguments args) with a capturing provider and
// returns the request it saw.
func captured(t *testing.T, call *tool.Call, args string) *Request {
	t.Helper()
	p := allowAll()
	clock := func() time.Time { return time.Date(2026, 6, 19, 8, 30, 0, 123456000, time.FixedZone("CST", 8*3600)) }
	g := newGuard(t, Options{Provider: p, Now: clock})
	if _, err := g.Check(context.Background(), call, json.RawMessage(args)); err != nil {
		t.Fatal(err)
	}
	return p.last(t)
}

// DeerFlow's TestGuardrailRequestAttribution, case by case: the runtime
// context's identity keys and the call's id reach the request; what is
// missing stays empty.
func TestRequest_attribution(t *testing.T) {
	base := Request{ToolName: "bash", ToolInput: json.RawMessage(`{}`), Timestamp: "2026-06-19T00:30:00.123456+00:00",
		AuthzAttributes: map[string]any{}}
	with := func(f func(*Request)) Request { r := base; f(&r); return r }
	tests := []struct {
		name string
		call *tool.Call
		want Request
	}{
		{"no attribution fields", &tool.Call{Name: "bash"}, base},
		{"only user_id", &tool.Call{Name: "bash", Context: map[string]any{"user_id": "user_abc"}},
			with(func(r *Request) { r.UserID = "user_abc" })},
		{"authenticated user context", &tool.Call{Name: "bash", Context: map[string]any{
			"user_id": "user_abc", "user_role": "admin", "oauth_provider": "github", "oauth_id": "gh_123",
			"channel_user_id": "channel_123", "is_internal": true, "authz_attributes": map[string]any{"department": "engineering"}}},
			with(func(r *Request) {
				r.UserID, r.UserRole, r.OAuthProvider, r.OAuthID = "user_abc", "admin", "github", "gh_123"
				r.ChannelUserID, r.IsInternal, r.AuthzAttributes = "channel_123", true, map[string]any{"department": "engineering"}
			})},
		{"only run_id", &tool.Call{Name: "bash", Context: map[string]any{"run_id": "run_xyz"}},
			with(func(r *Request) { r.RunID = "run_xyz" })},
		{"only tool_call_id", &tool.Call{Name: "web_search", ID: "call_42"},
			with(func(r *Request) { r.ToolName, r.ToolCallID = "web_search", "call_42" })},
		{"all attribution fields", &tool.Call{Name: "bash", ID: "call_all", Context: map[string]any{
			"user_id": "user_abc", "user_role": "user", "oauth_provider": "google", "oauth_id": "google_123",
			"run_id": "run_xyz", "is_subagent": true, "thread_id": "t1"}},
			with(func(r *Request) {
				r.UserID, r.UserRole, r.OAuthProvider, r.OAuthID = "user_abc", "user", "google", "google_123"
				r.RunID, r.ToolCallID, r.IsSubagent, r.ThreadID = "run_xyz", "call_all", true, "t1"
			})},
		{"partial attribution fields", &tool.Call{Name: "bash", ID: "call_partial", Context: map[string]any{"user_id": "user_partial"}},
			with(func(r *Request) { r.UserID, r.ToolCallID = "user_partial", "call_partial" })},
		{"empty context with tool call", &tool.Call{Name: "bash", ID: "call_empty_context", Context: map[string]any{}},
			with(func(r *Request) { r.ToolCallID = "call_empty_context" })},
		{"is_internal only when exactly true", &tool.Call{Name: "bash", Context: map[string]any{"is_internal": "true"}}, base},
		{"the call's own ids without a runtime context", &tool.Call{Name: "bash", ThreadID: "t9", UserID: "u9", RunID: "r9"},
			with(func(r *Request) { r.ThreadID, r.UserID, r.RunID = "t9", "u9", "r9" })},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(&tt.want, captured(t, tt.call, "{}")); diff != "" {
				t.Errorf("request (-want +got):\n%s", diff)
			}
		})
	}
}

// The request holds a copy of authz_attributes: a later change to the
// runtime context does not reach it.
func TestRequest_authzAttributesAreCopied(t *testing.T) {
	attrs := map[string]any{"department": "engineering"}
	req := captured(t, &tool.Call{Name: "bash", Context: map[string]any{"authz_attributes": attrs}}, "{}")
	attrs["department"] = "changed"
	if req.AuthzAttributes["department"] != "engineering" {
		t.Errorf("authz_attributes %v follow the context", req.AuthzAttributes)
	}
}

// DeerFlow raises TypeError for authz_attributes that is not a mapping;
// here the call cannot be made (a Go error, which tool.Invoke turns into a
// failure result) and the tool does not run.
func TestRequest_nonMappingAuthzAttributesAreAnError(t *testing.T) {
	g := newGuard(t, Options{Provider: allowAll()})
	h := &handlerProbe{}
	call := &tool.Call{Name: "bash", Context: map[string]any{"authz_attributes": []any{"not", "a", "mapping"}}}
	res, err := tool.Invoke(context.Background(), tool.Chain(h.handle, g.ToolMiddleware()), call, json.RawMessage(`{}`))
	if err != nil || h.runs != 0 || !res.IsError || !strings.Contains(res.TextContent(), "authz_attributes must be a Mapping") {
		t.Errorf("runs %d, result %q, err %v", h.runs, res.TextContent(), err)
	}
}

// The request's JSON has DeerFlow's field names, the tool input as the
// model sent it.
func TestRequest_jsonFieldNames(t *testing.T) {
	req := captured(t, &tool.Call{Name: "bash", ID: "c1"}, `{"command":"ls"}`)
	data, err := json.Marshal(req)
	if err != nil {
		t.Fatal(err)
	}
	var got map[string]any
	if err := json.Unmarshal(data, &got); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"tool_name", "tool_input", "agent_id", "thread_id", "is_subagent", "timestamp", "user_id",
		"user_role", "oauth_provider", "oauth_id", "run_id", "tool_call_id", "channel_user_id", "is_internal", "authz_attributes"} {
		if _, ok := got[k]; !ok {
			t.Errorf("request JSON %s lacks %q", data, k)
		}
	}
	if diff := cmp.Diff(map[string]any{"command": "ls"}, got["tool_input"]); diff != "" {
		t.Errorf("tool_input (-want +got):\n%s", diff)
	}
}
