// Package community implements Antler's web tools, the counterparts of
// DeerFlow's community tools: web_fetch, web_search and image_search.
//
// Start with [NewWebFetch], [NewWebSearch] and [NewImageSearch]; each takes
// an options struct whose fields are the keys of the tool's config.yaml
// entry (decode them with [DecodeOptions]). web_fetch fetches pages
// directly, behind the SSRF guard of package netguard, and turns them into
// markdown with go-readability and html-to-markdown ([ExtractHTML]); the
// Jina reader and Tavily extract are optional providers. web_search speaks
// to DuckDuckGo's HTML endpoint (keyless), Tavily, SearXNG and Brave, and
// every provider returns the same JSON shape ([SearchOutput]).
// image_search speaks to DuckDuckGo images, Brave and SearXNG
// ([ImageSearchOutput]).
package community
