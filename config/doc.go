// Package config loads DeerFlow-compatible config.yaml and
// extensions_config.json files into typed Go values.
//
// [Load] (or the pure [Parse]) reads config.yaml strictly: every error is an
// [*Error] carrying the file, line and key path (for example
// "config.yaml:12: models[0].api_key: environment variable OPENAI_KEY is not
// set"). Every key Antler does not read is an error naming the nearest
// known key ([UnknownKeyMsg]), at the top level too, except that extra keys
// in models[], tools[] and tool_groups[] entries are kept as provider
// options (tool factories check theirs; [Config.UnknownModelKeys] warns
// about model keys no provider reads). Top-level sections that only
// DeerFlow implements (memory, tracing, ...) are accepted and listed in
// [Config.Ignored], so DeerFlow's own config.example.yaml loads unchanged.
//
// A string value that starts with "$" names an environment variable. In
// config.yaml a missing variable is a load error; in extensions_config.json it
// becomes the empty string plus a warning, except in the headers and env of an
// enabled MCP server, where it is an error for that server only
// ([MCPServer.Err]).
//
// [LoadExtensions] reads extensions_config.json, as strictly: an unknown
// key anywhere in it is an error at its line. Because another process (the
// gateway) may rewrite that file at any time, [ExtensionsCache] stats it on
// every Get, re-checks its [Signature] (mtime, size and SHA-256) only when
// the stat changed or the file was written just before its last read, and
// re-parses only when the signature changed. [WriteFileAtomic] is the one way Antler writes these
// files. [ApplyDotEnv] loads the .env file beside config.yaml into the
// environment, existing variables winning. [ResolvePaths] implements the
// --config/--extensions/--home lookup order of the CLI contract.
package config
