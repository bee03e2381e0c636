// Package gemini is the Gemini API provider of Antler (DeerFlow's
// langchain_google_genai:ChatGoogleGenerativeAI), built on Google's Go
// SDK google.golang.org/genai against the Gemini Developer API.
//
// Like the other providers, [New] never fails for a missing API key: the
// first Generate returns a one-line [model.ProviderError] naming the
// models[] entry and what to set. Generate streams text, thought
// summaries (as reasoning deltas, when include_thoughts asks for them)
// and function calls; each call's thought signature is kept on
// [model.ToolCall.Signature] and sent back with the call, as the API
// requires while thinking.
package gemini
