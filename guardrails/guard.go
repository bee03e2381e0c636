package guardrails

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"time"

	"github.com/antlerhq/antler/config"
	"github.com/antlerhq/antler/tool"
)

// The actions of audit events, as DeerFlow's run journal names them.
const (
	ActionDeny                    = "deny_tool_call"
	ActionAllowAfterProviderError = "allow_tool_call_after_provider_error"
)

// maxReasonMessage bounds each reason message of an audit event.
const maxReasonMessage = 500

// Options configure a Guard.
type Options struct {
	// Provider decides the calls; required.
	Provider Provider
	// FailOpen lets a call through when the provider fails. The zero value
	// fails closed, as DeerFlow's fail_closed: true default does.
	FailOpen bool
	// Passport is sent as every request's agent_id ("" = none).
	Passport string
	// Record, if set, receives the audit event of every denied call and of
	// every call let through after a provider failure (DeerFlow's
	// middleware:guardrail journal event); its error is logged and changes
	// nothing. Allowed calls are not recorded. Nil logs the event instead.
	Record func(ctx context.Context, ev Event) error
	// Logger; nil discards.
	Logger *slog.Logger
	// Now is the clock of request timestamps; nil means time.Now.
	Now func() time.Time
}

// Event is the audit record of a guardrail decision: DeerFlow's journal
// "changes" (the tool input and the user's id are left out on purpose).
type Event struct {
	Action         string   `json:"action"`
	ToolName       string   `json:"tool_name"`
	ToolCallID     string   `json:"tool_call_id"`
	AgentID        string   `json:"agent_id"`
	IsSubagent     bool     `json:"is_subagent"`
	UserRole       string   `json:"user_role"`
	Allow          bool     `json:"allow"`
	PolicyID       string   `json:"policy_id"`
	ReasonCodes    []string `json:"reason_codes"`
	ReasonMessages []string `json:"reason_messages"`
	FailClosed     bool     `json:"fail_closed"`
	ProviderError  bool     `json:"provider_error"`
}

// Guard evaluates tool calls with one provider. It is safe for
// concurrent use.
type Guard struct {
	opts Options // immutable after New
}

// New returns a guard; a nil provider is an error.
func New(opts Options) (*Guard, error) {
	if opts.Provider == nil {
		return nil, errors.New("guardrails: a provider is required")
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	return &Guard{opts: opts}, nil
}

// FromConfig returns the guard of the guardrails section with its
// provider built through reg, or nil when the section is disabled. An
// unknown use string or bad provider settings are *config.Error values.
func FromConfig(cfg *config.Config, reg *Registry, logger *slog.Logger) (*Guard, error) {
	g := cfg.Guardrails
	if !g.Enabled || g.Provider == nil {
		return nil, nil
	}
	p, err := reg.Build(Env{Config: cfg, Logger: logger}, g.Provider)
	if err != nil {
		return nil, err
	}
	return New(Options{Provider: p, FailOpen: !g.FailClosed, Passport: g.Passport, Logger: logger})
}

// ToolMiddleware returns the middleware that evaluates every call before
// it runs; a nil Guard returns nil (no middleware).
func (g *Guard) ToolMiddleware() tool.Middleware {
	if g == nil {
		return nil
	}
	return func(next tool.Handler) tool.Handler {
		return func(ctx context.Context, call *tool.Call, args json.RawMessage) (*tool.Result, error) {
			denied, err := g.Check(ctx, call, args)
			if err != nil || denied != nil {
				return denied, err
			}
			return next(ctx, call, args)
		}
	}
}

// Check evaluates one call: nil means it may run; otherwise the result is
// DeerFlow's error result the model reads instead. The error is non-nil
// only when ctx is done, or when the runtime context's authz_attributes is
// not a mapping (the request cannot be built, as in DeerFlow).
func (g *Guard) Check(ctx context.Context, call *tool.Call, args json.RawMessage) (*tool.Result, error) {
	if g == nil {
		return nil, nil
	}
	req, err := g.request(call, args)
	if err != nil {
		return nil, err
	}
	d, err := g.opts.Provider.Evaluate(ctx, req)
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return g.providerFailed(ctx, req, err), nil
	}
	if d.Allow {
		return nil, nil
	}
	code := "unknown"
	if len(d.Reasons) > 0 {
		code = d.Reasons[0].Code
	}
	g.opts.Logger.Warn("Guardrail denied", "tool", req.ToolName, "policy", d.PolicyID, "code", code, "provider", g.opts.Provider.Name())
	g.record(ctx, req, d, ActionDeny, false)
	return deniedResult(req.ToolName, d), nil
}

