package searcheval

import (
	"strings"
	"unicode"
)

// StepResult is the score of searching once per step of each task.
type StepResult struct {
	Result
	// MeanTools is the mean number of distinct tools the steps' searches
	// found per task, what recall is counted over (at most k per step).
	MeanTools float64 `json:"mean_tools"`
	// Steps is the number of searches, over all tasks.
	Steps int `json:"steps"`
}

// EvaluatePerStep scores what an agent finds when it searches once per
// step of a task, as tool_search's description asks, rather than with
// the whole task: each query's annotated steps (Steps, one a line, their
// numbering dropped) are searched with k each, and a gold tool counts as
// found when any step's top k holds it. A query without steps is
// searched whole. MRR ranks the found tools in their interleaved order:
// every step's first, then every step's second, and so on. No latencies
// are taken.
func EvaluatePerStep(method string, search func(query string, k int) []string, ids map[string]string, queries []Query, k int) StepResult {
	var t Tally
	var res StepResult
	tools := 0
	for _, q := range queries {
		gs := q.Golds()
		if len(gs) == 0 {
			continue
		}
		steps := StepQueries(q.Steps)
		if len(steps) == 0 {
			steps = []string{q.Query}
		}
		var lists [][]string
		for _, s := range steps {
			lists = append(lists, search(s, k))
		}
		res.Steps += len(steps)
		union := interleave(lists, k)
		tools += len(union)
		t.add(Score(union, ids, gs, len(union)))
	}
	res.Result = t.result(method, k)
	res.MeanTools = ratio(float64(tools), t.Queries)
	return res
}

// interleave merges the top k of each list, rank by rank (the first of
// every list, then the second, ...), each name once.
func interleave(lists [][]string, k int) []string {
	var out []string
	seen := map[string]bool{}
	for r := range k {
		for _, l := range lists {
			if r < len(l) && !seen[l[r]] {
				seen[l[r]] = true
				out = append(out, l[r])
			}
		}
	}
	return out
}

// StepQueries splits an annotated plan into its steps: one a line,
// without the numbering ("2. ", "2) ") and without blank lines.
func StepQueries(steps string) []string {
	var out []string
	for line := range strings.Lines(steps) {
		line = strings.TrimSpace(line)
		line = strings.TrimLeftFunc(line, unicode.IsDigit)
		line = strings.TrimSpace(strings.TrimLeft(line, ".)"))
		if line != "" {
			out = append(out, line)
		}
	}
	return out
}
