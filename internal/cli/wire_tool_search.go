package cli

import (
	"path/filepath"
	"time"

	"github.com/antlerhq/antler/deferred"
)

// toolSearchHybrid is the hybrid search of tool_search.embeddings: nil
// when tool_search is off or names no embeddings model. It is closed with
// the app; the vectors of each catalogue are cached under the home.
func (a *app) toolSearchHybrid() *deferred.Hybrid {
	e := a.cfg.ToolSearch.Embeddings
	if !a.cfg.ToolSearch.Enabled || e.Model == "" {
		return nil
	}
	h := deferred.NewHybrid(deferred.HybridOptions{
		Embedder:      &deferred.EmbeddingsClient{BaseURL: e.BaseURL, Model: e.Model, APIKey: e.APIKey},
		CacheDir:      filepath.Join(a.homeDir(), "cache", "tool-embeddings"),
		QueryTimeout:  time.Duration(e.QueryTimeoutMS) * time.Millisecond,
		BuildTimeout:  time.Duration(e.BuildTimeoutSeconds) * time.Second,
		MinSimilarity: e.MinSimilarity,
		Logger:        a.logger,
	})
	a.onClose(h.Close)
	a.hybrid = h
	return h
}
