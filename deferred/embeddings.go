package deferred

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
)

// Embedder turns texts into vectors, one per text, in order. Hybrid
// search calls it for every text of a catalogue (in batches) and for each
// query.
type Embedder interface {
	Embed(ctx context.Context, texts []string) ([][]float32, error)
	// ID names the model and endpoint: vectors cached under one ID are
	// never used for another.
	ID() string
}

// Limits of the embeddings client.
const (
	// maxEmbeddingsResponse bounds one response body: 64 texts of 4,096
	// dimensions written as JSON numbers take about 6 MB.
	maxEmbeddingsResponse = 32 << 20
	// maxEmbedTextBytes cuts each text sent (a tool's name and
	// description, or a query).
	maxEmbedTextBytes = 8000
	// maxEmbeddingDims refuses vectors longer than this.
	maxEmbeddingDims = 8192
)

// EmbeddingsClient is an [Embedder] over an OpenAI-compatible
// POST {BaseURL}/embeddings (OpenAI, Ollama, vLLM, LiteLLM).
type EmbeddingsClient struct {
	// BaseURL is the API's base, such as https://api.openai.com/v1 or
	// http://127.0.0.1:11434/v1.
	BaseURL string
	// Model is the embeddings model.
	Model string
	// APIKey is sent as a bearer token when set.
	APIKey string
	// HTTP is the client (nil: http.DefaultClient). The caller's context
	// bounds each call.
	HTTP *http.Client
}

// ID returns the model and the base URL.
func (c *EmbeddingsClient) ID() string { return c.Model + "@" + strings.TrimRight(c.BaseURL, "/") }

// Embed asks the endpoint for the vectors of texts.
func (c *EmbeddingsClient) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	in := make([]string, len(texts))
	for i, t := range texts {
		in[i] = cutUTF8(t, maxEmbedTextBytes)
	}
	body, err := json.Marshal(map[string]any{"model": c.Model, "input": in})
	if err != nil {
		return nil, err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, strings.TrimRight(c.BaseURL, "/")+"/embeddings", bytes.NewReader(body))
	if err != nil {
		return nil, fmt.Errorf("embeddings: %w", err)
	}
	req.Header.Set("Content-Type", "application/json")
	if c.APIKey != "" {
		req.Header.Set("Authorization", "Bearer "+c.APIKey)
	}
	hc := c.HTTP
	if hc == nil {
		hc = http.DefaultClient
	}
	resp, err := hc.Do(req)
	if err != nil {
		return nil, fmt.Errorf("embeddings: %w", err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, maxEmbeddingsResponse+1))
	if err != nil {
		return nil, fmt.Errorf("embeddings: read the response: %w", err)
	}
	if len(raw) > maxEmbeddingsResponse {
		return nil, fmt.Errorf("embeddings: response over %d bytes", maxEmbeddingsResponse)
	}
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("embeddings: %s: %s", resp.Status, cutUTF8(strings.TrimSpace(string(raw)), 300))
	}
	return decodeEmbeddings(raw, len(texts))
}

// decodeEmbeddings reads the data of an embeddings response, placing each
// vector by its index, and checks that there is one vector a text, all of
// one length.
func decodeEmbeddings(raw []byte, n int) ([][]float32, error) {
	var out struct {
		Data []struct {
			Index     int       `json:"index"`
			Embedding []float32 `json:"embedding"`
		} `json:"data"`
	}
	if err := json.Unmarshal(raw, &out); err != nil {
		return nil, fmt.Errorf("embeddings: decode the response: %w", err)
	}
	if len(out.Data) != n {
		return nil, fmt.Errorf("embeddings: %d vectors for %d texts", len(out.Data), n)
	}
	vecs := make([][]float32, n)
	for _, d := range out.Data {
		switch {
		case d.Index < 0 || d.Index >= n || vecs[d.Index] != nil:
			return nil, fmt.Errorf("embeddings: bad or repeated index %d", d.Index)
		case len(d.Embedding) == 0 || len(d.Embedding) > maxEmbeddingDims:
			return nil, fmt.Errorf("embeddings: a vector of %d dimensions (1 to %d)", len(d.Embedding), maxEmbeddingDims)
		case len(d.Embedding) != len(out.Data[0].Embedding):
			return nil, errors.New("embeddings: vectors of different lengths")
		}
		vecs[d.Index] = d.Embedding
	}
	return vecs, nil
}

// cutUTF8 returns at most n bytes of s, cut at a character boundary.
func cutUTF8(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && n < len(s) && s[n]&0xC0 == 0x80 {
		n--
	}
	return s[:n]
}
