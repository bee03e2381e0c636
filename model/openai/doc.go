// Package openai is the OpenAI-compatible chat-completions provider of
// Antler, speaking the wire format itself over net/http (client.go,
// wire.go) rather than through github.com/openai/openai-go, whose
// registered API areas cost the binary ~20 MB. One [Model] talks to
// OpenAI, DeepSeek, Doubao, Ollama, vLLM or any server that speaks
// POST /chat/completions with server-sent events.
//
// [New] never fails for a missing API key: the key is looked up when the
// model is built (option, then the environment variable named by
// [Options.APIKeyEnv]) and, when it is absent, the first Generate returns
// a one-line [model.ProviderError] naming the models[] entry and what to
// set. This keeps commands that only list tools usable without any
// variable set.
//
// Streaming assembles tool calls by their index, passes reasoning
// deltas (reasoning_content, as DeepSeek, Doubao and vLLM send them, or
// reasoning, as Ollama does) through as [model.Event.ReasoningDelta],
// asks for token usage with stream_options.include_usage, and normalises
// the finish reason.
package openai
