// Package deferred keeps a run's MCP tool schemas out of the model request
// until the model asks for them.
//
// The MCP tools of a run form a [Catalog], identified by a 16-hex hash of
// its sorted names and schemas. The model sees only the names, listed in
// the system prompt by [Catalog.PromptSection]; it calls the tool_search tool
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
// [Catalog.Search] reads tool_search's query forms: "select:a,b" names
// tools, "+keyword rest" keeps the tools whose name contains keyword, and anything else is
// a ranked search. Ranking is the work of the internal package
// deferred/internal/search (BM25F over stemmed words with lexicon
// synonyms, WordNet derivations, CC-CEDICT glosses and CJK bigrams, its
// matches reordered by embedded word vectors, after DeerFlow's regex
// matches), whose index a catalogue builds once.
// [CatalogCache] keeps the indexes of recent tool lists, so that runs,
// subagent tasks and threads with the same MCP tools share one build;
// [CatalogCache.SetupRouted] is SetupRouted through it.
package deferred
