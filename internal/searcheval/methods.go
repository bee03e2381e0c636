package searcheval

import (
	"cmp"
	"math"
	"regexp"
	"slices"
	"strings"

	"github.com/tidwall/gjson"

	"github.com/antlerhq/antler/tool"
)

// DeerFlow is a faithful re-implementation of DeerFlow's ranked
// tool_search (the mode used for any query that is neither "select:" nor
// "+kw"): the whole query is compiled as a case-insensitive regular
// expression (a literal when invalid) and matched against
// "name description"; a tool scores 2 when its name matches and 1
// otherwise; a stable sort by score keeps catalogue order among equals.
type DeerFlow struct {
	tools []*tool.Tool
}

// NewDeerFlow returns DeerFlow's search over tools.
func NewDeerFlow(tools []*tool.Tool) *DeerFlow { return &DeerFlow{tools: tools} }

// Search returns at most k tool names.
func (d *DeerFlow) Search(query string, k int) []string {
	q := strings.TrimSpace(query)
	if q == "" {
		return nil
	}
	re, err := regexp.Compile("(?i)" + q)
	if err != nil {
		re = regexp.MustCompile("(?i)" + regexp.QuoteMeta(q))
	}
	type hit struct {
		name  string
		score int
	}
	var hits []hit
	for _, t := range d.tools {
		if re.MatchString(t.Name + " " + t.Description) {
			s := 1
			if re.MatchString(t.Name) {
				s = 2
			}
			hits = append(hits, hit{t.Name, s})
		}
	}
	slices.SortStableFunc(hits, func(a, b hit) int { return cmp.Compare(b.score, a.score) })
	var out []string
	for i := 0; i < len(hits) && i < k; i++ {
		out = append(out, hits[i].name)
	}
	return out
}

// BM25 is the plain baseline: one bag of lowercased words per tool from
// its name, description and parameter names and descriptions, split on
// anything that is not a letter or digit; no stemming, stop words, field
// weights or identifier splitting beyond that. k1 = 1.2, b = 0.75.
type BM25 struct {
	names    []string
	postings map[string][]bm25Posting
	lengths  []float64
	avg      float64
}

type bm25Posting struct {
	doc int
	tf  float64
}

// NewBM25 indexes tools.
func NewBM25(tools []*tool.Tool) *BM25 {
	b := &BM25{postings: make(map[string][]bm25Posting), lengths: make([]float64, len(tools))}
	total := 0.0
	for d, t := range tools {
		b.names = append(b.names, t.Name)
		text := []string{t.Name, t.Description}
		gjson.GetBytes(t.InputSchema, "properties").ForEach(func(k, v gjson.Result) bool {
			text = append(text, k.String(), v.Get("description").String())
			return true
		})
		tf := map[string]float64{}
		words := plainWords(strings.Join(text, " "))
		for _, w := range words {
			tf[w]++
		}
		for w, n := range tf {
			b.postings[w] = append(b.postings[w], bm25Posting{d, n})
		}
		b.lengths[d] = float64(len(words))
		total += float64(len(words))
	}
	b.avg = max(total/float64(max(len(tools), 1)), 1)
	return b
}

func plainWords(s string) []string {
	return strings.FieldsFunc(strings.ToLower(s), func(r rune) bool {
		return !('a' <= r && r <= 'z' || '0' <= r && r <= '9' || r > 127 && !isSpaceOrPunct(r))
	})
}

func isSpaceOrPunct(r rune) bool {
	return strings.ContainsRune(" \t\n\r,.;:!?()[]{}'\"，。；：！？（）、", r)
}

// Search returns at most k tool names by BM25 score.
func (b *BM25) Search(query string, k int) []string {
	n := float64(len(b.names))
	scores := map[int]float64{}
	seen := map[string]bool{}
	for _, w := range plainWords(query) {
		if seen[w] {
			continue
		}
		seen[w] = true
		ps := b.postings[w]
		idf := math.Log(1 + (n-float64(len(ps))+0.5)/(float64(len(ps))+0.5))
		for _, p := range ps {
			norm := 1.2 * (1 - 0.75 + 0.75*b.lengths[p.doc]/b.avg)
			scores[p.doc] += idf * p.tf * 2.2 / (p.tf + norm)
		}
	}
	type ds struct {
		doc   int
		score float64
	}
	var all []ds
	for d, s := range scores {
		all = append(all, ds{d, s})
	}
	slices.SortFunc(all, func(a, b ds) int {
		if c := cmp.Compare(b.score, a.score); c != 0 {
			return c
		}
		return cmp.Compare(a.doc, b.doc)
	})
	var out []string
	for i := 0; i < len(all) && i < k; i++ {
		out = append(out, b.names[all[i].doc])
	}
	return out
}
