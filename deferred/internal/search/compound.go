package search

// splitCompound splits a lowercased word into two or three words that
// the catalogue uses elsewhere (datagov → data, gov; deepwiki → deep,
// wiki) and returns the term ids of those that are not stop words; nil
// when there is no such split. Each part has at least minPart letters (2
// for a stop word); among the splits with the fewest parts, the one whose
// shortest part is longest wins.
func (ix *Index) splitCompound(w string) []int32 {
	const minPart, maxParts = 3, 3
	if len(w) < 2*minPart || !isLetters(w) {
		return nil
	}
	part := func(s string) (int32, bool) {
		id, ok := ix.words[s]
		if !ok || s == w {
			return 0, false
		}
		if id < 0 {
			return -1, len(s) >= 2
		}
		return id, len(s) >= minPart
	}
	var best []int32
	bestParts, bestMin := maxParts+1, 0
	var rec func(rest string, ids []int32, shortest int)
	rec = func(rest string, ids []int32, shortest int) {
		if rest == "" {
			n := len(ids)
			if n >= 2 && (n < bestParts || n == bestParts && shortest > bestMin) {
				best, bestParts, bestMin = append([]int32(nil), ids...), n, shortest
			}
			return
		}
		if len(ids) == maxParts {
			return
		}
		for i := len(rest); i >= 2; i-- {
			if id, ok := part(rest[:i]); ok {
				rec(rest[i:], append(ids, id), min(shortest, i))
			}
		}
	}
	rec(w, nil, len(w))
	var out []int32
	for _, id := range best {
		if id >= 0 {
			out = append(out, id)
		}
	}
	return out
}
