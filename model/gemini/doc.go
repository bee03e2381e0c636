// Package gemini is the Gemini API provider of Antler (DeerFlow's
// langchain_google_genai:ChatGoogleGenerativeAI) against the Gemini
// Developer API. It speaks the one REST method it needs,
// models.streamGenerateContent with server-sent events (wire.go,
// client.go), instead of linking Google's SDK google.golang.org/genai:
// the SDK's package initialisation reaches code that looks methods up by
// name, which turns off the linker's removal of unused methods for the
// whole binary and doubled its size (docs/design.md, "Binary size").
//
// Like the other providers, [New] never fails for a missing API key: the
// first Generate returns a one-line [model.ProviderError] naming the
// models[] entry and what to set. Generate streams text, thought
// summaries (as reasoning deltas, when include_thoughts asks for them)
// and function calls; each call's thought signature is kept on
// [model.ToolCall.Signature] and sent back with the call, as the API
// requires while thinking.
package gemini
