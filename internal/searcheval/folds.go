package searcheval

import (
	"cmp"
	"fmt"
	"math/rand/v2"
	"slices"
)

// Split is an assignment of queries to cross-validation folds by server.
type Split struct {
	K int
	// ServerFold is the fold of each server that is some query's home.
	ServerFold map[string]int
	// Home is each query's home server ("" for a query without a gold
	// tool in the catalogue), QueryFold its fold (-1 for none).
	Home      []string
	QueryFold []int
}

// ServerOf returns the server of each catalogue id: the entry's server,
// or, for an entry without one (MetaTool's plugins), the id itself, so
// that each such tool is a server of its own.
func ServerOf(entries []Entry) map[string]string {
	out := make(map[string]string, len(entries))
	for _, e := range entries {
		s := e.Server
		if s == "" {
			s = e.ID
		}
		out[e.ID] = s
	}
	return out
}

// HomeServer returns the server a query belongs to: the server holding
// most of its gold tools, a gold tool counting for the server of its
// first acceptable id that is in the catalogue; ties go to the server
// named first in gold order. "" when no gold tool is in the catalogue.
func HomeServer(q Query, server map[string]string) string {
	count := make(map[string]int)
	var order []string
	for _, g := range q.Golds() {
		for _, id := range g {
			s, ok := server[id]
			if !ok {
				continue
			}
			if count[s] == 0 {
				order = append(order, s)
			}
			count[s]++
			break
		}
	}
	best := ""
	for _, s := range order {
		if best == "" || count[s] > count[best] {
			best = s
		}
	}
	return best
}

// ServerFolds splits queries into k folds by server, so that no server's
// queries are in two folds: each query goes with its home server
// ([HomeServer]); the servers, the busiest first (ties in an order
// shuffled by seed), each join the fold with the fewest queries so far
// (ties: the lowest fold). The same inputs and seed give the same split.
// A query whose gold tools sit on several servers is scored in its home
// server's fold; its other gold tools' servers may belong to other folds.
func ServerFolds(entries []Entry, queries []Query, k int, seed uint64) (Split, error) {
	if k < 2 {
		return Split{}, fmt.Errorf("cross-validation: %d folds, want at least 2", k)
	}
	server := ServerOf(entries)
	sp := Split{K: k, ServerFold: make(map[string]int), Home: make([]string, len(queries)), QueryFold: make([]int, len(queries))}
	load := make(map[string]int)
	for i, q := range queries {
		sp.Home[i] = HomeServer(q, server)
		if sp.Home[i] != "" {
			load[sp.Home[i]]++
		}
	}
	servers := make([]string, 0, len(load))
	for s := range load {
		servers = append(servers, s)
	}
	slices.Sort(servers)
	r := rand.New(rand.NewPCG(seed, uint64(k)))
	r.Shuffle(len(servers), func(i, j int) { servers[i], servers[j] = servers[j], servers[i] })
	slices.SortStableFunc(servers, func(a, b string) int { return cmp.Compare(load[b], load[a]) })
	if len(servers) < k {
		return Split{}, fmt.Errorf("cross-validation: %d folds but only %d servers with queries", k, len(servers))
	}
	size := make([]int, k)
	for _, s := range servers {
		f := 0
		for i := range size {
			if size[i] < size[f] {
				f = i
			}
		}
		sp.ServerFold[s] = f
		size[f] += load[s]
	}
	for i, h := range sp.Home {
		sp.QueryFold[i] = -1
		if h != "" {
			sp.QueryFold[i] = sp.ServerFold[h]
		}
	}
	return sp, nil
}