// providerFailed applies fail_closed to a provider error: a deny with
// oap.evaluator_error, or nil (let through) when the guard fails open.
func (g *Guard) providerFailed(ctx context.Context, req *Request, err error) *tool.Result {
	g.opts.Logger.Error("Guardrail provider error", "tool", req.ToolName, "provider", g.opts.Provider.Name(),
		"fail_closed", !g.opts.FailOpen, "err", err)
	if g.opts.FailOpen {
		d := Decision{Allow: true, Reasons: []Reason{{Code: CodeEvaluatorError, Message: "guardrail provider error (fail-open)"}}}
		g.record(ctx, req, d, ActionAllowAfterProviderError, true)
		return nil
	}
	d := deny(CodeEvaluatorError, "guardrail provider error (fail-closed)")
	g.record(ctx, req, d, ActionDeny, true)
	return deniedResult(req.ToolName, d)
}

// deniedResult is DeerFlow's error tool message of a denied call.
func deniedResult(name string, d Decision) *tool.Result {
	reason, code := "blocked by guardrail policy", CodeDenied
	if len(d.Reasons) > 0 {
		reason, code = d.Reasons[0].Message, d.Reasons[0].Code
	}
	text := fmt.Sprintf("Guardrail denied: tool '%s' was blocked (%s). Reason: %s. Choose an alternative approach.", name, code, reason)
	return &tool.Result{Content: []tool.Block{{Type: tool.BlockText, Text: text}}, IsError: true}
}

// request describes call with DeerFlow's fields, read from the call and
// its runtime context.
func (g *Guard) request(call *tool.Call, args json.RawMessage) (*Request, error) {
	attrs, err := authzAttributes(call.Context["authz_attributes"])
	if err != nil {
		return nil, err
	}
	input := args
	if len(input) == 0 || !json.Valid(input) {
		input = json.RawMessage("{}")
	}
	or := func(key, fallback string) string {
		if v := call.ContextString(key); v != "" {
			return v
		}
		return fallback
	}
	isInternal, _ := call.Context["is_internal"].(bool)
	return &Request{
		ToolName: call.Name, ToolInput: input, AgentID: g.opts.Passport,
		ThreadID: or("thread_id", call.ThreadID), IsSubagent: call.ContextBool("is_subagent"),
		Timestamp: g.opts.Now().UTC().Format("2006-01-02T15:04:05.000000-07:00"),
		UserID:    or("user_id", call.UserID), UserRole: call.ContextString("user_role"),
		OAuthProvider: call.ContextString("oauth_provider"), OAuthID: call.ContextString("oauth_id"),
		RunID: or("run_id", call.RunID), ToolCallID: call.ID,
		ChannelUserID: call.ContextString("channel_user_id"), IsInternal: isInternal,
		AuthzAttributes: attrs,
	}, nil
}

// authzAttributes copies the runtime context's authz_attributes; anything
// but a mapping (or nothing) is an error, as DeerFlow raises TypeError.
func authzAttributes(v any) (map[string]any, error) {
	switch m := v.(type) {
	case nil:
		return map[string]any{}, nil
	case map[string]any:
		return maps.Clone(m), nil
	}
	return nil, fmt.Errorf("authz_attributes must be a Mapping, got %T", v)
}

// record sends the audit event of a decision to Options.Record.
func (g *Guard) record(ctx context.Context, req *Request, d Decision, action string, providerError bool) {
	ev := Event{Action: action, ToolName: req.ToolName, ToolCallID: req.ToolCallID, AgentID: req.AgentID,
		IsSubagent: req.IsSubagent, UserRole: req.UserRole, Allow: d.Allow, PolicyID: d.PolicyID,
		ReasonCodes: []string{}, ReasonMessages: []string{}, FailClosed: !g.opts.FailOpen, ProviderError: providerError}
	for _, r := range d.Reasons {
		if r.Code != "" {
			ev.ReasonCodes = append(ev.ReasonCodes, r.Code)
		}
		if r.Message != "" {
			ev.ReasonMessages = append(ev.ReasonMessages, clipRunes(r.Message, maxReasonMessage))
		}
	}
	if g.opts.Record == nil {
		// No journal: the audit event goes to the log.
		g.opts.Logger.Warn("middleware:guardrail", "action", ev.Action, "tool", ev.ToolName, "tool_call_id", ev.ToolCallID,
			"agent_id", ev.AgentID, "is_subagent", ev.IsSubagent, "user_role", ev.UserRole, "allow", ev.Allow,
			"policy_id", ev.PolicyID, "reason_codes", ev.ReasonCodes, "fail_closed", ev.FailClosed, "provider_error", ev.ProviderError)
		return
	}
	if err := g.opts.Record(ctx, ev); err != nil {
		g.opts.Logger.Warn("Failed to record middleware:guardrail event", "err", err)
	}
}

func clipRunes(s string, n int) string {
	if r := []rune(s); len(r) > n {
		return string(r[:n])
	}
	return s
}
