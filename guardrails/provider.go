package guardrails

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
)

// The OAP reason codes Antler itself produces.
const (
	CodeAllowed        = "oap.allowed"
	CodeToolNotAllowed = "oap.tool_not_allowed"
	CodeDenied         = "oap.denied"
	CodeEvaluatorError = "oap.evaluator_error"
)

// Request describes one tool call to a provider, with DeerFlow's field
// names. A field DeerFlow leaves None is "" here (false, {} for the last
// two).
type Request struct {
	ToolName  string          `json:"tool_name"`
	ToolInput json.RawMessage `json:"tool_input"` // the call's arguments, a JSON object
	// AgentID is guardrails.passport, as DeerFlow passes it.
	AgentID    string `json:"agent_id"`
	ThreadID   string `json:"thread_id"`
	IsSubagent bool   `json:"is_subagent"`
	// Timestamp is the time of the evaluation, ISO 8601 in UTC.
	Timestamp     string `json:"timestamp"`
	UserID        string `json:"user_id"`
	UserRole      string `json:"user_role"`
	OAuthProvider string `json:"oauth_provider"`
	OAuthID       string `json:"oauth_id"`
	RunID         string `json:"run_id"`
	ToolCallID    string `json:"tool_call_id"`
	ChannelUserID string `json:"channel_user_id"`
	IsInternal    bool   `json:"is_internal"`
	// AuthzAttributes is a copy of the runtime context's authz_attributes.
	AuthzAttributes map[string]any `json:"authz_attributes"`
}

// Reason is one OAP reason of a decision.
type Reason struct {
	Code    string `json:"code"`
	Message string `json:"message"`
}

// Decision is a provider's verdict (the OAP decision object's core).
type Decision struct {
	Allow    bool           `json:"allow"`
	Reasons  []Reason       `json:"reasons"`
	PolicyID string         `json:"policy_id"`
	Metadata map[string]any `json:"metadata,omitempty"`
}

// Provider decides tool calls. Evaluate returns an error when it cannot
// decide (the guard then fails closed or open); a deny is a Decision with
// Allow false, never an error. A Provider is used concurrently.
type Provider interface {
	// Name is a short label for logs ("allowlist").
	Name() string
	Evaluate(ctx context.Context, req *Request) (Decision, error)
}

// wireDecision is a decision as a command or a service prints it: an OAP
// decision object, bare or under "decision".
type wireDecision struct {
	Allow    *bool           `json:"allow"`
	Reasons  []Reason        `json:"reasons"`
	PolicyID *string         `json:"policy_id"`
	Metadata map[string]any  `json:"metadata"`
	Decision json.RawMessage `json:"decision"`
}

// parseDecision reads an OAP decision object (extra OAP fields such as
// decision_id or signature are ignored), or an object holding one under
// "decision". A document without a boolean "allow" is an error.
func parseDecision(data []byte) (Decision, error) {
	var w wireDecision
	if err := json.Unmarshal(data, &w); err != nil {
		return Decision{}, fmt.Errorf("decision is not a JSON object: %w", err)
	}
	if w.Allow == nil && len(w.Decision) > 0 && w.Decision[0] == '{' {
		if err := json.Unmarshal(w.Decision, &w); err != nil {
			return Decision{}, fmt.Errorf("decision is not a JSON object: %w", err)
		}
	}
	if w.Allow == nil {
		return Decision{}, errors.New(`decision has no boolean "allow"`)
	}
	d := Decision{Allow: *w.Allow, Reasons: w.Reasons, Metadata: w.Metadata}
	if w.PolicyID != nil {
		d.PolicyID = *w.PolicyID
	}
	return d, nil
}
