package search

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/antlerhq/antler/tool"
)

// TestBuildWithZeroOptions: the zero Options is the shipped ranker, index
// for index.
func TestBuildWithZeroOptions(t *testing.T) {
	tools := splitTestTools(120)
	got, err := BuildWith(tools, Options{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	opts := cmp.Options{
		cmp.AllowUnexported(Index{}, posting{}, params{}, fieldParam{}, RM3{}),
		cmpopts.IgnoreFields(Index{}, "pool"),
		cmpopts.EquateEmpty(),
	}
	if diff := cmp.Diff(Build(tools, nil), got, opts); diff != "" {
		t.Errorf("BuildWith(Options{}) differs from Build (-Build +BuildWith):\n%s", diff)
	}
}

func TestOptionsErrors(t *testing.T) {
	tests := []struct {
		name string
		o    Options
		want string
	}{
		{"unknown parameter", Options{Params: map[string]float64{"boost.nope": 1}}, `unknown parameter "boost.nope"`},
		{"negative value", Options{Params: map[string]float64{"k1": -1}}, `"k1" is -1`},
		{"field weight 0", Options{Params: map[string]float64{"field.lead": 0}}, "field lead"},
		{"b above 1", Options{Params: map[string]float64{"b.name": 1.5}}, "field name"},
		{"fractional truncation bound", Options{Params: map[string]float64{"prefix.min_length": 3.5}}, "not a whole number"},
		{"lexicon group 0", Options{DropLexicon: []int{0}}, "lexicon group 0"},
		{"lexicon group past the end", Options{DropLexicon: []int{len(LexiconGroups()) + 1}}, "does not exist"},
		{"RM3 weight 1", Options{RM3: RM3{Docs: 3, Terms: 5, Weight: 1}}, "RM3"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := BuildWith(nil, tt.o, nil)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("BuildWith error %v, want one containing %q", err, tt.want)
			}
		})
	}
}

func TestParamNames(t *testing.T) {
	for _, name := range ParamNames() {
		if _, ok := DefaultParam(name); !ok {
			t.Errorf("ParamNames lists %q, which DefaultParam does not know", name)
		}
	}
	if v, ok := DefaultParam("boost.exact_name"); !ok || v != exactNameBoost {
		t.Errorf("DefaultParam(boost.exact_name) = %v, %v; want %v", v, ok, exactNameBoost)
	}
	if _, ok := DefaultParam("nope"); ok {
		t.Error("DefaultParam(nope) is known")
	}
}

// TestOptionsSwitch: each kind of switch changes the ranking it should.
func TestOptionsSwitch(t *testing.T) {
	tools := []*tool.Tool{
		testTool("shop", "fetch_price", "Price of a product."),
		testTool("docs", "price_list", "All prices."),
		testTool("web", "page_search", "Look up web pages for a price."),
		testTool("sky", "weather_now", "Current weather."),
		testTool("sky", "storm_alerts", "Warnings about storms and weathers."),
	}
	group := 0
	for g, line := range LexiconGroups() {
		if strings.HasPrefix(line, "get fetch") {
			group = g + 1
		}
	}
	if group == 0 {
		t.Fatal(`no lexicon group "get fetch ..."`)
	}
	tests := []struct {
		name  string
		o     Options
		query string
		want  []string
	}{
		{"shipped: a synonym reaches the name", Options{}, "get", []string{"fetch_price"}},
		{"the lexicon group dropped", Options{DropLexicon: []int{group}}, "get", []string{}},
		{"synonyms weighed 0", Options{Params: map[string]float64{"weight.synonym": 0}}, "get", []string{}},
		{"shipped: regex hits first", Options{}, "weathers", []string{"storm_alerts", "weather_now"}},
		{"regex_first off: relevance alone", Options{Params: map[string]float64{"regex_first": 0}}, "weathers", []string{"weather_now", "storm_alerts"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ix, err := BuildWith(tools, tt.o, nil)
			if err != nil {
				t.Fatal(err)
			}
			got := []string{}
			for _, tl := range ix.Search(tt.query, 5) {
				got = append(got, tl.Name)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("Search(%q) (-want +got):\n%s", tt.query, diff)
			}
		})
	}
}

func TestLexiconGroupsOf(t *testing.T) {
	groups := LexiconGroups()
	got := LexiconGroupsOf("Fetching the repositories")
	for _, g := range got {
		line := groups[g-1]
		if !strings.Contains(line, "fetch") && !strings.Contains(line, "repo") {
			t.Errorf("group %d %q holds no query word", g, line)
		}
	}
	if len(got) < 2 {
		t.Errorf("LexiconGroupsOf = %v, want the groups of fetch and of repository", got)
	}
	if got := LexiconGroupsOf("zzqx"); len(got) != 0 {
		t.Errorf("LexiconGroupsOf(zzqx) = %v, want none", got)
	}
}
