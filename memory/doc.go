// Package memory is DeerFlow's long-term memory with its deermem backend:
// one memory document per user (summaries of the user's context and
// history, and a bounded list of facts), kept atomically under the home
// or in the database store, extended after turns by the configured model
// (a debounced, bounded queue; a confidence threshold; corrections kept
// first; a staleness review of aged facts), and injected into the lead
// agent's system prompt within a token budget.
//
// A [Manager] owns the documents of every user: the gateway's memory
// routes, the memory tools of mode "tool" ([Manager.Tools]) and the CLI's
// antler memory commands all go through it, so that every write is one
// serialised read-modify-write of one user's document. [Manager.Enqueue]
// schedules an extraction after a turn; [Manager.Close] drains the queue
// within the section's shutdown_flush_timeout_seconds.
//
// Failures never lose a turn or the existing memory: an extraction whose
// model call or answer fails is logged and dropped, and a write replaces
// the document whole (temporary file, sync, rename) or not at all.
package memory
