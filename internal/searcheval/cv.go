package searcheval

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/antlerhq/antler/deferred"
	"github.com/antlerhq/antler/tool"
)

// Tally sums query outcomes.
type Tally struct {
	Queries, Golds, Found, Hits int
	RR                          float64
}

func (t *Tally) add(o Outcome) {
	t.Queries++
	t.Golds += o.Golds
	t.Found += o.Found
	t.RR += o.RR
	if o.Hit() {
		t.Hits++
	}
}

// Recall is the share of gold tools found.
func (t Tally) Recall() float64 { return ratio(float64(t.Found), t.Golds) }

// Hit is the share of queries with a gold tool found.
func (t Tally) Hit() float64 { return ratio(float64(t.Hits), t.Queries) }

// MRR is the mean reciprocal rank of the first gold tool.
func (t Tally) MRR() float64 { return ratio(t.RR, t.Queries) }

func ratio(a float64, b int) float64 {
	if b == 0 {
		return 0
	}
	return a / float64(b)
}

// count is the tally's objective as a count: gold tools found ("recall")
// or queries with a hit ("hit").
func (t Tally) count(objective string) int {
	if objective == "hit" {
		return t.Hits
	}
	return t.Found
}

// CV cross-validates the tuned elements of Antler's ranking over folds
// of queries split by server ([ServerFolds]).
type CV struct {
	Tools   []*tool.Tool
	IDs     map[string]string
	Queries []Query // each with at least one gold tool
	Fold    []int   // by query, in [0, Folds)
	Folds   int
	K       int
	// Objective is what selection maximises on the training folds:
	// "recall" (gold tools found in the top K) or "hit" (queries with a
	// gold tool in the top K).
	Objective string
	// Logf reports progress; nil for none.
	Logf func(format string, args ...any)
}

// run evaluates opts on the queries listed in only (all when nil); the
// other entries of the result are zero.
func (c *CV) run(opts deferred.SearchOptions, only []int) ([]Outcome, error) {
	s, err := deferred.NewTunedSearch(c.Tools, opts)
	if err != nil {
		return nil, err
	}
	out := make([]Outcome, len(c.Queries))
	one := func(i int) {
		q := c.Queries[i]
		out[i] = Score(toolNames(s.Search(q.Query, c.K)), c.IDs, q.Golds(), c.K)
	}
	if only == nil {
		for i := range c.Queries {
			one(i)
		}
		return out, nil
	}
	for _, i := range only {
		one(i)
	}
	return out, nil
}

func toolNames(ts []*tool.Tool) []string {
	out := make([]string, len(ts))
	for i, t := range ts {
		out[i] = t.Name
	}
	return out
}

// tally sums outs over the queries for which in is true.
func (c *CV) tally(outs []Outcome, in func(q int) bool) Tally {
	var t Tally
	for i, o := range outs {
		if in(i) {
			t.add(o)
		}
	}
	return t
}

func (c *CV) inFold(f int) func(int) bool    { return func(q int) bool { return c.Fold[q] == f } }
func (c *CV) outOfFold(f int) func(int) bool { return func(q int) bool { return c.Fold[q] != f } }
func all(int) bool                           { return true }

// variant is one setting of one element and its outcomes on every query.
type variant struct {
	element string  // "lexicon N" or a parameter name
	value   float64 // the parameter's value; for a lexicon group 0 (dropped)
	outs    []Outcome
}

// ElementResult is what cross-validation found for one tuned element.
type ElementResult struct {
	Element string // "lexicon N: words" or a parameter name
	Shipped float64
	// Off is the change in the objective's count on the whole set when
	// the element is switched off (a lexicon group dropped, a weight set
	// to 0): negative when the element helps. Zero for parameters
	// without an off value.
	Off int
	// FoldsHelped and FoldsHurt count the folds whose own queries lose
	// or gain when the element is off.
	FoldsHelped, FoldsHurt int
	// InFold is the value selected on the whole set and its gain (count)
	// over the shipped value on the whole set.
	InFold     float64
	InFoldGain int
	// FoldsBetter and FoldsWorse count the folds whose own queries gain
	// or lose with the value selected on the whole set.
	FoldsBetter, FoldsWorse int
	// PerFold is the value selected on each fold's training folds;
	// OutOfFoldGain the gain over the shipped value, summed over the
	// held-out folds.
	PerFold       []float64
	OutOfFoldGain int
}

// Holds reports whether an element that can be switched off generalises
// across servers: switched off, the whole set loses, and so do the
// queries of at least two folds, more folds than gain. An element that
// helps one fold only is selected by the training folds only while that
// fold is among them, so it never helps a held-out fold.
func (e ElementResult) Holds() bool {
	return e.Off < 0 && e.FoldsHelped >= 2 && e.FoldsHelped > e.FoldsHurt
}

