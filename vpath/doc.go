// Package vpath is the virtual path contract between an agent and the
// host: the agent sees fixed, host-independent paths and every tool
// translates them to per-user, per-thread host folders through a [Layout].
//
// The agent-visible roots are
//
//	/mnt/user-data/workspace   read/write  {home}/users/{user}/threads/{thread}/user-data/workspace
//	/mnt/user-data/uploads     read/write  .../user-data/uploads
//	/mnt/user-data/outputs     read/write  .../user-data/outputs
//	/mnt/acp-workspace         read-only   {home}/users/{user}/threads/{thread}/acp-workspace
//	/mnt/skills/public         read-only   {skills path}/public
//	/mnt/skills/legacy         read-only   {skills path}/custom (DeerFlow's pre-isolation custom skills)
//	/mnt/skills/custom         read-only   {home}/users/{user}/skills/custom
//	/mnt/skills/integrations   read-only   {home}/integrations/skills
//	sandbox.mounts[].container_path        its host_path, read-only when the mount says so
//
// Start with [New] (or [FromConfig]), then [Layout.Resolve] to turn a
// virtual path into a host path that is safe to open, and [Layout.Mask] to
// turn any text the agent will read back into virtual paths.
//
// Resolution is strict: the path must be absolute, "..", in either slash
// style, is refused anywhere, a NUL byte is refused, the longest matching
// root wins and matching respects segment boundaries (/mnt/user-data-x is
// not under /mnt/user-data), and the host path, with its symlinks
// resolved, must stay inside its root. Percent-encoded or otherwise
// escaped forms are not decoded: they are literal file names. Callers that
// open files should do so through [os.Root] at [Target.Jail] with
// [Target.Rel] (as package sandbox does), which also defeats a symlink
// swapped in after validation.
package vpath
