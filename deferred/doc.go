// Package deferred keeps a run's MCP tool schemas out of the model request
// until the model asks for them.
//
// The MCP tools of a run form a [Catalog], identified by a 16-hex hash of
// its sorted names and schemas. The model sees only the names, listed in
// the system prompt by [PromptSection]; it calls the tool_search tool
// ([NewToolSearch]) to fetch full definitions, and every tool returned is
// promoted: recorded in the thread state as {catalog_hash, names}
// (thread.Promoted) so that the promotion survives later turns and is
// dropped when the catalogue changes.
//
// Two middlewares enforce the split: [Catalog.FilterModel] removes the
// unpromoted schemas from each model request, and [Catalog.GuardTools]
// answers a call to an unpromoted tool with DeerFlow's "deferred and has
// not been promoted" error without running it. [Setup] builds all of this
// from the assembled MCP tools and the tool_search configuration; it is
// the entry point for the lead-agent factory. [SetupRouted] adds keyword
// routing ([Router]): tools whose extensions-file routing is
// {mode: prefer} and whose keywords occur in the latest real user message
// are exposed for that turn's model calls by the routing middleware,
// which must run before the filter, and listed in <mcp_routing_hints>.
//
// Ranked search ([Catalog.Search]) is BM25F over the tool name, server,
// description and parameter names and descriptions, with identifier
// splitting (camelCase, snake_case, kebab-case; CJK text as character
// bigrams) and decompounding of name identifiers against the catalogue's
// own words, Snowball stemming,
// stop words, a small hand-written lexicon of software and everyday
// synonyms (lexicon.txt) and WordNet's derivationally related forms
// (derivations.txt) — a query word scores its best form, never the sum
// of its forms — truncation matches and name/server boosts. Chinese
// text is also read as the English glosses of its CC-CEDICT words
// (cedict.txt), so English queries find Chinese descriptions and the
// other way round. A query
// that is a valid regular expression matching some tools still returns
// those first, as DeerFlow's single-regex search did.
package deferred
