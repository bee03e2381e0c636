package toolset

import (
	"context"
	"log/slog"

	"github.com/antlerhq/antler/community"
	"github.com/antlerhq/antler/config"
	"github.com/antlerhq/antler/tool"
)

// registerCommunity wires the web tools under DeerFlow's use strings and
// Antler's short names. A use string picks the provider an entry gets
// when it sets no provider key; an explicit provider key wins.
//
// DeerFlow's Jina web_fetch (the one in its example config) maps to the
// direct fetcher: the page is fetched by Antler itself, behind the SSRF
// guard, with no third-party round trip, unless the entry says
// provider: jina.
func registerCommunity(r *Registry) {
	r.RegisterTool(webFetchFactory(community.FetchDirect),
		"deerflow.community.jina_ai.tools:web_fetch_tool",
		"deerflow.community.searxng.tools:web_fetch_tool",
		"antler:web_fetch")
	r.RegisterTool(webFetchFactory(community.FetchTavily),
		"deerflow.community.tavily.tools:web_fetch_tool")
	for _, p := range []string{community.FetchExa, community.FetchFirecrawl, community.FetchFastCRW,
		community.FetchGroundRoute, community.FetchInfoQuest, community.FetchCrawl4AI, community.FetchBrowserless} {
		r.RegisterTool(webFetchFactory(p), "deerflow.community."+p+".tools:web_fetch_tool")
	}
	r.RegisterTool(webCaptureFactory, "deerflow.community.browserless.tools:web_capture_tool", "antler:web_capture")

	r.RegisterTool(webSearchFactory(community.ProviderDDG),
		"deerflow.community.ddg_search.tools:web_search_tool",
		"antler:web_search")
	r.RegisterTool(webSearchFactory(community.ProviderTavily),
		"deerflow.community.tavily.tools:web_search_tool")
	r.RegisterTool(webSearchFactory(community.ProviderSearXNG),
		"deerflow.community.searxng.tools:web_search_tool")
	r.RegisterTool(webSearchFactory(community.ProviderBrave),
		"deerflow.community.brave.tools:web_search_tool")
	for _, p := range []string{community.ProviderExa, community.ProviderSerper, community.ProviderFirecrawl,
		community.ProviderFastCRW, community.ProviderGroundRoute, community.ProviderInfoQuest} {
		r.RegisterTool(webSearchFactory(p), "deerflow.community."+p+".tools:web_search_tool")
	}

	r.RegisterTool(imageSearchFactory(community.ProviderDDG),
		"deerflow.community.image_search.tools:image_search_tool",
		"antler:image_search")
	r.RegisterTool(imageSearchFactory(community.ProviderBrave),
		"deerflow.community.brave.tools:image_search_tool")
	r.RegisterTool(imageSearchFactory(community.ProviderSerper),
		"deerflow.community.serper.tools:image_search_tool")
	r.RegisterTool(imageSearchFactory(community.ProviderInfoQuest),
		"deerflow.community.infoquest.tools:image_search_tool")
}

// webCaptureFactory builds Browserless's web_capture.
func webCaptureFactory(_ context.Context, env *Env, entry config.ToolEntry) (*tool.Tool, error) {
	var o community.CaptureOptions
	if err := community.DecodeOptions(entry.Options, &o); err != nil {
		return nil, err
	}
	o.Logger = communityLogger(env)
	return community.NewWebCapture(o)
}

func communityLogger(env *Env) *slog.Logger {
	if env == nil {
		return nil
	}
	return env.Logger
}

func webFetchFactory(provider string) ToolFactory {
	return func(_ context.Context, env *Env, entry config.ToolEntry) (*tool.Tool, error) {
		var o community.FetchOptions
		if err := community.DecodeOptions(entry.Options, &o); err != nil {
			return nil, err
		}
		if o.Provider == "" {
			o.Provider = provider
		}
		o.Logger = communityLogger(env)
		if o.Provider == community.FetchDirect && o.APIKey != "" && o.Logger != nil {
			o.Logger.Warn("web_fetch fetches directly; api_key is unused unless provider names a keyed service", "tool", entry.Name)
		}
		return community.NewWebFetch(o)
	}
}

func webSearchFactory(provider string) ToolFactory {
	return searchFactory(provider, community.NewWebSearch)
}

func imageSearchFactory(provider string) ToolFactory {
	return searchFactory(provider, community.NewImageSearch)
}

// searchFactory decodes a search tool's options (the use string's
// provider unless the entry names one) and builds it with build.
func searchFactory(provider string, build func(community.SearchOptions) (*tool.Tool, error)) ToolFactory {
	return func(_ context.Context, env *Env, entry config.ToolEntry) (*tool.Tool, error) {
		var o community.SearchOptions
		if err := community.DecodeOptions(entry.Options, &o); err != nil {
			return nil, err
		}
		if o.Provider == "" {
			o.Provider = provider
		}
		o.Logger = communityLogger(env)
		return build(o)
	}
}
