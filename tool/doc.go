// Package tool is Antler's core tool vocabulary: a [Tool] is a name, a
// description, an input JSON Schema and a [Handler]; a [Call] carries the
// per-call runtime (thread, user, tool-call id, a read-only view of the
// thread state, a logger); a [Result] carries content blocks, an artifact,
// a state update and the End flag.
//
// # The error contract
//
// This is the one statement of how tools report failure; [Invoke]
// enforces it, and the agent loop, `antler tools call` and the tool
// contract suite (tool/tooltest) call tools only through it.
//
//   - A failure the model can act on (bad arguments, a missing file, a
//     refused path, a remote error) is a [Result] with IsError set whose
//     text starts with "Error: " ([Errorf]). This is the normal channel.
//   - A Go error from a handler means the call could not be made at all
//     (a broken transport, a misconfigured tool). It does not stop the
//     run: Invoke turns it into DeerFlow's failure text ("Error: Tool 'x'
//     failed with {Kind}: {detail}. Continue with available context, or
//     choose an alternative tool.", [FailureResult]) and marks the result
//     with [Failure], so that the model can choose another tool.
//   - A panic is recovered by Invoke, and only there, into the same
//     failure text with the kind "panic".
//   - Cancellation (the call's context is done, or context.Canceled) is
//     the only Go error Invoke returns; it stops the run.
//
// Model-facing texts therefore travel as results, never as Go errors,
// with one documented exception: the error a [TypedHandler] returns is
// the text of its error result, as in the MCP SDK's typed handlers.
//
// [New] is the typed constructor: it derives the input schema from a Go
// struct and validates arguments before the handler runs.
package tool
