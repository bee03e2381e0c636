// Package builtin holds Antler's built-in tools: the tools that
// toolset.Assemble adds by rule rather than from config.yaml
// (present_files, ask_clarification, view_image, task, ...) and the tools
// the lead-agent factory adds (setup_agent, update_agent).
//
// Each tool lives in its own file with its model-facing description in an
// embedded .md file beside it. Constructors return a *tool.Tool; tools
// that need a service take it as an argument, so the package holds no
// state of its own.
package builtin
