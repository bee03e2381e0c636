// Command toolsearch scores a tool-search method on the offline
// evaluation data (normalised JSONL catalogue and query files):
//
//	go run ./bench/toolsearch -catalog FILE.jsonl -queries FILE.jsonl [-k 5] [-method antler|deerflow|bm25] [-per-step] [-json]
//	go run ./bench/toolsearch -catalog FILE.jsonl -context
//	go run ./bench/toolsearch -catalog FILE.jsonl -queries FILE.jsonl -cv [-folds 5] [-seed 1] [-objective recall|hit] [-json]
//
// It prints {"method","k","queries","recall_at_k","hit_at_k","mrr",
// "p50_us","p99_us","first_us","max_us","build_ms"}. Each query's whole
// text is the search query. For LiveMCPBench every gold tool is scored
// (any id of gold_ids_any_of counts); for MetaTool, gold_ids.
//
// The latencies include the process's first query, which runs right after
// the catalogue is built, with nothing warmed up in between: first_us is
// that query alone, max_us the slowest of all (with fewer than 100
// queries p99_us is the slowest too), build_ms the wall time of building
// the method's catalogue from the tools. Per-process tables are loaded by
// whatever first needs them, so only a fresh process measures a first
// query; run the program several times for a distribution.
//
// -method takes antler+rm3 too: RM3 pseudo-relevance feedback over the
// shipped ranker, at -rm3 "docs,terms,weight" (default 5,10,0.3).
// -params "name=value,..." and -drop-lexicon "N,..." switch the ranker's
// tuned elements for antler and antler+rm3 (deferred.SearchOptions).
//
// -per-step searches once per annotated step of each task (LiveMCPBench's
// steps, one a line) instead of with the whole task, as tool_search's
// description asks an agent to, and scores the union of the steps' top
// k; it prints {"method","k","queries","recall_at_k","hit_at_k","mrr",
// "mean_tools","steps"}, recall over mean_tools tools a task.
//
// -cv cross-validates instead (see cv.go): the queries are split into
// -folds folds by server (seeded by -seed), and every method is scored
// in-fold (choices made on the whole set) and out of fold (each fold
// scored with choices made on the other folds), followed by what the
// selection found for each tuned element of the ranker.
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"time"

	"github.com/antlerhq/antler/config"
	"github.com/antlerhq/antler/deferred"
	"github.com/antlerhq/antler/internal/searcheval"
	"github.com/antlerhq/antler/tool"
)

func main() {
	catalog := flag.String("catalog", "", "normalised catalogue `file` (JSONL)")
	queries := flag.String("queries", "", "normalised query `file` (JSONL)")
	k := flag.Int("k", 5, "score the top `k` results")
	method := flag.String("method", "antler", "search `method`: antler, deerflow or bm25")
	asJSON := flag.Bool("json", false, "print JSON only")
	context := flag.Bool("context", false, "instead of scoring, print the bytes of tool definitions in the first model request with deferral off and on")
	rm3 := flag.String("rm3", "5,10,0.3", "RM3 `docs,terms,weight` of -method antler+rm3")
	params := flag.String("params", "", "`name=value,...`: the ranker's parameters for -method antler and antler+rm3 (see deferred.SearchParamNames)")
	drop := flag.String("drop-lexicon", "", "`N,...`: lexicon groups to leave out for -method antler and antler+rm3")
	cv := flag.Bool("cv", false, "cross-validate every method by server folds")
	perStep := flag.Bool("per-step", false, "search once per annotated step of each task (the query file's steps) and score the union of the steps' top k")
	folds := flag.Int("folds", 5, "cross-validation `folds`")
	seed := flag.Uint64("seed", 1, "seed of the cross-validation split")
	objective := flag.String("objective", "", "what cross-validation maximises: recall or hit (default: recall for LiveMCPBench-style gold lists, hit otherwise)")
	flag.Parse()
	var err error
	switch {
	case *context:
		err = contextSaved(*catalog)
	case *cv:
		err = crossValidate(*catalog, *queries, *k, *folds, *seed, *objective, *asJSON)
	default:
		var opts deferred.SearchOptions
		if opts, err = parseOptions(*params, *drop); err == nil {
			err = run(*catalog, *queries, *k, *method, *rm3, opts, *asJSON, *perStep)
		}
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "toolsearch:", err)
		os.Exit(1)
	}
}

