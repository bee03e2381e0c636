// Package customagent stores custom agents: per user, one folder
// {home}/users/{user}/agents/{name}/ holding config.yaml (name,
// description, model, tool_groups, skills, model-behaviour defaults and
// any other key, preserved) and SOUL.md (the agent's personality, injected
// into the lead prompt). It is DeerFlow's file agent store, with the same
// layout and file formats, so agents move between the two unchanged.
//
// Start with [New], then [Store.Load] to read an agent and [Store.Update]
// to create or change one.
//
// Unlike DeerFlow, an update is atomic across both files. The new files
// are written and synced into a staging folder inside the agent's folder;
// renaming that folder to ".commit" is the commit point; then each file is
// renamed into place and the folder removed. A crash before the commit
// point leaves the old agent (the staging folder is deleted on next
// access); a crash after it leaves the new one (the next access finishes
// the renames). Readers go through the same lock, so they never see a
// half-applied update either. Updates of one agent are serialised by a
// per-agent mutex in the process and, on Unix, an flock(2) on a lock file
// beside the agent's folder, so two processes sharing a home (the CLI and
// the gateway) serialise too. Agents of different users never share a
// folder or a lock.
package customagent
