package search

import (
	"fmt"
	"slices"
	"strings"

	"github.com/antlerhq/antler/tool"
)

// Options switches the ranker's tuned elements, for the offline
// cross-validation of package searcheval; Antler itself builds with the
// zero Options ([Build]), which is the shipped ranker.
type Options struct {
	// Params overrides tuned constants by name (see [ParamNames] for the
	// names and [DefaultParam] for the shipped values). A name absent
	// keeps the shipped value; nil keeps them all. For the weights and
	// boosts 0 switches the element off.
	Params map[string]float64
	// DropLexicon leaves out lexicon groups, by their number: group g is
	// the g-th group line of lexicon.txt, counted from 1 (see
	// [LexiconGroups]). Nil keeps every group.
	DropLexicon []int
	// RM3 is pseudo-relevance feedback; the zero value is off.
	RM3 RM3
}

// RM3 expands a query RM3-style with the terms of its best results: the
// query is ranked, the Docs best documents' terms are weighed by the
// relevance model (each document's share of the top scores times the
// term's share of the document's weight, times the term's IDF), the
// Terms heaviest terms the query lacks are added to it, the heaviest at
// weight Weight and the others in proportion, and the query is ranked
// again. Weight is below 1, the weight of the query's own words. Docs
// ≤ 0 or Terms ≤ 0 or Weight ≤ 0 switches it off.
type RM3 struct {
	Docs, Terms int
	Weight      float64
}

func (r RM3) on() bool { return r.Docs > 0 && r.Terms > 0 && r.Weight > 0 }

// fieldParam is a field's BM25F weight and length normalisation.
type fieldParam struct{ weight, b float64 }

// params are the resolved tuned constants of one index.
type params struct {
	field                                                                 [numFields]fieldParam
	k1, nameCoverage, server, exactName                                   float64
	synonym, derivation, gloss, bigram                                    float64
	pathFile, pathRole, camelPart, repeatsLast, prefix, minPrefix, maxExt float64
	regexFirst                                                            float64
	dense, denseFloor, denseIDF                                           float64
	maxBoost                                                              float64 // the largest factor the boosts multiply by
	rm3                                                                   RM3
	syn                                                                   map[string][]string
	customSyn                                                             bool // syn replaces the shared synonym table
}

var fieldNames = [numFields]string{
	fieldName: "name", fieldServer: "server", fieldDescription: "description",
	fieldParamName: "param_name", fieldParamDescription: "param_description", fieldLead: "lead",
}

// ref returns the field of p named name, or nil.
func (p *params) ref(name string) *float64 {
	for k, f := range fieldNames {
		switch name {
		case "field." + f:
			return &p.field[k].weight
		case "b." + f:
			return &p.field[k].b
		}
	}
	switch name {
	case "k1":
		return &p.k1
	case "boost.name_coverage":
		return &p.nameCoverage
	case "boost.server":
		return &p.server
	case "boost.exact_name":
		return &p.exactName
	case "weight.synonym":
		return &p.synonym
	case "weight.derivation":
		return &p.derivation
	case "weight.gloss":
		return &p.gloss
	case "weight.name_bigram":
		return &p.bigram
	case "weight.path_file":
		return &p.pathFile
	case "weight.path_role":
		return &p.pathRole
	case "weight.camel_part":
		return &p.camelPart
	case "weight.prefix":
		return &p.prefix
	case "prefix.min_length":
		return &p.minPrefix
	case "prefix.max_extension":
		return &p.maxExt
	case "regex_first":
		return &p.regexFirst
	case "repeats_last":
		return &p.repeatsLast
	case "weight.dense":
		return &p.dense
	case "dense.floor":
		return &p.denseFloor
	case "dense.idf":
		return &p.denseIDF
	}
	return nil
}

// ParamNames lists the names [Options.Params] takes: "field.F" and "b.F"
// are the BM25F weight and length normalisation of field F (name,
// server, description, param_name, param_description, lead); "k1" is
// BM25's saturation; "boost.*" the score boosts (name_coverage, server,
// exact_name); "weight.*" the weights of a query word's alternatives
// (synonym, derivation, gloss: a Chinese word's English glosses,
// name_bigram, path_file: "file" for a path and "url" for a web
// address, path_role: "write" or "read" for a path a verb writes or
// reads, camel_part: a part of a camelCase word whose whole is a
// catalogue word, prefix); "prefix.min_length" and
// "prefix.max_extension" bound truncation matches; "regex_first" (1 on,
// 0 off) ranks DeerFlow's regex hits first; "repeats_last" (1 on, 0
// off) lists a second server's tool of an already listed MCP name after
// the others (repeats.go); "weight.dense" (0 off),
// "dense.floor" and "dense.idf" set the word-vector score (see
// denseWeight).
func ParamNames() []string {
	var out []string
	for _, f := range fieldNames {
		out = append(out, "field."+f)
	}
	for _, f := range fieldNames {
		out = append(out, "b."+f)
	}
	return append(out, "k1", "boost.name_coverage", "boost.server", "boost.exact_name",
		"weight.synonym", "weight.derivation", "weight.gloss", "weight.name_bigram",
		"weight.path_file", "weight.path_role", "weight.camel_part", "weight.prefix", "prefix.min_length", "prefix.max_extension", "regex_first", "repeats_last",
		"weight.dense", "dense.floor", "dense.idf")
}

