package deferred

import (
	"bytes"
	"context"
	_ "embed"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/antlerhq/antler/internal/tmpl"
	"github.com/antlerhq/antler/thread"
	"github.com/antlerhq/antler/tool"
)

// ToolSearchName is the name of the tool_search tool.
const ToolSearchName = "tool_search"

// MetaCatalog is the Meta label of the tool_search tool NewToolSearch
// returns ("true"): it searches a catalogue that was built from an
// already authorized tool list, so authorization lets its calls through
// (DeerFlow's infrastructure tools).
const MetaCatalog = "deferred_catalog"

//go:embed tool_search.md
var toolSearchDescription string

var toolSearchTemplate = tmpl.MustParse("tool_search", toolSearchDescription)

// toolSearchSchema is the input schema of tool_search: DeerFlow's query,
// and Antler's optional max_results, bounded by the configured maximum
// (formatted in twice by NewToolSearch).
const toolSearchSchema = `{"type":"object","properties":{"query":{"type":"string","description":"Query to find deferred tools. Use \"select:<tool_name>\" for direct selection, or keywords to search."},"max_results":{"type":"integer","minimum":1,"maximum":%d,"description":"How many tools a keyword search returns at most (default and maximum %d; select: returns every name it lists)."}},"required":["query"],"additionalProperties":false}`

type toolSearchInput struct {
	Query string `json:"query"`
	// MaxResults narrows the ranked forms for this call; 0 (absent) means
	// the configured maximum. The schema has already refused anything but
	// an integer in [1, maximum] (null included) when the handler runs;
	// it is a float64 because JSON Schema counts 2.0 as an integer, which
	// decoding into an int would refuse with a Go error.
	MaxResults float64 `json:"max_results,omitempty"`
}

// NewToolSearch returns the tool_search tool over c. maxResults caps the
// ranked forms (≤ 0: [DefaultMaxResults]) and is their default; a call's
// max_results argument may ask for fewer, never more: the schema states
// the range, and a value outside it, or not an integer, is refused (an
// "Error: invalid arguments for tool_search: /max_results: ..." result
// the model can act on), never clamped. "select:" is never capped.
//
// Every call promotes what it found: its result carries a state update
// {catalog_hash, names} (names empty on a miss, which leaves earlier
// promotions of the same catalogue in place).
func NewToolSearch(c *Catalog, maxResults int) *tool.Tool {
	if maxResults <= 0 {
		maxResults = DefaultMaxResults
	}
	var desc bytes.Buffer
	if err := toolSearchTemplate.Execute(&desc, struct{ MaxResults int }{maxResults}); err != nil {
		panic(fmt.Sprintf("deferred: tool_search description: %v", err)) // embedded template: a programming error
	}
	schema := json.RawMessage(fmt.Sprintf(toolSearchSchema, maxResults, maxResults))
	t, err := tool.NewWithSchema(ToolSearchName, strings.TrimSpace(desc.String()), schema,
		func(ctx context.Context, _ *tool.Call, in toolSearchInput) (*tool.Result, error) {
			limit := maxResults
			if n := int(in.MaxResults); n > 0 && n < limit {
				limit = n
			}
			return c.searchResult(ctx, in.Query, limit), nil
		})
	if err != nil {
		panic(fmt.Sprintf("deferred: tool_search schema: %v", err)) // fixed schema: a programming error
	}
	t.Meta = map[string]string{MetaCatalog: "true"}
	return t
}

// searchResult is the tool_search result for query: the matches as
// OpenAI function definitions, or DeerFlow's no-match text, and the
// promotion update.
func (c *Catalog) searchResult(ctx context.Context, query string, maxResults int) *tool.Result {
	matched := c.SearchContext(ctx, query, maxResults)
	names := make([]string, len(matched))
	for i, t := range matched {
		names[i] = t.Name
	}
	var res *tool.Result
	if len(matched) == 0 {
		res = tool.Text("No tools found matching: " + query)
	} else {
		res = tool.Text(FunctionDefinitions(matched))
	}
	res.Update = &thread.Update{Promoted: &thread.Promoted{CatalogHash: c.idx.hash, Names: names}}
	return res
}

// functionDefinition is a tool in the OpenAI function form DeerFlow's
// tool_search returns (LangChain's convert_to_openai_function).
type functionDefinition struct {
	Name        string          `json:"name"`
	Description string          `json:"description"`
	Parameters  json.RawMessage `json:"parameters"`
}

// FunctionDefinitions renders tools as a JSON array of OpenAI function
// definitions ({name, description, parameters}), indented by two spaces,
// with non-ASCII text and <, >, & kept as they are.
func FunctionDefinitions(tools []*tool.Tool) string {
	defs := make([]functionDefinition, len(tools))
	for i, t := range tools {
		defs[i] = functionDefinition{Name: t.Name, Description: t.Description, Parameters: parametersOf(t)}
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(defs); err != nil {
		// A schema that is not valid JSON: send it as a string rather
		// than fail the search.
		for i := range defs {
			if !json.Valid(defs[i].Parameters) {
				s, _ := json.Marshal(string(defs[i].Parameters))
				defs[i].Parameters = s
			}
		}
		buf.Reset()
		_ = enc.Encode(defs)
	}
	return strings.TrimSuffix(buf.String(), "\n")
}
