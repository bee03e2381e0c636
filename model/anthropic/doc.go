// Package anthropic is the Anthropic Messages API provider of Antler,
// built on github.com/anthropics/anthropic-sdk-go/v2.
//
// System messages become the request's system prompt, tool results are
// sent as tool_result blocks of a user message (consecutive results in
// one message, as the API requires), images as base64 image blocks, and
// the model's thinking is streamed as [model.Event.ReasoningDelta] and
// echoed back, signed, on later turns.
//
// Like model/openai, [New] never fails for a missing API key: the first
// Generate reports it as a one-line [model.ProviderError]. The SDK's own
// credential discovery (profiles, federation) is not used; the key comes
// from Options.APIKey, then ANTHROPIC_API_KEY (or ANTHROPIC_AUTH_TOKEN).
package anthropic