// shippedParams returns the shipped constants.
func shippedParams() params {
	p := params{
		field: fieldParams, k1: bm25K1, nameCoverage: nameCoverageBoost, server: serverBoost,
		exactName: exactNameBoost, synonym: synonymWeight, derivation: derivationWeight, gloss: 1,
		bigram: nameBigramWeight, pathFile: pathFileWeight, pathRole: pathRoleWeight, camelPart: camelPartWeight, prefix: prefixWeight,
		minPrefix: minPrefix, maxExt: maxExtension, regexFirst: 1, repeatsLast: 1,
		dense: denseWeight, denseFloor: denseFloor, denseIDF: denseUnknownIDF,
	}
	p.maxBoost = (1 + p.nameCoverage) * (1 + p.exactName) * (1 + p.server)
	return p
}

// DefaultParam returns the shipped value of the parameter name, and
// false for a name [ParamNames] does not list.
func DefaultParam(name string) (float64, bool) {
	p := shippedParams()
	if r := p.ref(name); r != nil {
		return *r, true
	}
	return 0, false
}

// LexiconGroups returns the group lines of lexicon.txt, group g at index
// g-1.
func LexiconGroups() []string {
	var out []string
	for line := range strings.Lines(lexiconText) {
		line = strings.TrimSpace(line)
		if line != "" && line[0] != '#' {
			out = append(out, line)
		}
	}
	return out
}

// resolve checks o and returns the parameters it selects.
func (o Options) resolve() (params, error) {
	p := shippedParams()
	names := make([]string, 0, len(o.Params))
	for name := range o.Params {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, name := range names {
		v := o.Params[name]
		r := p.ref(name)
		if r == nil {
			return p, fmt.Errorf("search options: unknown parameter %q", name)
		}
		if v < 0 || v != v {
			return p, fmt.Errorf("search options: parameter %q is %v, want ≥ 0", name, v)
		}
		*r = v
	}
	for _, v := range []float64{p.minPrefix, p.maxExt} {
		if v != float64(int(v)) {
			return p, fmt.Errorf("search options: truncation bound %v is not a whole number", v)
		}
	}
	for k, f := range p.field {
		if f.b > 1 || f.weight == 0 {
			return p, fmt.Errorf("search options: field %s has weight %v and b %v, want a positive weight and b at most 1", fieldNames[k], f.weight, f.b)
		}
	}
	p.maxBoost = (1 + p.nameCoverage) * (1 + p.exactName) * (1 + p.server)
	n := len(LexiconGroups())
	for _, g := range o.DropLexicon {
		if g < 1 || g > n {
			return p, fmt.Errorf("search options: lexicon group %d does not exist (1 to %d)", g, n)
		}
	}
	if len(o.DropLexicon) > 0 {
		p.syn = buildSynonymsExcept(&stemmer{cache: make(map[string]string)}, o.DropLexicon)
		p.customSyn = true
	}
	if o.RM3.Docs < 0 || o.RM3.Terms < 0 || o.RM3.Weight < 0 || o.RM3.Weight >= 1 {
		return p, fmt.Errorf("search options: RM3 %+v: want counts ≥ 0 and a weight in [0, 1)", o.RM3)
	}
	p.rm3 = o.RM3
	return p, nil
}

// BuildWith is [Build] with the tuned elements o selects; Build(tools,
// beside) is BuildWith(tools, Options{}, beside). It fails only on
// options that name no parameter or group, or give negative values.
func BuildWith(tools []*tool.Tool, o Options, beside func()) (*Index, error) {
	p, err := o.resolve()
	if err != nil {
		return nil, err
	}
	return buildIndexSplitWith(tools, splitPoint(tools), beside, &p), nil
}

// LexiconGroupsOf returns the numbers (see [Options.DropLexicon]) of the
// lexicon groups holding a word of query, ascending: the groups that
// can change its ranking.
func LexiconGroupsOf(query string) []int {
	st := &stemmer{cache: make(map[string]string)}
	stems := make(map[string]bool)
	splitWords(query, func(w string) {
		if len(w) >= 2 && !stopWord(w) {
			stems[st.stem(w)] = true
		}
	})
	var out []int
	for g, line := range LexiconGroups() {
		for _, w := range strings.Fields(line) {
			if stems[st.stem(w)] {
				out = append(out, g+1)
				break
			}
		}
	}
	return out
}
