package config

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
)

// This file names the known key nearest to a misspelt one, for every
// "unknown key" message of both files (and of tool options, through
// UnknownKeyMsg).

// NearestKey returns the known key closest to key by edit distance
// (optimal string alignment: an insertion, deletion, substitution or swap
// of two neighbours costs 1; letter case is ignored), ties in name order,
// and whether it is close enough to be a likely typo: at most a third of
// key's length, and at least 1. It returns "", false when known is empty.
func NearestKey(key string, known []string) (string, bool) {
	best, bestD := "", -1
	for _, k := range known {
		d := EditDistance(strings.ToLower(key), strings.ToLower(k))
		if bestD < 0 || d < bestD || d == bestD && k < best {
			best, bestD = k, d
		}
	}
	if bestD < 0 {
		return "", false
	}
	return best, bestD <= max(1, (len([]rune(key))+2)/3)
}

// UnknownKeyMsg is the message for key, which is not one of known: the
// nearest known key when it is a likely typo, else the known keys when
// there are at most 16 of them. known need not be sorted.
func UnknownKeyMsg(key string, known []string) string {
	msg := fmt.Sprintf("unknown key %q", key)
	if near, ok := NearestKey(key, known); ok {
		return msg + fmt.Sprintf(" (did you mean %q?)", near)
	}
	if len(known) > 0 && len(known) <= 16 {
		names := slices.Clone(known)
		slices.Sort(names)
		return msg + " (known keys: " + strings.Join(names, ", ") + ")"
	}
	return msg
}

// EditDistance is the optimal string alignment distance between a and b
// (an insertion, deletion, substitution or swap of two neighbours costs 1),
// counted in runes.
func EditDistance(a, b string) int {
	ra, rb := []rune(a), []rune(b)
	// rows i-2, i-1 and i of the distance matrix.
	prev2 := make([]int, len(rb)+1)
	prev := make([]int, len(rb)+1)
	cur := make([]int, len(rb)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(ra); i++ {
		cur[0] = i
		for j := 1; j <= len(rb); j++ {
			cost := 1
			if ra[i-1] == rb[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
			if i > 1 && j > 1 && ra[i-1] == rb[j-2] && ra[i-2] == rb[j-1] {
				cur[j] = min(cur[j], prev2[j-2]+1)
			}
		}
		prev2, prev, cur = prev, cur, prev2
	}
	return prev[len(rb)]
}

// sortedUnique returns the strings of lists, sorted, without repeats.
func sortedUnique(lists ...[]string) []string {
	var out []string
	for _, l := range lists {
		out = append(out, l...)
	}
	slices.SortFunc(out, cmp.Compare[string])
	return slices.Compact(out)
}