// MethodResult is a method's figures in-fold (choices made on the whole
// set) and out of fold (each fold scored with choices made on the
// others).
type MethodResult struct {
	Method            string
	InFold, OutOfFold Tally
	// InFoldOptions are the options chosen on the whole set.
	InFoldOptions deferred.SearchOptions
}

// Report is the outcome of [CV.Run].
type Report struct {
	Objective string
	Folds     int
	FoldSizes []int
	Methods   []MethodResult
	Elements  []ElementResult
}

// Fixed scores a method without tuned choices: its in-fold and
// out-of-fold figures are the same.
func (c *CV) Fixed(method string, search func(string, int) []string) MethodResult {
	var t Tally
	for _, q := range c.Queries {
		t.add(Score(search(q.Query, c.K), c.IDs, q.Golds(), c.K))
	}
	return MethodResult{Method: method, InFold: t, OutOfFold: t}
}

// Run cross-validates the shipped ranker ("antler"), two selections of
// its elements (each parameter set to the best value of a small grid on
// the training folds, and "antler-cv": a lexicon group dropped when
// dropping it gains on them; "antler-cv-strict": a group kept only when
// dropping it loses on them), RM3 feedback ("antler+rm3", its settings chosen on
// the training folds), and the word-vector score against the lexical
// ranker alone (see [CV.vectors]).
func (c *CV) Run() (Report, error) {
	rep := Report{Objective: c.Objective, Folds: c.Folds, FoldSizes: make([]int, c.Folds)}
	for _, f := range c.Fold {
		rep.FoldSizes[f]++
	}
	base, err := c.run(deferred.SearchOptions{}, nil)
	if err != nil {
		return rep, err
	}
	shipped := c.tally(base, all)
	rep.Methods = append(rep.Methods, MethodResult{Method: "antler", InFold: shipped, OutOfFold: shipped})
	lex, err := c.lexiconVariants(base)
	if err != nil {
		return rep, err
	}
	params, err := c.paramVariants()
	if err != nil {
		return rep, err
	}
	strict, _, err := c.selection("antler-cv-strict", true, base, lex, params)
	if err != nil {
		return rep, err
	}
	m, elems, err := c.selection("antler-cv", false, base, lex, params)
	if err != nil {
		return rep, err
	}
	rep.Methods = append(rep.Methods, m, strict)
	rep.Elements = elems
	rm3, err := c.rm3()
	if err != nil {
		return rep, err
	}
	rep.Methods = append(rep.Methods, rm3)
	lexical, vectors, err := c.vectors()
	if err != nil {
		return rep, err
	}
	rep.Methods = append(rep.Methods, lexical, vectors)
	return rep, nil
}

func (c *CV) logf(format string, args ...any) {
	if c.Logf != nil {
		c.Logf(format, args...)
	}
}

// lexiconVariants drops each lexicon group in turn, re-running only the
// queries that hold one of its words.
func (c *CV) lexiconVariants(base []Outcome) ([]variant, error) {
	touch := make(map[int][]int)
	for i, q := range c.Queries {
		for _, g := range deferred.SearchLexiconGroupsOf(q.Query) {
			touch[g] = append(touch[g], i)
		}
	}
	groups := deferred.SearchLexiconGroups()
	out := make([]variant, 0, len(groups))
	for g := 1; g <= len(groups); g++ {
		outs := slices.Clone(base)
		if qs := touch[g]; len(qs) > 0 {
			o, err := c.run(deferred.SearchOptions{DropLexicon: []int{g}}, qs)
			if err != nil {
				return nil, err
			}
			for _, i := range qs {
				outs[i] = o[i]
			}
		}
		out = append(out, variant{element: fmt.Sprintf("lexicon %d", g), outs: outs})
	}
	c.logf("lexicon: %d groups", len(groups))
	return out, nil
}

// paramGrid returns the values tried for a parameter besides its
// shipped value def.
func paramGrid(name string, def float64) []float64 {
	var vs []float64
	switch {
	case name == "regex_first", name == "repeats_last":
		vs = []float64{0}
	case name == "prefix.min_length":
		vs = []float64{3, 5, 6}
	case name == "prefix.max_extension":
		vs = []float64{0, 2, 6}
	case name == "k1":
		vs = []float64{0.6, 2.0}
	case strings.HasPrefix(name, "field."):
		vs = []float64{def / 4, def / 2, def * 2}
	case strings.HasPrefix(name, "b."):
		vs = []float64{0, def / 2, min(1, def*2)}
	default:
		vs = []float64{0, def / 2, def * 2}
	}
	return slices.DeleteFunc(vs, func(v float64) bool { return v == def })
}

