// Package toolset assembles, per run, the exact list of tools an agent may
// bind: the Go form of DeerFlow's get_available_tools.
//
// A [Registry] maps `use` strings (DeerFlow's Python paths such as
// "deerflow.sandbox.tools:bash_tool", and Antler's short names such as
// "antler:bash") to Go factories. [DefaultRegistry] builds the registry of
// everything Antler implements, in one visible place; programs that embed
// Antler add their own entries to a registry value.
//
// [Assembler.Assemble] combines the four sources in DeerFlow's order
// (config tools, built-ins, MCP tools, the ACP tool) and de-duplicates by
// name, first one wins.
package toolset
