package searcheval

import (
	"slices"
	"time"
)

// Result is the score of one method on one query file, in the JSON shape
// bench/toolsearch prints.
type Result struct {
	Method  string `json:"method"`
	K       int    `json:"k"`
	Queries int    `json:"queries"`
	// RecallAtK is per gold tool: the share of all gold tools (over all
	// queries) found in the top k.
	RecallAtK float64 `json:"recall_at_k"`
	// HitAtK is the share of queries with at least one gold tool in the
	// top k.
	HitAtK float64 `json:"hit_at_k"`
	// MRR is the mean over queries of 1/rank of the first gold tool in
	// the top k (0 when none).
	MRR   float64 `json:"mrr"`
	P50us float64 `json:"p50_us"`
	P99us float64 `json:"p99_us"`
}

// Evaluate runs search on every query and scores the top k. ids maps a
// returned tool name to its catalogue id.
func Evaluate(method string, search func(query string, k int) []string, ids map[string]string, queries []Query, k int) Result {
	var t Tally
	lat := make([]time.Duration, 0, len(queries))
	for _, q := range queries {
		gs := q.Golds()
		if len(gs) == 0 {
			continue
		}
		start := time.Now()
		names := search(q.Query, k)
		lat = append(lat, time.Since(start))
		t.add(Score(names, ids, gs, k))
	}
	res := t.result(method, k)
	slices.Sort(lat)
	if len(lat) > 0 {
		res.P50us = float64(lat[len(lat)/2].Nanoseconds()) / 1e3
		res.P99us = float64(lat[min(len(lat)-1, len(lat)*99/100)].Nanoseconds()) / 1e3
	}
	return res
}

// result is the tally as the scores of method at k.
func (t Tally) result(method string, k int) Result {
	return Result{Method: method, K: k, Queries: t.Queries, RecallAtK: t.Recall(), HitAtK: t.Hit(), MRR: t.MRR()}
}

// Outcome is one query's score at k.
type Outcome struct {
	Golds, Found int     // gold tools, and those in the top k
	RR           float64 // 1/rank of the first gold tool in the top k, 0 for none
}

// Hit reports whether a gold tool is in the top k.
func (o Outcome) Hit() bool { return o.Found > 0 }

// Score scores the result names of a query with the gold tools golds
// (each a list of acceptable ids; ids maps a name to its id), at k.
func Score(names []string, ids map[string]string, golds [][]string, k int) Outcome {
	if len(names) > k {
		names = names[:k]
	}
	rank := make(map[string]int, len(names))
	for i, n := range names {
		if _, ok := rank[ids[n]]; !ok {
			rank[ids[n]] = i + 1
		}
	}
	o := Outcome{Golds: len(golds)}
	first := 0
	for _, g := range golds {
		best := 0
		for _, id := range g {
			if r, ok := rank[id]; ok && (best == 0 || r < best) {
				best = r
			}
		}
		if best > 0 {
			o.Found++
			if first == 0 || best < first {
				first = best
			}
		}
	}
	if first > 0 {
		o.RR = 1 / float64(first)
	}
	return o
}
