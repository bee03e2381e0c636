package telemetry

import "go.opentelemetry.io/otel/attribute"

// Attribute keys of the GenAI semantic conventions and Antler's own
// (antler.*). They are spelled out here rather than taken from a semconv
// package so that one file says what a span carries.
const (
	keyOperation       = attribute.Key("gen_ai.operation.name")
	keyProvider        = attribute.Key("gen_ai.provider.name")
	keyRequestModel    = attribute.Key("gen_ai.request.model")
	keyResponseModel   = attribute.Key("gen_ai.response.model")
	keyMaxTokens       = attribute.Key("gen_ai.request.max_tokens")
	keyTemperature     = attribute.Key("gen_ai.request.temperature")
	keyInputTokens     = attribute.Key("gen_ai.usage.input_tokens")
	keyOutputTokens    = attribute.Key("gen_ai.usage.output_tokens")
	keyFinishReasons   = attribute.Key("gen_ai.response.finish_reasons")
	keyTokenType       = attribute.Key("gen_ai.token.type")
	keyInputMessages   = attribute.Key("gen_ai.input.messages")
	keyOutputMessages  = attribute.Key("gen_ai.output.messages")
	keyAgentName       = attribute.Key("gen_ai.agent.name")
	keyConversationID  = attribute.Key("gen_ai.conversation.id")
	keyToolName        = attribute.Key("gen_ai.tool.name")
	keyToolCallID      = attribute.Key("gen_ai.tool.call.id")
	keyToolType        = attribute.Key("gen_ai.tool.type")
	keyToolArguments   = attribute.Key("gen_ai.tool.call.arguments")
	keyToolResult      = attribute.Key("gen_ai.tool.call.result")
	keyErrorType       = attribute.Key("error.type")
	keyRunID           = attribute.Key("antler.run.id")
	keyRunOutcome      = attribute.Key("antler.run.outcome")
	keyTurns           = attribute.Key("antler.run.turns")
	keyTTFT            = attribute.Key("antler.time_to_first_token")
	keyToolSource      = attribute.Key("antler.tool.source")
	keyToolOutcome     = attribute.Key("antler.tool.outcome")
	keyToolDecision    = attribute.Key("antler.tool.decision")
	keyMCPServer       = attribute.Key("antler.mcp.server")
	keyMCPState        = attribute.Key("antler.mcp.state")
	keyCheckpointSrc   = attribute.Key("antler.checkpoint.source")
	keyCheckpointStep  = attribute.Key("antler.checkpoint.step")
	keyModelConfigName = attribute.Key("antler.model.name")
)

// Operation names (gen_ai.operation.name).
const (
	OpChat        = "chat"
	OpExecuteTool = "execute_tool"
	OpInvokeAgent = "invoke_agent"
)
