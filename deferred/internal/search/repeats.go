package search

import "github.com/antlerhq/antler/tool"

// repeatSlack is how many results past the limit a search ranks so that
// the tools repeatsLast moves back can be replaced.
const repeatSlack = 8

// mcpToolKey is the key of a tool's Meta that holds its own name on its
// MCP server (mcptools.MetaTool).
const mcpToolKey = "mcp_tool"

// repeatsLast returns res cut to limit, with each tool whose MCP name
// (write_file) a better-ranked tool of another server already has moved
// behind the others: two servers' write_file are one capability, and the
// slot is worth another. A tool of a server the query names is never
// moved ("read it with the filesystem server").
func (ix *Index) repeatsLast(rk *ranking, res []scored, limit int) []scored {
	out := make([]scored, 0, min(len(res), limit))
	var later []scored
	for i, s := range res {
		if len(out) == limit {
			break
		}
		if ix.repeatsEarlier(rk, res[:i], s.doc) {
			later = append(later, s)
			continue
		}
		out = append(out, s)
	}
	for _, s := range later {
		if len(out) == limit {
			break
		}
		out = append(out, s)
	}
	return out
}

// repeatedMCPNames reports whether tools of two servers (server: by
// document) share an MCP name: a catalogue without such a pair never
// pays for the results repeatsLast ranks past the limit.
func repeatedMCPNames(tools []*tool.Tool, server []int32) bool {
	first := make(map[string]int32, len(tools))
	for d, t := range tools {
		name := t.Meta[mcpToolKey]
		if name == "" {
			continue
		}
		if sid, ok := first[name]; !ok {
			first[name] = server[d]
		} else if sid != server[d] {
			return true
		}
	}
	return false
}

// repeatsEarlier reports whether document d is an MCP tool of a server
// the query does not name whose MCP name one of the documents before has.
func (ix *Index) repeatsEarlier(rk *ranking, before []scored, d int32) bool {
	name := ix.tools[d].Meta[mcpToolKey]
	if name == "" || rk.namesServer(d) {
		return false
	}
	for _, b := range before {
		if ix.server[b.doc] != ix.server[d] && ix.tools[b.doc].Meta[mcpToolKey] == name {
			return true
		}
	}
	return false
}