// paramVariants runs each parameter's grid.
func (c *CV) paramVariants() ([]variant, error) {
	var out []variant
	for _, name := range deferred.SearchParamNames() {
		def, _ := deferred.DefaultSearchParam(name)
		for _, v := range paramGrid(name, def) {
			outs, err := c.run(deferred.SearchOptions{Params: map[string]float64{name: v}}, nil)
			if err != nil {
				return nil, err
			}
			out = append(out, variant{element: name, value: v, outs: outs})
		}
		c.logf("parameter %s done", name)
	}
	return out, nil
}

// choose selects, on the queries in, each parameter's best value (the
// shipped one on a tie) and the lexicon groups to keep: strict keeps
// only the groups whose removal loses on in, otherwise only those whose
// removal gains on in are dropped.
func (c *CV) choose(strict bool, base []Outcome, lex, params []variant, in func(int) bool) (deferred.SearchOptions, map[string]float64) {
	opts := deferred.SearchOptions{}
	chosen := make(map[string]float64)
	b := c.tally(base, in).count(c.Objective)
	for g, v := range lex {
		if n := c.tally(v.outs, in).count(c.Objective); n > b || strict && n == b {
			opts.DropLexicon = append(opts.DropLexicon, g+1)
			chosen[v.element] = 0
		} else {
			chosen[v.element] = 1
		}
	}
	best := make(map[string]int)
	for _, v := range params {
		if _, ok := chosen[v.element]; !ok {
			chosen[v.element], _ = deferred.DefaultSearchParam(v.element)
			best[v.element] = b
		}
		if n := c.tally(v.outs, in).count(c.Objective); n > best[v.element] {
			best[v.element] = n
			chosen[v.element] = v.value
		}
	}
	for name := range best {
		if def, _ := deferred.DefaultSearchParam(name); chosen[name] != def {
			if opts.Params == nil {
				opts.Params = make(map[string]float64)
			}
			opts.Params[name] = chosen[name]
		}
	}
	return opts, chosen
}

// selection runs choose on the whole set and on each fold's training
// folds, and scores the choices.
func (c *CV) selection(method string, strict bool, base []Outcome, lex, params []variant) (MethodResult, []ElementResult, error) {
	res := MethodResult{Method: method}
	opts, chosenAll := c.choose(strict, base, lex, params, all)
	outs, err := c.run(opts, nil)
	if err != nil {
		return res, nil, err
	}
	res.InFold, res.InFoldOptions = c.tally(outs, all), opts
	perFold := make([]map[string]float64, c.Folds)
	for f := range c.Folds {
		o, chosen := c.choose(strict, base, lex, params, c.outOfFold(f))
		perFold[f] = chosen
		var held []int
		for i := range c.Queries {
			if c.Fold[i] == f {
				held = append(held, i)
			}
		}
		outs, err := c.run(o, held)
		if err != nil {
			return res, nil, err
		}
		t := c.tally(outs, c.inFold(f))
		res.OutOfFold.Queries += t.Queries
		res.OutOfFold.Golds += t.Golds
		res.OutOfFold.Found += t.Found
		res.OutOfFold.Hits += t.Hits
		res.OutOfFold.RR += t.RR
		c.logf("fold %d: %d queries, dropped %d lexicon groups, %d parameters changed", f, t.Queries, len(o.DropLexicon), len(o.Params))
	}
	return res, c.elements(base, lex, params, chosenAll, perFold), nil
}

// elements summarises each element's variants and choices.
func (c *CV) elements(base []Outcome, lex, params []variant, chosenAll map[string]float64, perFold []map[string]float64) []ElementResult {
	groups := deferred.SearchLexiconGroups()
	byElement := make(map[string][]variant)
	var order []string
	for _, v := range slices.Concat(lex, params) {
		if _, ok := byElement[v.element]; !ok {
			order = append(order, v.element)
		}
		byElement[v.element] = append(byElement[v.element], v)
	}
	count := func(outs []Outcome, in func(int) bool) int { return c.tally(outs, in).count(c.Objective) }
	outsOf := func(vs []variant, value, shipped float64) ([]Outcome, bool) {
		for _, v := range vs {
			if v.value == value && value != shipped {
				return v.outs, true
			}
		}
		return base, false
	}
	var out []ElementResult
	for _, name := range order {
		vs := byElement[name]
		e := ElementResult{Element: name, Shipped: 1, InFold: chosenAll[name]}
		if def, ok := deferred.DefaultSearchParam(name); ok {
			e.Shipped = def
		} else {
			var g int
			fmt.Sscanf(name, "lexicon %d", &g)
			e.Element = fmt.Sprintf("lexicon %d: %s", g, groups[g-1])
		}
		if off, ok := outsOf(vs, 0, e.Shipped); ok {
			e.Off = count(off, all) - count(base, all)
			for f := range c.Folds {
				switch d := count(off, c.inFold(f)) - count(base, c.inFold(f)); {
				case d < 0:
					e.FoldsHelped++
				case d > 0:
					e.FoldsHurt++
				}
			}
		}
		chosen, _ := outsOf(vs, e.InFold, e.Shipped)
		e.InFoldGain = count(chosen, all) - count(base, all)
		for f := range c.Folds {
			switch d := count(chosen, c.inFold(f)) - count(base, c.inFold(f)); {
			case d > 0:
				e.FoldsBetter++
			case d < 0:
				e.FoldsWorse++
			}
		}
		for f := range c.Folds {
			v := perFold[f][name]
			e.PerFold = append(e.PerFold, v)
			held, _ := outsOf(vs, v, e.Shipped)
			e.OutOfFoldGain += count(held, c.inFold(f)) - count(base, c.inFold(f))
		}
		out = append(out, e)
	}
	return out
}

