// Package tool is Antler's core tool vocabulary: a [Tool] is a name, a
// description, an input JSON Schema and a [Handler]; a [Call] carries the
// per-call runtime (thread, user, tool-call id, a read-only view of the
// thread state, a logger); a [Result] carries content blocks, an artifact,
// a state update and the End flag.
//
// Two error channels: anything the model can correct (bad arguments, a
// failed operation, a panic in a handler) becomes a Result with IsError
// set and an "Error: ..." text. Only a cancelled context, a broken
// transport or a broken configuration is returned as a Go error, and it
// stops the run.
//
// [New] is the typed constructor: it derives the input schema from a Go
// struct and validates arguments before the handler runs.
package tool
