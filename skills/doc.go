// Package skills implements DeerFlow's SKILL.md skill packages: parsing
// and validation, the per-user skill store, the system-prompt section,
// the deterministic security scanner, the model-based moderation scan and
// the allowed-tools policy of activated skills.
//
// Start with [Store]: [NewStore] discovers the read-only public skills
// under {skills_path}/public, the read-only legacy skills under
// {skills_path}/custom and each user's editable custom skills under
// {home}/users/{user}/skills/custom, merges the enable state of the
// extensions file, and owns the atomic writes and per-skill locks that
// builtin skill_manage uses. [RenderPrompt] renders the
// <skill_system>/<available_skills> block the lead-agent factory adds to
// the system prompt; [ScanCandidate] runs the static rules;
// [Moderator] asks a chat model for one allow/warn/block decision;
// [Policy] applies the allowed-tools declarations of slash-activated or
// loaded skills to tool schemas and tool calls.
//
// Two parsers exist on purpose. [ValidateContent] is strict and returns
// DeerFlow's exact messages; it guards every write. The other is lenient
// and is what discovery uses: a malformed skill is skipped with a logged
// reason instead of failing the whole listing.
package skills
