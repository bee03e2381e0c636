package authz

import "context"

// Principal is the actor a decision is about, built from the runtime
// context by [Authorizer.Principal] (DeerFlow's Principal).
type Principal struct {
	UserID        string
	Role          string
	OAuthProvider string
	OAuthID       string
	ChannelUserID string
	// IsInternal is true only for a context whose is_internal is the
	// boolean true.
	IsInternal bool
	// Attributes is a copy of the context's authz_attributes.
	Attributes map[string]any
}

// The resource types Antler asks about, and their actions.
const (
	ResourceTool  = "tool"
	ResourceModel = "model"
	ResourceRoute = "route"
	// ResourceMCPServer is asked about every MCP tool, with the tool's
	// server (its Meta mcp_server) as the target.
	ResourceMCPServer = "mcp_server"

	ActionCall = "call" // a tool call
	ActionUse  = "use"  // running a model
	ActionList = "list" // seeing a tool or model in a list
)

// Request is one authorization question (DeerFlow's AuthzRequest).
type Request struct {
	Principal Principal
	// Resource is the resource type ("tool", "model", "route", or a
	// provider's own).
	Resource string
	// Action is what is done to it ("call", "use", "read", ...).
	Action string
	// Target names the resource: a tool name, a model name, a route
	// permission such as "threads:read".
	Target string
	// Context carries what else a provider may decide by: thread_id,
	// run_id, tool_call_id, tool_input, is_subagent, agent_id.
	Context map[string]any
}

// Reason is a structured reason of a decision.
type Reason struct {
	Code    string
	Message string
}

// Decision is a provider's verdict (DeerFlow's AuthzDecision).
type Decision struct {
	Allow    bool
	Reasons  []Reason
	PolicyID string
	Metadata map[string]any
}

// Provider decides authorization questions. Implementations must be safe
// for concurrent use. An error means the provider could not decide; the
// Authorizer then applies fail_closed.
type Provider interface {
	// Name names the provider in logs ("rbac").
	Name() string
	// Authorize answers one request: a tool call, a model use, a route.
	Authorize(ctx context.Context, req Request) (Decision, error)
	// FilterResources returns the candidates of resourceType the
	// principal may see, in their order. Names it returns that are not
	// candidates are dropped by the Authorizer.
	FilterResources(ctx context.Context, p Principal, resourceType string, candidates []string) ([]string, error)
}

// Factory builds a provider from authorization.provider.config. A program
// that embeds Antler passes factories keyed by use string.
type Factory func(config map[string]any) (Provider, error)
