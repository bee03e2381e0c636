package search

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/antlerhq/antler/tool"
)

// testTool returns a tool of server ("" for none) with one parameter,
// query.
func testTool(server, name, desc string) *tool.Tool {
	t := &tool.Tool{
		Name:        name,
		Description: desc,
		InputSchema: json.RawMessage(`{"type":"object","properties":{"query":{"type":"string","description":"what to look for"}}}`),
	}
	if server != "" {
		t.Meta = map[string]string{"mcp_server": server}
	}
	return t
}

// topName returns the name of the best tool for query, "" for none.
func topName(ix *Index, query string) string {
	if got := ix.Search(query, 1); len(got) > 0 {
		return got[0].Name
	}
	return ""
}

// TestRankingSignals checks one query per ranking signal: the name
// phrase bonus, lexicon synonyms with the path → file term and the lead
// sentence, decompounded name identifiers, WordNet derivations, Chinese
// text matched by character bigrams, Chinese matched to English
// through dictionary glosses, and a camelCase query word matched whole.
func TestRankingSignals(t *testing.T) {
	tools := []*tool.Tool{
		testTool("charts", "charts_chart_bar_colors", "Set the colours of a chart's bars."),
		testTool("charts", "charts_generate_bar_chart", "Generate a chart."),
		testTool("fs", "fs_write_file", "Write or append to file contents.\n\nCHUNKING IS STANDARD PRACTICE: "+strings.Repeat("notes about markdown reports and chunks ", 40)),
		testTool("notes", "notes_write_note", "Create or update a markdown note in the knowledge base."),
		testTool("datagov", "datagov_package_search", "Search packages."),
		testTool("other", "other_search", "Search the data of the gov archive."),
		testTool("money", "money_rates", "Latest exchange rates of each currency against a base currency."),
		testTool("money", "money_convert", "Convert an amount between currencies."),
		testTool("bing", "bing_search", "使用必应搜索指定的关键词，并返回搜索结果列表"),
		testTool("news", "news_hot", "获取今日热点新闻榜单"),
		testTool("cook", "cook_what_to_eat", "不知道吃什么？根据人数推荐菜品组合"),
		testTool("people", "people_search", "Search people by name."),
		testTool("weather", "weather_forecast", "Forecast for a city."),
		testTool("media", "media_download_from_youtube", "Download the audio track of a video."),
		testTool("podcasts", "podcasts_get_audio", "Get the audio of a podcast episode."),
		testTool("slides", "slides_new_deck", "Start an empty slide deck."),
		testTool("meter", "meter_read_power", "Read the power drawn at a metering point."),
		testTool("web", "web_fetch", "Fetch a URL and return its text."),
	}
	ix := Build(tools, nil)
	tests := []struct {
		name, query, want string
	}{
		{"phrase in name", "plot a bar chart", "charts_generate_bar_chart"},
		{"synonym and path: save → write, /root/x.md → file", "save it to /root/out/report.md", "fs_write_file"},
		{"decompounded name", "gov data packages", "datagov_package_search"},
		{"derivation: conversion → convert", "currency conversion", "money_convert"},
		{"Chinese bigrams: a query without spaces", "帮我搜索关键词", "bing_search"},
		{"Chinese bigrams: another wording", "今天有什么热点新闻", "news_hot"},
		{"English query, Chinese description: CC-CEDICT glosses", "recommend a combination of dishes for four people", "cook_what_to_eat"},
		{"Chinese query, English description: CC-CEDICT glosses", "获取天气预报", "weather_forecast"},
		{"a camelCase brand is also one word: YouTube → youtube", "get the audio of this YouTube video", "media_download_from_youtube"},
		{"a camelCase word's synonyms: PowerPoint → slide, deck", "make a PowerPoint about my cats", "slides_new_deck"},
		{"a web address adds url", "what is on https://example.com/blog", "web_fetch"},
		{"lexicon: currency names → currency", "how many euros are 50 dollars", "money_convert"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := topName(ix, tt.query); got != tt.want {
				t.Errorf("Search(%q) top = %q, want %s", tt.query, got, tt.want)
			}
		})
	}
}
