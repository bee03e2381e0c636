// Package searcheval scores tool-search methods on the offline evaluation
// data described in the eval README (normalised JSONL catalogues and
// queries): Antler's ranked search, a faithful re-implementation of
// DeerFlow's single-regex search, and a plain BM25 baseline.
//
// It is used by the bench/toolsearch program and by the deferred
// package's benchmarks; it is not part of Antler's runtime.
package searcheval

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"regexp"
	"strings"

	"github.com/antlerhq/antler/tool"
)

// Entry is one line of a normalised catalogue file.
type Entry struct {
	ID          string          `json:"id"`
	Source      string          `json:"source"`
	Server      string          `json:"server"`
	Name        string          `json:"name"`
	Description string          `json:"description"`
	InputSchema json.RawMessage `json:"input_schema"`
}

// Query is one line of a normalised query file. LiveMCPBench lines have
// GoldAnyOf (one list of acceptable ids per gold tool); MetaTool lines
// have GoldIDs.
type Query struct {
	ID        string     `json:"id"`
	Query     string     `json:"query"`
	GoldAnyOf [][]string `json:"gold_ids_any_of"`
	GoldIDs   []string   `json:"gold_ids"`
	// Steps is LiveMCPBench's annotated plan, one numbered step a line
	// ("1. Fetch …\n2. Create …"); "" elsewhere.
	Steps string `json:"steps"`
}

// Golds returns the query's gold tools, each as the list of catalogue ids
// that count as finding it.
func (q *Query) Golds() [][]string {
	if q.GoldAnyOf != nil {
		return q.GoldAnyOf
	}
	out := make([][]string, len(q.GoldIDs))
	for i, id := range q.GoldIDs {
		out[i] = []string{id}
	}
	return out
}

// ReadJSONL decodes every line of a JSONL file into a T.
func ReadJSONL[T any](path string) ([]T, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var out []T
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 0, 1<<20), 16<<20)
	for line := 1; sc.Scan(); line++ {
		if len(strings.TrimSpace(sc.Text())) == 0 {
			continue
		}
		var v T
		if err := json.Unmarshal(sc.Bytes(), &v); err != nil {
			return nil, fmt.Errorf("%s:%d: %w", path, line, err)
		}
		out = append(out, v)
	}
	return out, sc.Err()
}

var invalidNameChars = regexp.MustCompile(`[^A-Za-z0-9_-]+`)

// Tools turns catalogue entries into MCP-like tools, named as Antler's
// MCP discovery names them by default ("<server>_<tool>", invalid
// characters replaced by "_"), with Meta["mcp_server"] set and
// Meta["eval_id"] holding the entry's id. It returns the tools and a map
// from tool name to entry id.
func Tools(entries []Entry) ([]*tool.Tool, map[string]string) {
	tools := make([]*tool.Tool, 0, len(entries))
	ids := make(map[string]string, len(entries))
	for _, e := range entries {
		name := e.Name
		meta := map[string]string{"eval_id": e.ID}
		if e.Server != "" {
			name = e.Server + "_" + e.Name
			meta["mcp_server"] = e.Server
			meta["mcp_tool"] = e.Name
		}
		name = invalidNameChars.ReplaceAllString(name, "_")
		schema := e.InputSchema
		if len(schema) == 0 || string(schema) == "null" {
			schema = json.RawMessage(`{"type":"object","properties":{}}`)
		}
		ids[name] = e.ID
		tools = append(tools, &tool.Tool{Name: name, Description: e.Description, InputSchema: schema, Meta: meta})
	}
	return tools, ids
}

// Replicate returns n copies of tools with renamed servers (copy i's
// server "s" becomes "s<i>", and its tool names are prefixed
// accordingly), for scaling benchmarks. Copy 0 is the original.
func Replicate(tools []*tool.Tool, n int) []*tool.Tool {
	out := make([]*tool.Tool, 0, len(tools)*n)
	out = append(out, tools...)
	for i := 1; i < n; i++ {
		suffix := fmt.Sprint(i)
		for _, t := range tools {
			c := *t
			c.Meta = map[string]string{}
			for k, v := range t.Meta {
				c.Meta[k] = v
			}
			if srv := t.Meta["mcp_server"]; srv != "" {
				prefix := invalidNameChars.ReplaceAllString(srv, "_")
				c.Meta["mcp_server"] = srv + suffix
				c.Name = prefix + suffix + strings.TrimPrefix(t.Name, prefix)
			} else {
				c.Name = t.Name + "_" + suffix
			}
			out = append(out, &c)
		}
	}
	return out
}