func run(catalogFile, queryFile string, k int, method, rm3 string, opts deferred.SearchOptions, asJSON, perStep bool) error {
	if catalogFile == "" || queryFile == "" {
		return fmt.Errorf("-catalog and -queries are required")
	}
	entries, err := searcheval.ReadJSONL[searcheval.Entry](catalogFile)
	if err != nil {
		return err
	}
	qs, err := searcheval.ReadJSONL[searcheval.Query](queryFile)
	if err != nil {
		return err
	}
	tools, ids := searcheval.Tools(entries)
	start := time.Now()
	var search func(string, int) []string
	switch method {
	case "antler":
		if opts.Params != nil || opts.DropLexicon != nil {
			s, err := deferred.NewTunedSearch(tools, opts)
			if err != nil {
				return err
			}
			search = func(q string, k int) []string { return names(s.Search(q, k)) }
			break
		}
		c := deferred.NewCatalog(tools)
		search = func(q string, k int) []string { return names(c.Search(q, k)) }
	case "deerflow":
		search = searcheval.NewDeerFlow(tools).Search
	case "bm25":
		search = searcheval.NewBM25(tools).Search
	case "antler+rm3":
		if _, err := fmt.Sscanf(rm3, "%d,%d,%g", &opts.RM3.Docs, &opts.RM3.Terms, &opts.RM3.Weight); err != nil {
			return fmt.Errorf("-rm3 %q: want docs,terms,weight: %w", rm3, err)
		}
		s, err := deferred.NewTunedSearch(tools, opts)
		if err != nil {
			return err
		}
		search = func(q string, k int) []string { return names(s.Search(q, k)) }
	default:
		return fmt.Errorf("unknown -method %q (want antler, antler+rm3, deerflow or bm25)", method)
	}
	if perStep {
		res := searcheval.EvaluatePerStep(method, search, ids, qs, k)
		if asJSON {
			return json.NewEncoder(os.Stdout).Encode(res)
		}
		fmt.Printf("%-8s per step k=%d queries=%d steps=%d recall=%.3f hit=%.3f mrr=%.3f tools=%.1f a task\n",
			res.Method, res.K, res.Queries, res.Steps, res.RecallAtK, res.HitAtK, res.MRR, res.MeanTools)
		return nil
	}
	res := result{BuildMs: float64(time.Since(start).Microseconds()) / 1e3}
	res.Result = searcheval.Evaluate(method, res.timed(search), ids, qs, k)
	if asJSON {
		return json.NewEncoder(os.Stdout).Encode(res)
	}
	fmt.Printf("%-8s k=%d queries=%d recall@k=%.3f hit@k=%.3f mrr=%.3f p50=%.0fµs p99=%.0fµs first=%.0fµs max=%.0fµs build=%.1fms\n",
		res.Method, res.K, res.Queries, res.RecallAtK, res.HitAtK, res.MRR, res.P50us, res.P99us, res.FirstUs, res.MaxUs, res.BuildMs)
	return nil
}

// result is searcheval's score with the latencies of the first and the
// slowest query and the catalogue's build time.
type result struct {
	searcheval.Result
	FirstUs float64 `json:"first_us"`
	MaxUs   float64 `json:"max_us"`
	BuildMs float64 `json:"build_ms"`
}

// timed wraps search to record the first and the slowest call's wall
// time in r.
func (r *result) timed(search func(string, int) []string) func(string, int) []string {
	calls := 0
	return func(q string, k int) []string {
		start := time.Now()
		out := search(q, k)
		us := float64(time.Since(start).Nanoseconds()) / 1e3
		if calls == 0 {
			r.FirstUs = us
		}
		calls++
		r.MaxUs = max(r.MaxUs, us)
		return out
	}
}

// contextSaved prints the size of the tool definitions a first model
// request carries for the catalogue's tools: all of them (deferral off)
// against tool_search alone plus the <available-deferred-tools> prompt
// section (deferral on). Definitions are measured as an OpenAI "tools"
// array, compact JSON.
func contextSaved(catalogFile string) error {
	entries, err := searcheval.ReadJSONL[searcheval.Entry](catalogFile)
	if err != nil {
		return err
	}
	tools, _ := searcheval.Tools(entries)
	d, err := deferred.Setup(tools, config.ToolSearch{Enabled: true, MaxResults: 5})
	if err != nil {
		return err
	}
	off := toolsBytes(tools)
	onTools := toolsBytes([]*tool.Tool{d.ToolSearch})
	on := onTools + len(d.Prompt)
	fmt.Printf("tools=%d off=%d bytes on=%d bytes (tool_search %d + prompt section %d) saved=%.1f%%\n",
		len(tools), off, on, onTools, len(d.Prompt), 100*(1-float64(on)/float64(off)))
	return nil
}

func toolsBytes(tools []*tool.Tool) int {
	type fn struct {
		Name        string          `json:"name"`
		Description string          `json:"description"`
		Parameters  json.RawMessage `json:"parameters"`
	}
	type def struct {
		Type     string `json:"type"`
		Function fn     `json:"function"`
	}
	defs := make([]def, len(tools))
	for i, t := range tools {
		defs[i] = def{Type: "function", Function: fn{t.Name, t.Description, t.InputSchema}}
	}
	data, err := json.Marshal(defs)
	if err != nil {
		panic(err)
	}
	return len(data)
}

func names(tools []*tool.Tool) []string {
	out := make([]string, len(tools))
	for i, t := range tools {
		out[i] = t.Name
	}
	return out
}
