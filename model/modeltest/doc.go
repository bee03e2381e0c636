// Package modeltest is a scripted chat model for tests and benchmarks.
//
// A [Script] lists [Turn]s, played one per model call in order, and
// [Rule]s, consulted when the turns run out (first match wins). A turn is
// a complete answer (text, reasoning, tool calls), an HTTP error status,
// an error in the middle of the stream, a dropped connection, a delay, or
// a function that computes the answer from the request, so a test can
// react to tool results. Rules make a script stateless, so hundreds of
// concurrent runs can share one model: "when the last message is from the
// user, call tool X; when it is a tool result, answer".
//
// The same script drives two doubles:
//   - [New] / [FromScript] return a [Model], an in-process
//     [model.ChatModel] that records the requests it receives;
//   - [NewServer] / [NewScriptServer] start an OpenAI-compatible
//     [httptest.Server] on 127.0.0.1 that serves POST /v1/chat/completions
//     (and /chat/completions) with server-sent events (tool calls streamed
//     with their index, finish_reason "tool_calls", a usage chunk when
//     stream_options.include_usage is set, data: [DONE]) or a plain JSON
//     answer, and GET /v1/models. Another process reaches it through
//     [Server.Env] (OPENAI_BASE_URL and OPENAI_API_KEY).
//
// Scripts are data too: [ParseScript] reads the JSON form documented on
// [Script].
package modeltest
