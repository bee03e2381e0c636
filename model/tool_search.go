package model

// The variants of a provider's own tool search (Request.ProviderToolSearch).
const (
	ToolSearchRegex = "regex"
	ToolSearchBM25  = "bm25"
)

// MetaToolReferences is the Message.Meta key under which a provider that
// searched tools itself lists the names its search returned ([]string;
// []any once the message has been stored as JSON). The tools are loaded
// for the rest of the conversation, so the deferred-tool guard lets their
// calls through.
const MetaToolReferences = "tool_references"

// ToolSearcher is implemented by chat models whose provider can search
// the request's deferred tools itself (Anthropic's tool search tool).
type ToolSearcher interface {
	SupportsToolSearch() bool
}

// ToolReferences returns the tool names in msg.Meta[MetaToolReferences].
func ToolReferences(msg Message) []string {
	switch v := msg.Meta[MetaToolReferences].(type) {
	case []string:
		return v
	case []any:
		out := make([]string, 0, len(v))
		for _, x := range v {
			if s, ok := x.(string); ok {
				out = append(out, s)
			}
		}
		return out
	}
	return nil
}

// SearchesTools reports whether m's provider has its own tool search,
// looking through wrappers that expose the model they wrap with an
// Unwrap() ChatModel method.
func SearchesTools(m ChatModel) bool {
	for range 16 { // wrappers nest a few levels at most
		if ts, ok := m.(ToolSearcher); ok {
			return ts.SupportsToolSearch()
		}
		u, ok := m.(interface{ Unwrap() ChatModel })
		if !ok {
			return false
		}
		m = u.Unwrap()
	}
	return false
}
