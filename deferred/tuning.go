package deferred

import (
	"github.com/antlerhq/antler/deferred/internal/search"
	"github.com/antlerhq/antler/tool"
)

// SearchOptions switches the tuned elements of tool_search's ranking
// (field weights, boosts, thresholds, lexicon groups, RM3 feedback) for
// the offline evaluation (internal/searcheval, bench/toolsearch). Antler's
// runtime never sets them: a [Catalog] ranks with the zero value, which is
// the shipped ranker.
type SearchOptions = search.Options

// SearchRM3 is the pseudo-relevance feedback of [SearchOptions].
type SearchRM3 = search.RM3

// TunedSearch is the ranked search of a tool list built with
// [SearchOptions]: its Search answers a plain-text query as
// [Catalog.Search] does (the "select:" and "+keyword" forms are not
// parsed).
type TunedSearch struct {
	ix    *search.Index
	tools []*tool.Tool
}

// NewTunedSearch indexes tools, which must be non-nil with distinct
// names and must not change afterwards. It fails on options naming an
// unknown parameter or lexicon group, or with a negative value.
func NewTunedSearch(tools []*tool.Tool, o SearchOptions) (*TunedSearch, error) {
	ix, err := search.BuildWith(tools, o, nil)
	if err != nil {
		return nil, err
	}
	return &TunedSearch{ix: ix, tools: tools}, nil
}

// Search returns at most limit tools for query, best first.
func (t *TunedSearch) Search(query string, limit int) []*tool.Tool {
	docs := t.ix.SearchDocs(query, limit)
	out := make([]*tool.Tool, len(docs))
	for i, d := range docs {
		out[i] = t.tools[d]
	}
	return out
}

// SearchParamNames lists the parameter names [SearchOptions].Params takes.
func SearchParamNames() []string { return search.ParamNames() }

// DefaultSearchParam returns a parameter's shipped value; false for an
// unknown name.
func DefaultSearchParam(name string) (float64, bool) { return search.DefaultParam(name) }

// SearchLexiconGroups returns the ranking lexicon's groups, group g at
// index g-1 (the numbers [SearchOptions].DropLexicon takes).
func SearchLexiconGroups() []string { return search.LexiconGroups() }

// SearchLexiconGroupsOf returns the numbers of the lexicon groups holding
// a word of query.
func SearchLexiconGroupsOf(query string) []int { return search.LexiconGroupsOf(query) }
