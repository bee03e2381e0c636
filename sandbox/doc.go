// Package sandbox is the local sandbox: a [Provider] that hands out one
// [Sandbox] per (user, thread), and the file and shell tools that work
// inside it — ls, read_file, write_file, str_replace, glob, grep and bash —
// with DeerFlow's arguments, limits and texts (DeerFlow's sandbox/tools.py).
//
// Start with [NewLocal] (or [FromConfig]) for the provider and [NewTools]
// for the tools; [ReadBeforeWrite] is the version gate that refuses to
// modify a file the agent has not read at its current content.
//
// Every path a tool receives is a virtual path (see package vpath). It is
// checked by the thread's vpath.Layout and then opened through os.Root at
// the root's host folder, so a symlink that points out of the thread —
// even one swapped in between the check and the open — is refused. Every
// text a tool returns has the thread's host paths masked back to virtual
// ones.
//
// The local provider is not a security boundary for bash: host bash is off
// unless sandbox.allow_host_bash is set, and its command checks are a
// best-effort guard for trusted setups, as in DeerFlow.
package sandbox
