// Package toolpolicy is Antler's approval policy for tool calls: rules
// that allow a call, refuse it, or ask a human before it runs, by tool
// name, source, MCP server, MCP tool annotation and, for bash, by the
// commands of the parsed command line. See docs/differences.md, "Approval
// before dangerous tools".
package toolpolicy

import (
	"encoding/json"

	"github.com/antlerhq/antler/tool"
)

// Action is what a policy decides for one tool call.
type Action string

// The actions of a rule. The zero Action means no rule matched; callers
// treat it as ActionAllow.
const (
	ActionAllow Action = "allow"
	ActionAsk   Action = "ask"
	ActionDeny  Action = "deny"
)

// Decision is the policy's answer for one call.
type Decision struct {
	// Action is allow, ask or deny.
	Action Action
	// Rule names the rule that decided, as the config spells its place
	// (such as "tool_policy.rules[2]"); "" when no rule matched.
	Rule string
	// Reason is the rule's reason for the human and the model ("" when the
	// rule gives none).
	Reason string
	// Command is, when a bash command rule decided, the command of the
	// line it matched (words joined by spaces; the whole line when it does
	// not parse), cut to 1,000 bytes; "" otherwise.
	Command string
}

// Decider decides one call before it runs. call.Meta holds the tool's
// labels (source, MCP server, MCP annotations); args is the JSON object
// the model sent. It must be safe for concurrent use.
type Decider interface {
	Decide(call *tool.Call, args json.RawMessage) Decision
}
