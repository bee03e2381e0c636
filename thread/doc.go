// Package thread defines the state of one conversation thread and the
// reducers that merge state updates into it.
//
// A [State] is what is checkpointed after every step of a run. Tools and
// middlewares never write it directly: they return an [Update], and the
// agent loop merges updates with [State.Apply], in call order, so that
// parallel tool calls of one step all keep their effects (two
// present_files calls both add their artifacts).
package thread