// rm3Grid are the RM3 settings tried.
func rm3Grid() []deferred.SearchRM3 {
	var out []deferred.SearchRM3
	for _, d := range []int{3, 5, 10} {
		for _, t := range []int{5, 10, 20} {
			for _, w := range []float64{0.1, 0.2, 0.3, 0.5} {
				out = append(out, deferred.SearchRM3{Docs: d, Terms: t, Weight: w})
			}
		}
	}
	return out
}

// rm3 scores RM3 feedback over the shipped ranker, its setting chosen
// on the whole set (in-fold) and on each fold's training folds.
func (c *CV) rm3() (MethodResult, error) {
	grid := rm3Grid()
	opts := make([]deferred.SearchOptions, len(grid))
	for i, r := range grid {
		opts[i] = deferred.SearchOptions{RM3: r}
	}
	return c.gridMethod("antler+rm3", opts)
}

// denseGrid are the weights of the word-vector score tried, 0 (the
// lexical ranker alone) among them.
var denseGrid = []float64{0, 5, 10, 20, 30, 40}

// vectors scores the shipped ranker with the word-vector score's weight
// chosen on the whole set (in-fold) and on each fold's training folds
// ("antler+vectors"), beside the lexical ranker alone
// ("antler-lexical", weight 0): the vectors are kept only if the first
// beats the second out of fold.
func (c *CV) vectors() (lexical, vectors MethodResult, err error) {
	opts := make([]deferred.SearchOptions, len(denseGrid))
	for i, w := range denseGrid {
		opts[i] = deferred.SearchOptions{Params: map[string]float64{"weight.dense": w}}
	}
	if lexical, err = c.gridMethod("antler-lexical", opts[:1]); err != nil {
		return lexical, vectors, err
	}
	vectors, err = c.gridMethod("antler+vectors", opts)
	return lexical, vectors, err
}

// gridMethod scores the options of grid, the best on the whole set
// in-fold and, for each fold, the best on its training folds out of
// fold (the first of equals).
func (c *CV) gridMethod(method string, grid []deferred.SearchOptions) (MethodResult, error) {
	res := MethodResult{Method: method}
	outs := make([][]Outcome, len(grid))
	for i, o := range grid {
		out, err := c.run(o, nil)
		if err != nil {
			return res, err
		}
		outs[i] = out
	}
	c.logf("%s: %d settings", method, len(grid))
	pick := func(in func(int) bool) int {
		best, n := 0, -1
		for i := range grid {
			if m := c.tally(outs[i], in).count(c.Objective); m > n {
				best, n = i, m
			}
		}
		return best
	}
	b := pick(all)
	res.InFold = c.tally(outs[b], all)
	res.InFoldOptions = grid[b]
	for f := range c.Folds {
		t := c.tally(outs[pick(c.outOfFold(f))], c.inFold(f))
		res.OutOfFold.Queries += t.Queries
		res.OutOfFold.Golds += t.Golds
		res.OutOfFold.Found += t.Found
		res.OutOfFold.Hits += t.Hits
		res.OutOfFold.RR += t.RR
	}
	return res, nil
}

// OptionsString renders options for a report.
func OptionsString(o deferred.SearchOptions) string {
	var parts []string
	if len(o.DropLexicon) > 0 {
		parts = append(parts, fmt.Sprintf("drop lexicon %v", o.DropLexicon))
	}
	for _, k := range slices.Sorted(maps.Keys(o.Params)) {
		parts = append(parts, fmt.Sprintf("%s=%g", k, o.Params[k]))
	}
	if o.RM3 != (deferred.SearchRM3{}) {
		parts = append(parts, fmt.Sprintf("rm3 docs=%d terms=%d weight=%g", o.RM3.Docs, o.RM3.Terms, o.RM3.Weight))
	}
	if len(parts) == 0 {
		return "shipped"
	}
	return strings.Join(parts, ", ")
}
